"""Writing a calibration run's frames: CSV with a fixed float format (byte-stable)."""

from __future__ import annotations

import io

import pandas as pd

from evalcal_core.atomic import write_atomic


def csv_text(frame: pd.DataFrame, float_format: str = "%.10g") -> str:
    """``frame`` as CSV text: no index, a fixed float format and ``\\n`` line ends, so the
    same frame always gives the same bytes."""
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, float_format=float_format, lineterminator="\n")
    return buffer.getvalue()


def write_csv(frame: pd.DataFrame, path) -> None:
    """Write ``frame`` as CSV atomically, with a fixed float format (byte-stable)."""
    write_atomic(path, csv_text(frame))
