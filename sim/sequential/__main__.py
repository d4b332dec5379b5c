"""``python -m sim.sequential``: an alias of :mod:`reports.sequential` (the command draws
``sequential.png``, so it lives in the reports layer)."""

from reports.sequential import run

run()
