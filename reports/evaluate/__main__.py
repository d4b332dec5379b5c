"""``python -m reports.evaluate``: see :mod:`reports.evaluate`."""

from reports.evaluate import run

run()
