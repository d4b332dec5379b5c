"""evalcal in Python: the commands as functions that return result objects.

* :func:`compare` — compare the arms of your results or harness logs (``evalcal evaluate``);
* :func:`calibrate` — false-positive rate and power of every protocol by simulation, and the
  seed budget (``evalcal calibrate``, ``python -m sim.calibrate``);
* :func:`plan` — the cheapest seeds x questions x repeats with the power you want
  (``evalcal plan``, ``python -m sim.plan``).

Each takes the command's options as keyword arguments (``--k-max`` is ``k_max``), checks them
as the command does (a bad value is the same one-line ``ValueError``) and runs the same
functions the command runs; each result is frozen and has ``to_frame()`` (a DataFrame),
``to_markdown()``, ``str()`` (what the command prints) and an HTML view for notebooks.
``docs/api.md`` shows a session.

This package is the top layer, beside the ``evalcal`` command (:mod:`evalcal_cli`): it may
import every other package, and none imports it (``tests/test_architecture.py``). Heavy
modules are imported when a function runs, so ``import evalcal`` is quick.
"""

from __future__ import annotations

from ._api import Calibration, StudyPlan, calibrate, compare, plan

__all__ = ["Calibration", "StudyPlan", "calibrate", "compare", "plan"]
