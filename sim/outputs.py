"""Writing a calibration run's frames: CSV with a fixed float format (byte-stable)."""

from __future__ import annotations

import io

import pandas as pd

from evalcal_core.atomic import write_atomic


def write_csv(frame: pd.DataFrame, path) -> None:
    """Write ``frame`` as CSV atomically, with a fixed float format (byte-stable)."""
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, float_format="%.10g", lineterminator="\n")
    write_atomic(path, buffer.getvalue())
