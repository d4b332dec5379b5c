"""Simulation: generators of paired experiments, the calibration grid, searches and tables.

The numbers only: nothing here draws (no matplotlib) or words a report; the commands that
draw live in :mod:`reports` (``sim.calibrate`` and ``sim.sequential.__main__`` forward to
them). Layer: imports :mod:`evalcal_core`, :mod:`protocols` and the torch-free
:mod:`real_runs.store`; never :mod:`reports` (the two command aliases aside).
:mod:`sim.generators` alone does not import :mod:`protocols` (it stays light).
:mod:`sim.grid.cells` is the one place that draws a calibration cell's experiments.
"""
