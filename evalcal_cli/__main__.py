"""``python -m evalcal_cli``: the ``evalcal`` command."""

from evalcal_cli import run

run()
