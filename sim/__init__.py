"""Simulation: generators of paired experiments, the calibration runner and its outputs.

Layer: imports :mod:`evalcal_core`, :mod:`protocols` and the torch-free
:mod:`real_runs.store`; never :mod:`reports`. :mod:`sim.generators` alone does not import
:mod:`protocols` (it stays light).
:mod:`sim.grid.cells` is the one place that draws a calibration cell's experiments.
"""
