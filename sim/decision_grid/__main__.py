"""``python -m sim.decision_grid``: an alias of :mod:`reports.decision_grid` (the command
also runs sampled experiments through the ``evaluate`` command, which lives in the reports
layer; the grid itself is :mod:`sim.decision_grid`)."""

from reports.decision_grid import run

run()
