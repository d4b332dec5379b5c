"""statsmodels' ``multipletests``, the outside reference for Holm, Bonferroni and BH, without
the full garbage collection its Holm branch runs on every call.

statsmodels (0.14, 0.15) calls ``gc.collect()`` inside ``multipletests(method="holm")``. In a
test process holding the suite's objects one collection takes about 0.2 s, so a reference
loop over 50 families spent 8 s collecting. A collection frees memory and changes no value.
"""

import gc

from statsmodels.stats.multitest import multipletests as _multipletests


def multipletests(*args, **kwargs):
    """``statsmodels.stats.multitest.multipletests(*args, **kwargs)`` with ``gc.collect``
    a no-op for the duration of the call (the tests run in one thread)."""
    collect = gc.collect
    gc.collect = lambda *_args, **_kwargs: 0
    try:
        return _multipletests(*args, **kwargs)
    finally:
        gc.collect = collect
