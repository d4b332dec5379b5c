"""``python -m sim.llm_pools``: the ``evalcal pools`` commands."""

import sys

from evalcal_core.cli import run_main
from sim.llm_pools.cli import PROG, main

run_main(main, PROG, sys.argv[1:])
