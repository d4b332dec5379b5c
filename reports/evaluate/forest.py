"""``--forest PATH.png``: every comparison's difference with its adjusted (simultaneous)
interval, the unadjusted interval thinner behind it, zero and the claim's margin drawn."""

from __future__ import annotations

import math
from pathlib import Path


def forest_plot(analysis, units, path) -> str:
    """Write the forest plot to ``path`` (PNG) and return the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    comps = analysis.comparisons
    f = units.factor
    fig, ax = plt.subplots(figsize=(7.5, 1.5 + 0.45 * len(comps)))
    for i, c in enumerate(comps):
        y = len(comps) - 1 - i
        if not math.isnan(c.ci_low):
            ax.plot([f * c.ci_low, f * c.ci_high], [y + 0.18, y + 0.18], color="0.45", lw=1,
                    marker="|", ms=6)
        if not math.isnan(c.sim_low):
            ax.plot([f * c.sim_low, f * c.sim_high], [y, y], color="C0" if c.significant
                    else "0.3", lw=3, solid_capstyle="butt")
        ax.plot([f * c.estimate], [y], "o", color="black", ms=5)
    ax.axvline(0, color="black", lw=0.8)
    if analysis.claim and analysis.margin:
        m = f * analysis.margin
        marks = {"superiority": [m], "non-inferiority": [-m], "equivalence": [-m, m]}
        for x in marks[analysis.claim]:
            ax.axvline(x, color="C3", ls="--", lw=1)
    ax.set_yticks(range(len(comps)))
    ax.set_yticklabels([f"{c.variant} - {c.base}" for c in reversed(comps)])
    ax.set_xlabel(f"difference ({units.name}); thick: {100 * analysis.sim_level:.4g}% "
                  f"interval ({analysis.correction}), thin above: unadjusted")
    margin = (f"\ndashed: {analysis.claim} margin" if analysis.claim and analysis.margin
              else "")
    ax.set_title(f"{analysis.primary}, {analysis.design.describe()}{margin}", fontsize=9)
    ax.set_ylim(-0.6, len(comps) - 0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)
