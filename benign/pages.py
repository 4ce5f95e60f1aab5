"""Tables as a reader reads them: the per-page comparison table, the claims ledger and the summary page.

Every table is HTML with no index column, numbers at their precision (never an exponent where a plain number fits),
words for verdicts, and long notes as numbered footnotes under the table, never cut.
"""

from __future__ import annotations

import html
import itertools
import math
from dataclasses import dataclass

import numpy as np

from . import expected, ledger

PAGE = "../notebooks/{}.html"  # a notebook's page, from a page of book/
TABLES = itertools.count(1)  # numbers the tables of a process, so footnote anchors are unique on a page


def number(x: float) -> str:
    """A number at its precision: integers plain, others to four significant digits, no exponent above 1e-4."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if float(x).is_integer():
        return str(int(x))
    if abs(x) >= 1e-4:
        digits = max(0, 3 - math.floor(math.log10(abs(x))))
        return f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return f"{x:.1e}"


class Footnotes:
    """Long texts of one table, each numbered once, however many rows cite it."""

    def __init__(self):
        self.texts: list[str] = []
        self.table = next(TABLES)

    def cite(self, text: str) -> str:
        if not text:
            return ""
        if text not in self.texts:
            self.texts.append(text)
        k = self.texts.index(text) + 1
        return f'<sup><a href="#fn-{self.table}-{k}">{k}</a></sup>'

    def html(self) -> str:
        if not self.texts:
            return ""
        items = "".join(f'<li id="fn-{self.table}-{k}">{html.escape(t)}</li>' for k, t in enumerate(self.texts, 1))
        return f'<ol class="benign-footnotes">{items}</ol>'


def table(columns: list[str], rows: list[list[str]], notes: Footnotes, css: str) -> str:
    """An HTML table (cells already escaped) in a box that scrolls sideways when it is wider than the page."""
    head = "".join(f"<th>{c}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<div class="benign-table-box"><table class="benign-table {css}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{notes.html()}")


def comparison(rows: list[expected.Row]) -> str:
    """A notebook's comparison table: what each number is compared with, theirs, ours, the verdict and its cause."""
    notes = Footnotes()
    out = []
    for row in rows:
        e = row.expected
        target = f"{number(e.target)} <small>({html.escape(e.kind)}{', ' + html.escape(e.where) if e.where else ''})</small>"
        tolerance = f"±{number(e.allowed)}{notes.cite(expected.TOLERANCES[e.tolerance].reason)}"
        quantity = html.escape(e.quantity) + notes.cite(e.note)
        if e.counted_on:
            quantity += notes.cite(f"the same number is counted on the page of {e.counted_on}; shown here only")
        result = html.escape(row.result)
        out.append([quantity, target, number(row.authors), number(row.here), tolerance,
                    f"<strong>{result}</strong>" if not row.match else result, html.escape(row.cause)])
    return table(["quantity", "compared with", "authors' code", "here", "tolerance", "result", "cause of a miss"],
                 out, notes, "benign-comparison")


def cell(value) -> str:
    """One table cell as a reader reads it: numbers at their precision, yes/no, a dash for nothing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return number(float(value))
    return html.escape(str(value))


def frame(df) -> str:
    """A pandas table on a page: a meaningful index becomes columns, no index column, cells as `cell` writes them."""
    import pandas as pd

    if not isinstance(df.index, pd.RangeIndex) or any(df.index.names):
        df = df.reset_index()
    columns = [" / ".join(str(c) for c in col if str(c)) if isinstance(col, tuple) else str(col) for col in df.columns]
    rows = [[cell(v) for v in record] for record in df.itertuples(index=False, name=None)]
    return table([html.escape(c) for c in columns], rows, Footnotes(), "benign-frame")


class Comparison:
    """What `Notebook.compare` returns: the table, shown as HTML on the page."""

    def __init__(self, rows: list[expected.Row]):
        self.rows = rows

    def _repr_html_(self) -> str:
        return comparison(self.rows) if self.rows else "<p>No number of this page is compared at this profile.</p>"


def claims(entries: list[ledger.Entry], titles: dict[str, str]) -> str:
    """The claims ledger: claim, where the paper makes it, the test (linked to its page, named by its title), the
    evidence, the verdict with its cause."""
    notes = Footnotes()
    out = []
    for entry in entries:
        c, f = entry.claim, entry.finding
        link = f'<a href="{PAGE.format(c.page)}">{html.escape(titles.get(c.page, c.page))}</a>'
        verdict = html.escape(f.verdict) if f.verdict == ledger.HOLDS else f"<strong>{html.escape(f.verdict)}</strong>"
        out.append([html.escape(c.claim), html.escape(f"{c.paper}, {c.where}"), html.escape(c.test) + f" ({link})",
                    html.escape(f.evidence), verdict + notes.cite(f.cause)])
    return table(["claim", "where", "the book's test", "evidence", "verdict"], out, notes, "benign-ledger")


@dataclass(frozen=True)
class Judged:
    """A build's verdicts, computed once: the ledger's entries and each notebook's comparison rows."""

    entries: list
    per_page: dict

    @classmethod
    def of(cls, records: dict[str, dict]) -> "Judged":
        return cls(ledger.evaluate(records), {name: expected.compare(name, r) for name, r in records.items()})


def headline(judged: Judged) -> str:
    """One paragraph: the claims ledger's verdict counts, then the compared numbers per kind of target."""
    entries = judged.entries
    rows = [row for page_rows in judged.per_page.values() for row in page_rows]
    verdicts = ledger.verdict_counts(entries)
    said = ", ".join(f"{count} **{verdict}**" for verdict, count in verdicts.items())
    numbers = "; ".join(f"{kind}: {hits} of {total} match" for kind, (hits, total) in expected.counts(rows).items())
    return (f"Of the {len(entries)} claims of the two papers this build tests: {said}. Compared numbers, each counted "
            f"once and apart by what it is compared with — {numbers}.")


def summary_page(judged: Judged, titles: dict[str, str]) -> str:
    """The summary page: the claims ledger, then every comparison table, from this build's verdicts (`titles`: each
    notebook's page title)."""
    lines = ["# Claims and numbers", "", headline(judged), "",
             "Every verdict below comes from a rule in `benign.ledger` applied to the records of this build's runs, "
             "never from prose; the evidence quotes numbers that the linked page shows.", "",
             "## The claims ledger", "", "```{raw} html", claims(judged.entries, titles), "```", "",
             "## Numbers compared", "",
             "Each number is compared with one target, of one kind: "
             + "; ".join(f"*{k}*: {v}" for k, v in expected.KINDS.items())
             + ". Only *paper* rows are the paper's numbers; the kinds are counted apart. A number shown on two pages "
             "is counted on one. A value on the other side of a regime boundary from its target (another count of "
             "fitted labels, chance against above chance, an Eq.-9 ratio below one against above) is a miss whatever "
             "its distance. The *authors' code* column runs a transcription of their published scripts "
             "(`benign.authors`): their final version, commit c563aae, or, for the η sweep and the condition checks, "
             "the January main_math_frak.py that the final version lacks.", ""]
    for name, page_rows in judged.per_page.items():
        if page_rows:
            lines += [f"### {titles[name]}", "", f"{{doc}}`../notebooks/{name}`", "", "```{raw} html",
                      comparison(page_rows), "```", ""]
    return "\n".join(lines) + "\n"
