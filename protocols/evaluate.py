"""``python -m protocols.evaluate``: the old name of :mod:`reports.evaluate`, kept for users.

The application itself lives in the top layer (:mod:`reports.evaluate`); this alias is the
one module of :mod:`protocols` allowed to import it (``tests/test_architecture.py``), and
only when run as a command, never on ``import protocols``.
"""

from reports.evaluate import example_path, main, run  # noqa: F401  (the alias's names)

if __name__ == "__main__":
    run()
