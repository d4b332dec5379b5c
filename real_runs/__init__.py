"""Real training runs: paired-seed baseline/variant models with per-example records.

The store (:mod:`real_runs.store`) needs only numpy; training needs the optional
``real`` extra (torch, torchvision). Nothing here imports torch at package import time
so that ``load_pairs`` works in the light install.
"""
