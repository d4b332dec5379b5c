"""Reports for readers: the pitfalls report, the paper table and figures, the index page.

Layer: the top; imports :mod:`evalcal_core`, :mod:`protocols`, :mod:`sim` and
:mod:`real_runs.store`.
Nothing here sets the matplotlib backend at import; the commands do, in ``main``.
"""
