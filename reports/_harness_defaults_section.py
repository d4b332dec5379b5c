"""The front page's part for ``python -m sim.harness_defaults``: which statistics the
evaluation harnesses print can be trusted, by design."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd

from sim.harness_defaults import COLUMNS
from sim.harness_defaults_words import default_names, groups, recommended_of, sentence
from sim.validity import INVALID

from ._report_page import MIN_JUDGED_SIMS, CsvCite, to_html

#: columns of harness_defaults.csv read as text (an empty ``reproduces`` is the
#: recommended protocol, not a missing value)
_TEXT = ("group", "kind", "protocol", "reproduces", "generator", "generator_params", "state")


def read_table(folder: Path) -> pd.DataFrame:
    """``harness_defaults.csv`` as written (names as text, empty numbers as NaN)."""
    numbers = [c for c in COLUMNS if c not in _TEXT and c != "recommended"]
    frame = pd.read_csv(folder / "harness_defaults.csv", keep_default_na=False,
                        na_values={c: ["", "nan", "NaN"] for c in numbers},
                        dtype={c: str for c in _TEXT})
    return frame.assign(recommended=frame["recommended"].astype(str) == "True")


def _entry(cite: CsvCite, part: pd.DataFrame, judged: bool) -> tuple[list, str]:
    """The worst cell's rate (cited) and its upper bound, how many cells are over."""
    i = int(part["rate"].idxmax())
    over = int((part["state"] == INVALID).sum())
    text = [cite.pct(i), "% (≤ ", cite.pct(i, "fpr_upper"), "%)"]
    if over:
        text.append(f"; {over} of {len(part)} over")
    return text, ("high" if over and judged else "")


def _code(text: str) -> str:
    """Escaped text with its ``name`` spans as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def harness_defaults_html(folder: Path, csv_prefix: str, config_words: str = "") -> str:
    """The worst false-positive rate of each default by design, evalcal's protocol first,
    and one sentence per default (:func:`sim.harness_defaults_words.sentence`)."""
    frame = read_table(folder)
    cite = CsvCite(f"{csv_prefix}harness_defaults.csv", frame)
    judged = int(frame["sims"].min()) >= MIN_JUDGED_SIMS
    cols = groups(frame)
    rec = recommended_of(frame)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ["protocol", *cols])
    body = []
    for name in [None, *default_names(frame)]:
        cells = []
        for g in cols:
            protocol = rec.get(g) if name is None else name
            part = frame[(frame["group"] == g) & (frame["protocol"] == protocol)]
            if part.empty:
                cells.append("<td>—</td>")
                continue
            text, cls = _entry(cite, part, judged)
            label = [f"{protocol}: "] if name is None else []
            cells.append(f'<td class="{cls}">' + to_html(label + text) + "</td>")
        label = "evalcal's protocol for the design" if name is None else name
        row_class = ' class="recommended"' if name is None and judged else ""
        body.append(f"<tr{row_class}><td>{html.escape(label)}</td>{''.join(cells)}</tr>")
    effect = float(frame["effect_pp"].dropna().iloc[0]) if frame["effect_pp"].notna().any() \
        else float("nan")
    items = "".join(f"<li>{_code(sentence(n, frame, effect))}</li>"
                    for n in default_names(frame))
    sims = int(frame["sims"].min())
    note = ("" if judged else
            f" With {sims:,} simulations per cell nothing is shaded or bolded (fewer than "
            f"{MIN_JUDGED_SIMS:,}); the verdicts below still follow the rule, which leaves "
            "more cells undecided at small sizes.")
    return (f"<p>The false-positive rate of each harness's printed default (the decision a "
            f"user makes from it) at α = {float(frame['alpha'].iloc[0]):g}, worst cell of each "
            f"design, its one-sided 95% Clopper-Pearson upper bound, and the cells shown above "
            f"the level (exact binomial test, Holm over the table at 0.001): "
            f"{sims:,} experiments per null cell{config_words}.{html.escape(note)}</p>"
            f'<div class="scroll"><table id="harness-defaults"><tr>{head}</tr>'
            + "".join(body) + "</table></div>"
            + f"<h3>When to trust each default</h3><ul>{items}</ul>")
