"""A chapter's reproduction record.

Each row is one claim: what the paper states (``paper``), the value the book checks against
(``reference``: the paper's number, a closed form, or an independent computation), the book's own
computed value (``ours``), a tolerance, and what happened to the claim: reproduced, not reproduced,
erratum confirmed, or our own check (a value the paper does not state). :meth:`Scorecard.check` raises
``AssertionError`` at once when ``ours`` leaves the tolerance around ``reference`` (a regression), and also when the
paper comparison disagrees with what the chapter declares (``paper_agrees``), so a stale erratum
cannot survive either. :meth:`Scorecard.table` renders the record as HTML in a notebook.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np

from .tables import nobreak_numbers

__all__ = ["Scorecard", "Row", "STATUSES"]

#: What happened to a claim, with the symbol shown in the table.
STATUSES = {"reproduced": "✔ reproduced", "not reproduced": "✘ not reproduced",
            "erratum confirmed": "✎ erratum confirmed", "own check": "● own check"}


def _default_status(paper, agrees: bool) -> str:
    """A claim compared with the paper is reproduced or not; a check without a paper value is our own."""
    if paper is None:
        return STATUSES["own check"]
    return STATUSES["reproduced" if agrees else "not reproduced"]


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    return abs(a - b) <= atol + rtol * abs(b)


def _fmt(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return str(x)
    x = float(x)
    if x == 0 or 1e-4 <= abs(x) < 1e6:
        return f"{x:.6g}"
    return f"{x:.4e}"


@dataclass
class Row:
    id: str
    claim: str
    ours: float
    reference: float | None
    paper: float | str | None
    rtol: float
    atol: float
    status: str
    source: str = ""
    note: str = ""


@dataclass
class Scorecard:
    """Collects the checks of one chapter; see the module docstring."""

    chapter: str
    rows: list[Row] = field(default_factory=list)

    def check(self, id: str, claim: str, ours, reference=None, *, paper=None, rtol=0.0, atol=0.0,
              paper_rtol=None, paper_atol=None, paper_agrees=True, source="", note="", status=None) -> None:
        """Record one claim and assert it (returns nothing, so a notebook cell ending in a check prints nothing).

        * ``ours`` must lie within ``atol + rtol*|reference|`` of ``reference`` (if given);
        * if ``paper`` is a number, ``ours`` is compared with it at ``paper_rtol``/``paper_atol``
          (default: the reference tolerances). The outcome must equal ``paper_agrees``: a claim
          declared reproduced that does not reproduce, or an erratum that has silently become
          reproducible, both raise.
        * ``ours`` may be a bool for qualitative claims (an inequality or a monotonicity); it must
          then be True.
        * ``status`` (one of :data:`STATUSES`) says what happened to the claim: "reproduced", "not
          reproduced" (the paper's value differs from ours), "erratum confirmed" (the check establishes
          that the paper is wrong) or "own check" (a value the paper does not state). A numeric paper
          value must then agree with it: "reproduced" needs agreement, "not reproduced" disagreement.
        """
        if status is not None:
            if status not in STATUSES:
                raise ValueError(f"status must be one of {sorted(STATUSES)}, got {status!r}")
            if isinstance(paper, (int, float)) and not isinstance(paper, bool):
                paper_agrees = status == "reproduced"
            self.check(id, claim, ours, reference, paper=paper, rtol=rtol, atol=atol, paper_rtol=paper_rtol,
                       paper_atol=paper_atol, paper_agrees=paper_agrees, source=source, note=note)
            self.rows[-1].status = STATUSES[status]
            return
        if isinstance(ours, np.bool_):
            ours = bool(ours)
        if isinstance(ours, bool):
            if not ours:
                raise AssertionError(f"[{self.chapter} {id}] qualitative claim failed: {claim}")
            status = _default_status(paper, paper_agrees)
            self.rows.append(Row(id, claim, ours, None, paper, 0.0, 0.0, status, source, note))
            return
        ours_f = float(ours)
        if not math.isfinite(ours_f):
            raise AssertionError(f"[{self.chapter} {id}] non-finite value {ours!r} for: {claim}")
        if reference is not None and not _close(ours_f, float(reference), rtol, atol):
            raise AssertionError(
                f"[{self.chapter} {id}] {claim}: ours = {ours_f!r}, reference = {reference!r}, "
                f"|diff| = {abs(ours_f - float(reference)):.3g} > tol (rtol={rtol}, atol={atol})")
        if isinstance(paper, (int, float)) and not isinstance(paper, bool):
            prt = rtol if paper_rtol is None else paper_rtol
            pat = atol if paper_atol is None else paper_atol
            agrees = _close(ours_f, float(paper), prt, pat)
            if agrees != paper_agrees:
                word = "does not match" if paper_agrees else "now matches"
                raise AssertionError(
                    f"[{self.chapter} {id}] {claim}: ours = {ours_f!r} {word} the paper's {paper!r} "
                    f"(rtol={prt}, atol={pat}); update the chapter's errata")
            status = _default_status(paper, agrees)
        else:
            status = _default_status(paper, paper_agrees)
        self.rows.append(Row(id, claim, ours_f, None if reference is None else float(reference), paper,
                             rtol, atol, status, source, note))

    # ------------------------------------------------------------------ summaries
    @property
    def n_reproduced(self) -> int:
        return sum(r.status == STATUSES["reproduced"] for r in self.rows)

    @property
    def n_differs(self) -> int:
        """Claims of the paper that the book does not reproduce or shows to be wrong."""
        return sum(r.status in (STATUSES["not reproduced"], STATUSES["erratum confirmed"]) for r in self.rows)

    def counts(self) -> dict:
        """Number of rows per status, in the order of :data:`STATUSES` (statuses with no row omitted)."""
        out = {st: sum(r.status == st for r in self.rows) for st in STATUSES.values()}
        return {st: n for st, n in out.items() if n}

    def summary(self) -> str:
        parts = ", ".join(f"{n} {st.split(' ', 1)[1]}" for st, n in self.counts().items())
        return f"{self.chapter}: {len(self.rows)} checks passed ({parts})"

    def _tol(self, r: Row) -> str:
        if r.reference is None:
            return ""
        parts = []
        if r.rtol:
            parts.append(f"rel {r.rtol:.0e}")
        if r.atol:
            parts.append(f"abs {r.atol:.0e}")
        return ", ".join(parts) or "exact"

    def to_markdown(self) -> str:
        head = ("| id | claim | paper | reference | ours | tolerance | status | note |\n"
                "|---|---|---|---|---|---|---|---|\n")
        body = "".join(
            f"| {r.id} | {r.claim} | {_fmt(r.paper)} | {_fmt(r.reference)} | {_fmt(r.ours)} | "
            f"{self._tol(r)} | {r.status} | {r.note} |\n" for r in self.rows)
        return head + body

    def table(self):
        """The scorecard as an object that renders as an HTML table in Jupyter."""
        return _HTMLTable(self)


class _HTMLTable:
    """Five narrow columns (id, claim, paper, ours, status symbol); the reference, tolerance, source
    and note go on a second line under the claim, so the table fits the book's column."""

    def __init__(self, card: Scorecard):
        self.card = card

    def _repr_html_(self) -> str:
        e = html.escape
        legend = " · ".join(e(v) for v in STATUSES.values())
        out = [f'<p class="dpmia-scorecard-legend">{legend}</p>', '<table class="dpmia-scorecard">',
               '<thead><tr><th>id</th><th>claim</th><th>paper</th><th>ours</th>'
               '<th><span title="status">✓?</span></th></tr></thead><tbody>']
        for r in self.card.rows:
            cls = "ok" if r.status in (STATUSES["reproduced"], STATUSES["own check"]) else "differs"
            symbol, word = r.status.split(" ", 1)
            detail = []
            if r.reference is not None:
                tol = self.card._tol(r)
                detail.append(f"reference {_fmt(r.reference)}" + (f" ({tol})" if tol else ""))
            detail += [x for x in (r.source, r.note) if x]
            ours = _fmt(r.ours) if not isinstance(r.ours, bool) else "true"
            out.append(
                f'<tr class="{cls}"><td>{e(r.id)}</td><td>{e(r.claim)}'
                + (f'<div class="dpmia-detail">{e(" · ".join(detail))}</div>' if detail else "")
                + f"</td><td>{nobreak_numbers(e(_fmt(r.paper)))}</td><td>{nobreak_numbers(e(ours))}</td>"
                f'<td class="dpmia-status" title="{e(word)}"><span aria-label="{e(word)}">{e(symbol)}</span></td></tr>')
        out.append("</tbody></table>")
        out.append(f"<p><em>{e(self.card.summary())}</em></p>")
        return "".join(out)

    def _repr_markdown_(self) -> str:
        """The scorecard for outputs that cannot show HTML (the PDF): a real table."""
        from .tables import markdown_table

        rows = [[r.id, r.claim, _fmt(r.paper), _fmt(r.ours) if not isinstance(r.ours, bool) else "true", r.status]
                for r in self.card.rows]
        return markdown_table(["id", "claim", "paper", "ours", "status"], rows, self.card.summary())

    def __repr__(self) -> str:
        return self.card.to_markdown()
