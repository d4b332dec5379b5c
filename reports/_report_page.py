"""Text with numbers traceable to CSV cells, and the report page in HTML and Markdown.

Every measured number in the report is a :class:`Num`: a cell of a CSV written beside the
report (read back from disk, so the text shows exactly what the file holds), a format and a
scale. In HTML it is ``<span class="num" data-src="section5.csv:3:rate" data-fmt=".1f"
data-scale="100">4.6</span>``, so a test can re-format the CSV cell and compare.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evalcal_core.atomic import write_atomic
from evalcal_core.validate import InvalidParameterError


@dataclass(frozen=True)
class Num:
    """One number of the text, taken from row ``row`` (0-based data row) of ``csv``."""

    csv: str
    row: int
    col: str
    value: float
    fmt: str
    scale: float = 1.0

    @property
    def text(self) -> str:
        """The number as shown: ``format(value * scale, fmt)`` (integers for ``d``)."""
        return format_value(self.value, self.fmt, self.scale)


def format_value(value, fmt: str, scale: float = 1.0) -> str:
    """``format(value * scale, fmt)``; an integer format rounds first."""
    x = float(value) * scale
    return format(int(round(x)), fmt) if fmt.endswith("d") else format(x, fmt)


class CsvCite:
    """Cites cells of one CSV written beside the report.

    Parameters
    ----------
    name : str
        File name (``section5.csv``).
    frame : pandas.DataFrame
        The file as read back from disk.
    """

    def __init__(self, name: str, frame: pd.DataFrame):
        self.name = name
        self.frame = frame.reset_index(drop=True)

    def row(self, **where) -> int:
        """Index of the one row whose columns equal ``where`` (``ValueError`` otherwise)."""
        mask = pd.Series(True, index=self.frame.index)
        for col, value in where.items():
            column = self.frame[col]
            if isinstance(value, float):
                mask &= (column - value).abs() < 1e-9
            else:
                mask &= column.astype(str) == str(value)
        hits = list(self.frame.index[mask])
        if len(hits) != 1:
            raise InvalidParameterError(f"{self.name}: {len(hits)} rows match {where}")
        return int(hits[0])

    def num(self, row: int, col: str, fmt: str = ".1f", scale: float = 1.0) -> Num:
        """Cell (``row``, ``col``) as a :class:`Num`."""
        return Num(self.name, row, col, float(self.frame.at[row, col]), fmt, scale)

    def pct(self, row: int, col: str = "rate", digits: int = 1) -> Num:
        """A rate (fraction in the CSV) shown in percent."""
        return self.num(row, col, f".{digits}f", 100.0)

    def rate_ci(self, row: int, digits: int = 1) -> list:
        """``r% [low, high]``: a rate with its 95% Wilson interval, in percent."""
        return [self.pct(row, "rate", digits), "% [", self.pct(row, "rate_low", digits), ", ",
                self.pct(row, "rate_high", digits), "]"]

    def value(self, row: int, col: str):
        """The raw cell (for decisions in the text, not for display)."""
        return self.frame.at[row, col]


#: fewest simulated experiments per cell from which a page colours, bolds, recommends or
#: draws a reference line: at 1,000 the 95% Wilson interval of a 5% rate is 3.8 to 6.6%
#: (+-1.4 pp); at the quick build's 200 it is 2.8 to 9.0%, too wide to call a cell off alpha
MIN_JUDGED_SIMS = 1000


def quick_banner(sims_words: str) -> str:
    """The line every quick page opens with (``sims_words``: ``"200"``, ``"40 to 2,000"``)."""
    return (f"quick run: {sims_words} simulations per cell — too few to judge; colours and "
            f"recommendations are off (this page colours, bolds or recommends nothing from "
            f"fewer than {MIN_JUDGED_SIMS:,} simulations per cell)")


def banner_html(text: str) -> str:
    """``text`` as a banner that cannot be missed (top of the page, framed)."""
    return f'<p class="banner" role="alert"><strong>{html.escape(text)}</strong></p>'


#: the banner's style, shared by every page that shows one
BANNER_CSS = (".banner { border: 3px solid #a05a00; background: #fff3d6; padding: 0.6em "
              "0.8em; font-size: 1.05em; }\n")


class Raw(str):
    """HTML markup that :func:`to_html` passes through unescaped (``<span class="ci">``)."""


def flatten(parts) -> list:
    """Nested lists of strings and :class:`Num` as one flat list."""
    out = []
    for part in parts:
        if isinstance(part, (list, tuple)):
            out.extend(flatten(part))
        else:
            out.append(part)
    return out


def to_html(parts) -> str:
    """Parts as HTML; numbers become ``span.num`` elements naming their CSV cell."""
    out = []
    for part in flatten(parts):
        if isinstance(part, Num):
            out.append(f'<span class="num" data-src="{html.escape(part.csv)}:{part.row}:'
                       f'{html.escape(part.col)}" data-fmt="{html.escape(part.fmt)}" '
                       f'data-scale="{part.scale:g}">{html.escape(part.text)}</span>')
        elif isinstance(part, Raw):
            out.append(str(part))
        else:
            out.append(html.escape(part))
    return "".join(out)


def to_markdown(parts) -> str:
    """Parts as plain Markdown text."""
    return "".join(p.text if isinstance(p, Num) else "" if isinstance(p, Raw) else p
                   for p in flatten(parts))


@dataclass
class Section:
    """One pitfall of the report.

    Attributes
    ----------
    number : int
    title : str
    figure : bytes or None
        PNG; ``None`` only if the section was skipped.
    measured : list
        Bullet items (lists of parts): the numbers with their Monte Carlo intervals.
    explanation : list
        Three sentences (parts).
    commands : list of str
        Shell commands that reproduce the numbers.
    table : tuple or None
        ``(header, rows)``, each row a list of cells (parts).
    notes : list of str
        Lines about skipped parts (e.g. no real-run pool).
    csvs : list of str
        CSV files of the section.
    """

    number: int
    title: str
    figure: bytes | None = None
    measured: list = field(default_factory=list)
    explanation: list = field(default_factory=list)
    commands: list = field(default_factory=list)
    table: tuple | None = None
    notes: list = field(default_factory=list)
    csvs: list = field(default_factory=list)

    @property
    def png_name(self) -> str:
        return f"section{self.number}.png"


#: resolution of the figures of a report page (:func:`reports._save.png_bytes`), dots per inch
PAGE_DPI = 100


_CSS = """
body { font-family: sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em;
       color: #111; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2.2em;
       border-bottom: 1px solid #bbb; }
img { max-width: 100%; border: 1px solid #ddd; }
pre { background: #f3f3f3; padding: 0.6em; white-space: pre-wrap; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
td { white-space: nowrap; } .scroll { overflow-x: auto; }
th:first-child, td:first-child { text-align: left; }
.note { color: #7a4a00; } .num { font-variant-numeric: tabular-nums; }
""" + BANNER_CSS


def _table_html(table) -> str:
    header, rows = table
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{to_html(c if isinstance(c, list) else [c])}</td>"
                                    for c in row) + "</tr>" for row in rows)
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            "</table></div>")


def section_html(s: Section) -> str:
    """One section as HTML (figure embedded as base64 PNG)."""
    out = [f'<section id="section{s.number}"><h2>{s.number}. {html.escape(s.title)}</h2>']
    for note in s.notes:
        out.append(f'<p class="note">{html.escape(note)}</p>')
    if s.figure is not None:
        data = base64.b64encode(s.figure).decode("ascii")
        out.append(f'<img alt="figure of section {s.number}: {html.escape(s.title)}" '
                   f'src="data:image/png;base64,{data}">')
    if s.measured:
        out.append("<h3>Measured</h3><ul>" + "".join(f"<li>{to_html(m)}</li>"
                                                    for m in s.measured) + "</ul>")
    if s.table is not None:
        out.append(_table_html(s.table))
    if s.explanation:
        out.append(f"<h3>Why</h3><p>{to_html(s.explanation)}</p>")
    if s.commands:
        out.append("<h3>Reproduce</h3><pre><code>" + html.escape("\n".join(s.commands))
                   + "</code></pre>")
    if s.csvs:
        out.append(f"<p>Data: {html.escape(', '.join(s.csvs))}</p>")
    out.append("</section>")
    return "\n".join(out)


def page_html(title: str, intro: list, sections: list[Section], banner: str = "") -> str:
    """The whole self-contained page (no external resources); ``banner``, when given, is
    shown above everything (:func:`quick_banner`)."""
    body = "\n".join(section_html(s) for s in sections)
    top = banner_html(banner) if banner else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>{top}"
            f"<h1>{html.escape(title)}</h1><p>{to_html(intro)}</p>\n{body}\n</body></html>\n")


def _table_markdown(table) -> list[str]:
    header, rows = table
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(to_markdown(c if isinstance(c, list) else [c])
                                       for c in row) + " |")
    return lines


def section_markdown(s: Section) -> str:
    """One section as Markdown (the figure is the PNG file beside the README)."""
    lines = [f"## {s.number}. {s.title}", ""]
    lines += [f"*{note}*\n" for note in s.notes]
    if s.figure is not None:
        lines += [f"![section {s.number}]({s.png_name})", ""]
    lines += [f"* {to_markdown(m)}" for m in s.measured]
    if s.table is not None:
        lines += [""] + _table_markdown(s.table)
    if s.explanation:
        lines += ["", to_markdown(s.explanation)]
    if s.commands:
        lines += ["", "```bash", *s.commands, "```"]
    if s.csvs:
        lines += ["", f"Data: {', '.join(f'`{c}`' for c in s.csvs)}"]
    return "\n".join(lines) + "\n"


def page_markdown(title: str, intro: list, sections: list[Section], banner: str = "") -> str:
    """The report as Markdown (``banner`` in bold above the title's text)."""
    top = f"**{banner}**\n\n" if banner else ""
    return (f"# {title}\n\n{top}{to_markdown(intro)}\n\n"
            + "\n".join(section_markdown(s) for s in sections))


def write_pngs(out: Path, sections: list[Section]) -> None:
    """Each section's figure as ``sectionN.png`` beside the README."""
    for s in sections:
        if s.figure is not None:
            write_atomic(out / s.png_name, s.figure)
