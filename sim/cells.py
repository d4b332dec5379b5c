from sim.grid.cells import draw_cell  # noqa: F401  (old path, kept for tests/protocols)
