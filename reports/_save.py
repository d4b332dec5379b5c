"""Saving a drawn figure: the one place a figure becomes PNG bytes or a PNG file.

Plot functions draw on an ``ax`` and return it; the caller saves the figure with
:func:`save_png` (atomically: a reader never sees half a PNG) or embeds :func:`png_bytes` in a
page.
"""

from __future__ import annotations

import io
from pathlib import Path

from evalcal_core.atomic import write_atomic

#: resolution of the figures written as files, dots per inch
DPI = 110


def png_bytes(fig, *, dpi: int = DPI) -> bytes:
    """``fig`` as PNG bytes at ``dpi`` dots per inch; the figure is closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


def save_png(fig, path, *, dpi: int = DPI) -> Path:
    """Write ``fig`` to ``path`` as a PNG, atomically, and close it; returns the path."""
    return write_atomic(Path(path), png_bytes(fig, dpi=dpi))
