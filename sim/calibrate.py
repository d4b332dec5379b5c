"""``python -m sim.calibrate``: an alias of :mod:`reports.calibrate` (the command draws
and prints words, so it lives in the reports layer; the numbers are :mod:`sim.calibration`)."""

from reports.calibrate import main, run  # noqa: F401

if __name__ == "__main__":
    run()
