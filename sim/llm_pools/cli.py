"""``evalcal pools SUBCOMMAND`` (also ``python -m sim.llm_pools``): item pools' commands.

``describe PATH`` says what a pool holds; ``from-logs --arm NAME=LOG ... --out POOL`` writes
a user's multi-epoch harness logs as a pool; ``build SOURCE --input PATH... --out POOL``
builds a shared pool from its public source file(s). Each subcommand's module defines
``main(argv)``; it is imported only when it runs.
"""

from __future__ import annotations

import importlib

from evalcal_core.cli import call_main, invoked_as, run_main
from evalcal_core.validate import InvalidParameterError

PROG = "evalcal pools"

#: subcommand -> (module, one line of help)
SUBCOMMANDS = {
    "describe": ("sim.llm_pools.describe", "what a pool holds: models, items, attempts, "
                 "clusters, accuracy, mixed outcomes"),
    "from-logs": ("sim.llm_pools.from_logs", "write harness logs with several epochs or runs "
                  "as a pool, one model per --arm"),
    "build": ("sim.llm_pools.build", "build a shared pool from its public source file(s) "
              "(SOURCE --input PATH... --out POOL)"),
}


def _help() -> str:
    width = max(map(len, SUBCOMMANDS))
    lines = [f"usage: {PROG} SUBCOMMAND [OPTIONS]   ({PROG} SUBCOMMAND --help)", ""]
    lines += [f"  {name:<{width}}  {words}" for name, (_, words) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run ``evalcal pools SUBCOMMAND OPTIONS``: the subcommand's exit status."""
    argv = list(argv or [])
    if not argv or argv[0] in ("-h", "--help"):
        print(_help())
        # as argparse's --help does: the front door's checks expect the same exit
        raise SystemExit(0)
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        raise InvalidParameterError(f"{name!r} is not a subcommand of {PROG}; the subcommands "
                                    f"are {', '.join(SUBCOMMANDS)}")
    module = importlib.import_module(SUBCOMMANDS[name][0])
    with invoked_as(f"{PROG} {name}"):
        return call_main(module.main, f"{PROG} {name}", rest)


if __name__ == "__main__":
    run_main(main, PROG)
