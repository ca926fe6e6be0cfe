"""Small tables for chapters: a list of rows rendered as HTML in Jupyter and as Markdown text."""

from __future__ import annotations

import html
import math
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

import numpy as np

from . import _checks

__all__ = ["Table", "markdown_table", "nobreak_numbers", "fmt", "fmt_upper", "fmt_lower", "fmt_bracket"]

_ROUNDING = {"nearest": ROUND_HALF_EVEN, "up": ROUND_CEILING, "down": ROUND_FLOOR}

_EXPONENT = re.compile(r"[-+]?\d[\d.]*e[-+]\d+")


def nobreak_numbers(text: str) -> str:
    """HTML ``text`` with every number in exponent notation (``5.9e-05``) kept on one line, so that a
    table cell never wraps a number in two (the characters stay plain ASCII for copying)."""
    return _EXPONENT.sub(lambda m: f'<span style="white-space:nowrap">{m.group(0)}</span>', text)


def fmt(x, digits=6, rounding="nearest") -> str:
    """``x`` with ``digits`` significant digits, rounded ``"nearest"``, ``"up"`` or ``"down"`` (exactly,
    from the float's binary value). Plain notation for 1e-4 <= ``abs(x)`` < 1e6, exponent notation otherwise;
    ``inf`` and ``0`` as such. An upper bound printed with ``"up"`` is still an upper bound."""
    if rounding not in _ROUNDING:
        raise ValueError(f"rounding must be 'nearest', 'up' or 'down', got {rounding!r}")
    digits = _checks.integer("digits", digits, lo=1, hi=17)
    exact = x if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) else None
    x = _checks.real("x", x, allow_inf=True)
    if np.ndim(x) != 0:
        raise TypeError("x must be a scalar")
    x = float(x)
    if math.isinf(x) or x == 0:
        return "inf" if x > 0 else ("-inf" if x < 0 else "0")
    dx = Decimal(int(exact)) if exact is not None else Decimal(x)      # an integer exactly, not its float
    exp = dx.adjusted()
    d = dx.quantize(Decimal(1).scaleb(exp - digits + 1), rounding=_ROUNDING[rounding])
    if abs(d) >= Decimal(10) ** (exp + 1):          # rounding carried into the next decade (9.99 -> 10.0)
        exp += 1
        d = d.quantize(Decimal(1).scaleb(exp - digits + 1), rounding=_ROUNDING[rounding])
    if -4 <= exp < 6:
        return f"{d:f}"
    return f"{d:.{digits - 1}e}"


def fmt_upper(x, digits=4) -> str:
    """An upper bound to ``digits`` significant digits, rounded up (the printed number is still a bound)."""
    return fmt(x, digits, "up")


def fmt_lower(x, digits=4) -> str:
    """A lower bound to ``digits`` significant digits, rounded down."""
    return fmt(x, digits, "down")


def fmt_bracket(lo, hi, digits=4) -> str:
    """A certified bracket ``[lo, hi]`` rounded outwards, so the printed interval still holds the value."""
    a = _checks.real("lo", lo, allow_inf=True)
    b = _checks.real("hi", hi, allow_inf=True)
    if np.ndim(a) or np.ndim(b):
        raise TypeError("lo and hi must be scalars")
    if not a <= b:
        raise ValueError(f"lo must not exceed hi, got lo = {a!r} > hi = {b!r}")
    return f"[{fmt_lower(lo, digits)}, {fmt_upper(hi, digits)}]"


class Table:
    """A table of already-formatted cells.

    ``Table(headers, rows, caption=None)``; cells are converted with ``str``; a newline in a cell
    starts a second line in it (so a wide table can stack related numbers and stay narrow). Displays
    as HTML in a notebook (and so in the built book) and prints as Markdown.
    """

    def __init__(self, headers, rows, caption=None):
        self.headers = [str(h) for h in headers]
        self.rows = [[str(c) for c in r] for r in rows]
        for r in self.rows:
            if len(r) != len(self.headers):
                raise ValueError(f"rows must have {len(self.headers)} cells, got {len(r)}: {r}")
        self.caption = caption

    def _repr_html_(self) -> str:
        e = html.escape
        out = ['<table class="dpmia-scorecard">']
        if self.caption:
            out.append(f"<caption>{e(self.caption)}</caption>")
        out.append("<thead><tr>" + "".join(f"<th>{e(h).replace(chr(10), '<br>')}</th>" for h in self.headers)
                   + "</tr></thead><tbody>")
        for r in self.rows:
            out.append("<tr>" + "".join(f"<td>{nobreak_numbers(e(c)).replace(chr(10), '<br>')}</td>" for c in r)
                       + "</tr>")
        out.append("</tbody></table>")
        return "".join(out)

    def to_markdown(self) -> str:
        lines = ["| " + " | ".join(h.replace("\n", " / ") for h in self.headers) + " |",
                 "|" + "---|" * len(self.headers)]
        lines += ["| " + " | ".join(c.replace("\n", " / ") for c in r) + " |" for r in self.rows]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        """The table for outputs that cannot show HTML (the PDF): the caption, then a pipe table (MyST typesets it
        as a real table, its long cells wrapped)."""
        return markdown_table(self.headers, self.rows, self.caption)

    def __repr__(self) -> str:
        return self.to_markdown()


def _md_cell(text: str) -> str:
    """A table cell as MyST inline text: one line, the characters Markdown would read as markup escaped, and a
    leading character that would start a list, heading or quote escaped too."""
    t = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()
    for ch in "*_`[]<>$":
        t = t.replace(ch, "\\" + ch)
    if t[:1] in ("-", "+", "#", ">") or re.match(r"\d+[.)](\s|$)", t):
        t = "\\" + t if not t[:1].isdigit() else re.sub(r"^(\d+)([.)])", r"\1\\\2", t)
    return t


def _column_widths(headers, rows, line=90):
    """Relative column widths for print, in characters of a ``line``-character text width: every column gets
    its longest word (so that no word is split), the rest of the line goes to the columns in proportion to how
    much longer their longest cell is."""
    natural, least = [], []
    for j, h in enumerate(headers):
        cells = [str(h)] + [str(r[j]) for r in rows]
        least.append(max(max((len(w) for c in cells for w in c.split()), default=1), 4) + 1)
        natural.append(max(max(len(c) for c in cells) + 1, least[-1]))
    spare = line - sum(least)
    want = [n - m for n, m in zip(natural, least)]
    if spare <= 0 or sum(want) == 0:
        return least
    return [m + min(w, round(spare * w / sum(want))) for m, w in zip(least, want)]


def markdown_table(headers, rows, caption=None) -> str:
    """The table as MyST Markdown for outputs that cannot show HTML (the PDF's LaTeX builder).

    A ``list-table`` directive with relative column widths from the cells' lengths, so that LaTeX wraps long
    cells inside their column; ``:class: longtable`` lets a long table continue on the next page. The
    ``caption`` comes first, in italics.

    Examples
    --------
    >>> print(markdown_table(["a", "b"], [["1", "x|y"]]))
    ```{list-table}
    :header-rows: 1
    :widths: 5 5
    :class: longtable
    <BLANKLINE>
    * - a
      - b
    * - 1
      - x\\|y
    ```
    """
    headers, rows = list(headers), [list(r) for r in rows]
    if any(len(r) != len(headers) for r in rows):
        raise ValueError("rows: every row must have one cell per header")
    lines = [f"*{_md_cell(caption)}*", ""] if caption else []
    lines += ["```{list-table}", ":header-rows: 1",
              ":widths: " + " ".join(str(w) for w in _column_widths(headers, rows)), ":class: longtable", ""]
    for r in [headers] + rows:
        cells = [_md_cell(c) for c in r]
        lines.append(f"* - {cells[0]}".rstrip())
        lines += [f"  - {c}".rstrip() for c in cells[1:]]
    lines.append("```")
    return "\n".join(lines)
