"""Old path of :mod:`sim.grid.parallel` (the same module object, so patching it works)."""
import sys

from sim.grid import parallel

sys.modules[__name__] = parallel
