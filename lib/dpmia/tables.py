"""Small tables for chapters: a list of rows rendered as HTML in Jupyter and as Markdown text."""

from __future__ import annotations

import html
import re

__all__ = ["Table", "nobreak_numbers"]

_EXPONENT = re.compile(r"[-+]?\d[\d.]*e[-+]\d+")


def nobreak_numbers(text: str) -> str:
    """HTML ``text`` with every number in exponent notation (``5.9e-05``) kept on one line, so that a
    table cell never wraps a number in two (the characters stay plain ASCII for copying)."""
    return _EXPONENT.sub(lambda m: f'<span style="white-space:nowrap">{m.group(0)}</span>', text)


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
        out.append("<thead><tr>" + "".join(f"<th>{e(h).replace(chr(10), '<br>')}</th>" for h in self.headers) + "</tr></thead><tbody>")
        for r in self.rows:
            out.append("<tr>" + "".join(f"<td>{nobreak_numbers(e(c)).replace(chr(10), '<br>')}</td>" for c in r)
                       + "</tr>")
        out.append("</tbody></table>")
        return "".join(out)

    def to_markdown(self) -> str:
        lines = ["| " + " | ".join(h.replace("\n", " / ") for h in self.headers) + " |", "|" + "---|" * len(self.headers)]
        lines += ["| " + " | ".join(c.replace("\n", " / ") for c in r) + " |" for r in self.rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_markdown()
