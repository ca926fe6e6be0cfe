"""The report's rows and their renderings: text for a shell, HTML for a notebook, a dict for JSON."""

from __future__ import annotations

import html
import math
import re
from dataclasses import asdict, dataclass, field

from ..tables import fmt, nobreak_numbers

#: The worst-case membership game: is the target in the training set, with everything else fixed?
WORST_CASE = "worst case: target in or out, all else fixed"
#: What the attacker of the worst-case game knows.
KNOWS_ALL = "every other record and every noisy update"
#: The kinds a row can have.
KINDS = ("certified bracket", "certified bound", "certified lower bound", "estimate", "not a bound for this run")


@dataclass
class RiskRow:
    """One quantity of a :class:`RiskReport`.

    ``value`` is the safe end (the upper end, or the lower end where ``safe="lower"``: a security level
    or an attack's success that is certified from below), ``lower``/``upper`` the certified bracket when
    there is one; ``game``, ``neighbours`` (the neighbouring relation it is stated for) and ``knows`` (what
    the attacker is assumed to know) say which game the row answers; ``kind`` is one of ``KINDS``
    (derived from the rest unless given).
    """

    group: str
    quantity: str
    value: float
    lower: float | None = None
    upper: float | None = None
    source: str = ""
    note: str = ""
    estimate: bool = False  #: an approximation (printed to nearest), not a bound
    game: str = WORST_CASE
    neighbours: str = "add/remove"
    knows: str = KNOWS_ALL
    kind: str = ""
    safe: str = "upper"     #: the safe end of the bracket ("upper", or "lower" for a security level)

    def __post_init__(self):
        if not self.kind:
            self.kind = ("estimate" if self.estimate else
                         "certified bracket" if self.lower is not None else "certified bound")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


@dataclass
class RiskReport:
    """The rows of :func:`dpmia.report.risk_report` for one setting, and notes on what does not apply."""

    setting: dict
    rows: list[RiskRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def value(self, quantity: str) -> float:
        """The value of the row named ``quantity``."""
        for r in self.rows:
            if r.quantity == quantity:
                return r.value
        rows = "; ".join(r.quantity for r in self.rows)
        raise KeyError(f"no row named {quantity!r}. The rows are: {rows}")

    def row(self, quantity: str) -> RiskRow:
        """The row named ``quantity``."""
        for r in self.rows:
            if r.quantity == quantity:
                return r
        raise KeyError(f"no row named {quantity!r}")

    def to_dict(self) -> dict:
        """JSON-ready: the setting, every row (``None`` where a row has no bracket; an infinite value as
        the string ``"inf"``, which standard JSON can hold) and the notes."""
        def clean(v):
            return "inf" if isinstance(v, float) and math.isinf(v) else v
        return {"setting": dict(self.setting),
                "rows": [{k: clean(v) for k, v in asdict(r).items()} for r in self.rows],
                "notes": list(self.notes)}

    @staticmethod
    def _cells(r: RiskRow):
        if r.estimate:
            val = fmt(r.value, rounding="nearest")
        else:
            val = fmt(r.value, rounding="down" if r.safe == "lower" or r.kind == "certified lower bound" else "up")
        bracket = (f"[{fmt(r.lower, rounding='down')}, {fmt(r.upper, rounding='up')}]"
                   if r.lower is not None else "")
        return val, bracket

    def _title(self) -> str:
        s = self.setting
        sampler = {"poisson": "Poisson sampling", "fixed": "fixed-size batches",
                   "shuffled": "shuffled epochs"}.get(s.get("sampler", "poisson"), s.get("sampler", ""))
        return (f"DP-SGD with q = {s['q']:g}, sigma = {s['sigma']:g}, T = {s['steps']:,} steps ({sampler}, "
                f"{s.get('neighbours', 'add-remove')} neighbours); delta = {s['delta']:g}, prior = {s['prior']:g}")

    def _grouped(self):
        """``(heading or None, row, value text, bracket text)``: a heading where a new group starts."""
        group = None
        for r in self.rows:
            heading = r.group if r.group != group else None
            group = r.group
            yield (heading, r, *self._cells(r))

    @staticmethod
    def _game(r: RiskRow) -> str:
        return f"game: {r.game}; neighbours: {r.neighbours}; the attacker knows {r.knows}"

    def __str__(self) -> str:
        lines = [self._title(), ""]
        width = max(len(r.quantity) for r in self.rows)
        for heading, r, val, bracket in self._grouped():
            if heading:
                lines.append(f"{heading}:")
                lines.append(f"  ({self._game(r)})")
            tag = "" if r.kind in ("certified bracket", "certified bound") else f" [{r.kind}]"
            lines.append(f"  {r.quantity:<{width}}  {val:>11}  {bracket:<26} {r.source}{tag}"
                         + (f" ({r.note})" if r.note else ""))
        if self.notes:
            lines.append("")
            lines.extend(f"* {n}" for n in self.notes)
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        """The report for outputs that cannot show HTML (the PDF): a real table, a group's game as its first row."""
        from ..tables import markdown_table

        d = _display
        rows = []
        for heading, r, val, bracket in self._grouped():
            if heading:
                rows.append([d(heading), "", "", "", d(self._game(r))])
            rows.append([d(r.quantity + (f" ({r.note})" if r.note else "")), val, bracket, r.kind, d(r.source)])
        text = markdown_table(["quantity", "value", "certified bracket", "kind", "source"], rows, d(self._title()))
        return text + ("\n\n" + "\n".join(f"* {d(n)}" for n in self.notes) if self.notes else "")

    def _repr_html_(self) -> str:
        def e(text):
            return html.escape(_display(text))
        out = [f"<p><strong>{e(self._title())}</strong></p>", '<table class="dpmia-report">',
               "<thead><tr><th>quantity</th><th>value</th><th>certified bracket</th><th>kind</th><th>source</th>"
               "</tr></thead><tbody>"]
        for heading, r, val, bracket in self._grouped():
            if heading:
                out.append(f'<tr><td colspan="5"><em>{e(heading)}</em>'
                           f'<div class="dpmia-detail">{e(self._game(r))}</div></td></tr>')
            note = f'<div class="dpmia-detail">{e(r.note)}</div>' if r.note else ""
            out.append(f"<tr><td>{e(r.quantity)}{note}</td><td>{e(val)}</td><td>{nobreak_numbers(e(bracket))}</td>"
                       f"<td>{e(r.kind)}</td><td>{e(r.source)}</td></tr>")
        out.append("</tbody></table>")
        if self.notes:
            out.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in self.notes) + "</ul>")
        return "".join(out)


# Plain names in the rows (the keys of RiskReport.value and the terminal's text) and the symbols a page prints
_SYMBOLS = [(r"\b2 Phi\(mu/2\) - 1\b", "2Φ(μ/2) − 1"), (r"\bPhi\(", "Φ("), (r"\bepsilon\b", "ε"),
            (r"\beps\b", "ε"), (r"\bdelta\b", "δ"), (r"\bsigma\b", "σ"), (r"\bmu\b", "μ"),
            (r"\beta\b", "η"), (r"\bRenyi\b", "Rényi")]


def _display(text: str) -> str:
    """``text`` with the Greek letters and names a reader sees in the book: "epsilon (Renyi DP)" becomes
    "ε (Rényi DP)", "2 Phi(mu/2) - 1" becomes "2Φ(μ/2) − 1". For the HTML and Markdown renderings; the plain
    text (the terminal's) keeps ASCII."""
    for pattern, symbol in _SYMBOLS:
        text = re.sub(pattern, symbol, text)
    return text
