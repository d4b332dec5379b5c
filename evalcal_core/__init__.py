"""The foundation every evalcal package may import; it imports none of them.

Layers, bottom up (enforced by ``tests/test_architecture.py``):

* ``evalcal_core`` — this package: the name registry, argument validators with one message template,
  the atomic writer, the command-line runner, the typed parameter codec, the results-file
  reader and the scenario/dataset registry. numpy, pandas (lazily) and the standard library
  only.
* ``protocols`` — the evaluation protocols (imports ``evalcal_core`` only).
* ``real_runs`` — training (torch, lazily) and the run store (numpy only); imports ``evalcal_core``.
* ``sim`` — generators, the calibration runner and its outputs; imports ``evalcal_core``,
  ``protocols`` and the torch-free ``real_runs.store``. Generators do not import protocols.
* ``reports`` — the reports, on top of everything.
"""
