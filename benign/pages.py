"""Tables as a reader reads them: the per-page comparison table, the verdict matrix of the claims, the summary page.

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
from .words import and_list, count, minus, reader_name, tiny

PAGE = "../notebooks/{}.html"  # a notebook's page, from a page of book/
TABLES = itertools.count(1)  # numbers the tables of a process, so footnote anchors are unique on a page


def number(x: float, tolerance: float = math.nan, resolution: float = 0.0) -> str:
    """A number at its precision: integers plain, others to four significant digits, no exponent above 1e-4; compared
    within a `tolerance`, to one decimal more than the tolerance's first digit, whole numbers included, so that a row
    of a comparison reads at one precision (0.6913 and 0.7 within ±0.1 read 0.69 and 0.70, 0 reads 0.00), unless
    that shows a number that is not zero as zero; never to more decimals than the values' own `resolution` resolves
    (a test accuracy on 1000 inputs, 0.001: 1.000 within ±0.009, not 1.0000)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    decimals = max(0, 1 - math.floor(math.log10(tolerance))) if tolerance > 0 else 0
    if resolution > 0:
        decimals = min(decimals, math.ceil(round(-math.log10(resolution), 9)))
    if tolerance > 0 and (x == 0 or round(x, decimals) != 0):
        return minus(f"{x:.{decimals}f}")
    if float(x).is_integer():
        return minus(str(int(x)))
    if abs(x) >= 1e-4:
        digits = max(0, 3 - math.floor(math.log10(abs(x))))
        return minus(f"{x:.{digits}f}".rstrip("0").rstrip("."))
    return minus(f"{x:.1e}")


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
    """An HTML table of `columns` (plain text) and `rows` (cells already escaped) in the book's table box; each cell
    carries its column's header (`data-label`), which a phone shows before the cell when the table is laid out as
    cards (benign.css, benign-tables.js)."""
    labels = [html.escape(c.strip()) for c in columns]
    head = "".join(f"<th>{c}</th>" for c in labels)
    body = "".join("<tr>" + "".join(f'<td data-label="{label}">{c}</td>' for label, c in zip(labels, row)) + "</tr>"
                   for row in rows)
    return (f'<div class="benign-table-box"><table class="benign-table {css}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>{notes.html()}")


def comparison(rows: list[expected.Row], titles: dict[str, str] | None = None) -> str:
    """A notebook's comparison table: what each number is compared with, theirs, ours, the verdict and its cause
    (`titles`: notebook → page title, naming the page where a number shown twice is counted); the target and the
    two values of a row read at the precision of its tolerance (`number`)."""
    notes = Footnotes()
    out = []
    for row in rows:
        e = row.expected
        target = f"{number(e.target, e.allowed, e.resolution)} <small>({html.escape(e.kind)}{', ' + html.escape(e.where) if e.where else ''})</small>"
        tolerance = f"{bound_said(e)}{notes.cite(expected.TOLERANCES[e.tolerance].reason)}"
        quantity = html.escape(e.quantity) + notes.cite(e.note)
        if e.counted_on:
            page = (titles or {}).get(e.counted_on, e.counted_on)
            quantity += notes.cite(f"the same number is counted on the page “{page}”; shown here only")
        result = html.escape(row.result)
        out.append([quantity, target, number(row.authors, e.allowed, e.resolution),
                    number(row.here, e.allowed, e.resolution), tolerance,
                    f"<strong>{result}</strong>" if not row.match else result, html.escape(row.cause)])
    return table(["quantity", "compared with", "authors' code", "here", "tolerance", "result", "cause of a miss"],
                 out, notes, "benign-comparison")


def bound_said(e: expected.Expected) -> str:
    """A row's tolerance as its check applies it: '±0.05' about the target; against a plot's limit, the bound a
    value must meet ('at or above 0.25 (0.50 less 0.25)'); against a range, the widened range ('within 0.355–0.600
    (0.405–0.550 widened by 0.05)'); limits at the row's precision (`number`)."""
    at = lambda x: number(x, e.allowed, e.resolution)  # noqa: E731 - the limits at the row's precision, as its values
    if e.bound == "inside":
        low, high = e.limits
        return f"within {at(low - e.allowed)}–{at(high + e.allowed)} ({at(low)}–{at(high)} widened by {number(e.allowed)})"
    if e.bound == "lower":
        return f"at or above {at(e.target - e.allowed)} ({at(e.target)} less {number(e.allowed)})"
    if e.bound == "upper":
        return f"at or below {at(e.target + e.allowed)} ({at(e.target)} plus {number(e.allowed)})"
    return f"±{number(e.allowed)}"


def cell(value) -> str:
    """One table cell as a reader reads it: numbers at their precision, yes/no, a dash for nothing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return number(float(value))
    return html.escape(reader_name(value) if isinstance(value, str) else str(value))


def frame(df) -> str:
    """A pandas table on a page: a meaningful index becomes columns (an unnamed one with no header: name it), a
    numbering 0, 1, … is dropped, headers and names from code in words (`words.reader_name`), cells as `cell`
    writes them."""
    numbered = not any(df.index.names) and list(df.index) == list(range(len(df)))  # 0, 1, …: no meaning
    if not numbered:
        df = df.reset_index(names=[name or " " * (i + 1) for i, name in enumerate(df.index.names)])  # blank headers
    columns = [" / ".join(reader_name(c) for c in col if str(c)) if isinstance(col, tuple) else reader_name(col)
               for col in df.columns]
    rows = [[cell(v) for v in record] for record in df.itertuples(index=False, name=None)]
    return table(columns, rows, Footnotes(), "benign-frame")


class Comparison:
    """What `Notebook.compare` returns: the table, shown as HTML on the page."""

    def __init__(self, rows: list[expected.Row], titles: dict[str, str] | None = None):
        self.rows, self.titles = rows, titles

    def _repr_html_(self) -> str:
        if not self.rows:
            return ("<p>Nothing on this page is set beside a number printed in the papers; the claims ledger of the "
                    "summary page gives its claims' verdicts.</p>")
        return comparison(self.rows, self.titles)


SHORT = 110  # characters: the longest "why" a row of the verdict matrix shows before its details are opened


def prose(text: str) -> str:
    """Text for a page: escaped, `code` spans as code."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if k % 2 else p for k, p in enumerate(parts))


def shorten(text: str, limit: int = SHORT) -> str:
    """`text` whole when it fits `limit` characters; else cut after its last whole clause (at "; ") that fits, or at
    a word where no clause fits, and marked " …" (the whole text is one click away)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("; ", 0, limit - 2)
    if cut < limit // 3:
        cut = text.rfind(" ", 0, limit - 2)
    return text[:cut if cut > 0 else limit - 2].rstrip(" ,;:(") + " …"


def why(finding: ledger.Finding) -> tuple[str, str]:
    """A row's one line of why: ("cause", the cause) where the finding has one, else ("evidence", its evidence)."""
    return ("cause", finding.cause) if finding.cause else ("evidence", finding.evidence)


def verdict_class(verdict: str) -> str:
    """The CSS class of a verdict's colour: benign-v-holds, benign-v-holds-in-part, …"""
    return "benign-v-" + "-".join("".join(ch if ch.isalnum() else " " for ch in verdict).split())


def chip(verdict: str) -> str:
    """A verdict as the matrix shows it: its words, on its colour (the colour never alone)."""
    return f'<span class="benign-verdict {verdict_class(verdict)}">{html.escape(verdict)}</span>'


def split(entries: list[ledger.Entry]) -> tuple[list[ledger.Entry], list[ledger.Entry]]:
    """The papers' claims, and the book's own hypotheses (paper `ledger.BOOK`): counted and shown apart."""
    return ([e for e in entries if e.claim.paper != ledger.BOOK], [e for e in entries if e.claim.paper == ledger.BOOK])


def groups(entries: list[ledger.Entry]) -> list[tuple[str, list[ledger.Entry]]]:
    """The entries by verdict, in the order of `ledger.VERDICTS` (from holds to contradicted, then offline), each
    group in the ledger's order; no empty group."""
    return [(v, [e for e in entries if e.finding.verdict == v]) for v in ledger.VERDICTS
            if any(e.finding.verdict == v for e in entries)]


def row(entry: ledger.Entry, titles: dict[str, str]) -> str:
    """One claim: the verdict first, the claim, where it is made and one line of why; the book's test, the whole
    evidence, the record's keys and the page behind a click (`<details>`: no script)."""
    c, f = entry.claim, entry.finding
    where = prose(c.where)
    if c.where.startswith(ledger.REPOSITORY_PLACE):  # the authors' code: their repository linked
        where = f'{html.escape(c.paper)}, <a href="{ledger.REPOSITORY}">{where}</a>'
    elif c.where == "Poster":  # the ICML poster: named (it has no stable address)
        where = f"{html.escape(c.paper)}, their ICML 2025 poster"
    elif c.paper in ledger.ARXIV:  # the paper linked (arXiv), the figure or section named
        where = (f'<a href="https://arxiv.org/abs/{ledger.ARXIV[c.paper]}" title="arXiv:{ledger.ARXIV[c.paper]}">'
                 f'{html.escape(c.paper)}</a>, {where}')
    kind, text = why(f)
    link = f'<a href="{PAGE.format(c.page)}">{html.escape(titles.get(c.page, c.page))}</a>'
    details = [("the book's test", prose(c.test)), ("evidence", prose(f.evidence))]
    details += [("cause", prose(f.cause))] if f.cause else []
    details += [("record keys read", ", ".join(f'<code class="benign-key">{html.escape(k)}</code>' for k in entry.keys)
                 or "none")]
    details += [("page", link)]
    body = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in details)
    return (f'<details class="benign-row"><summary>{chip(f.verdict)}<span class="benign-row-text">'
            f'<span class="benign-claim">{prose(c.claim)}</span> <span class="benign-where">{where}</span>'
            f'<span class="benign-why"><em>{kind}:</em> {prose(shorten(text))}</span></span></summary>'
            f'<dl class="benign-row-details">{body}</dl></details>')


def anchor(name: str, verdict: str) -> str:
    """The id of a verdict's group in the matrix called `name`: papers-holds, papers-holds-in-part, …"""
    return f"{name}-{verdict_class(verdict).removeprefix('benign-v-')}"


def overview(entries: list[ledger.Entry], name: str) -> str:
    """One line over the matrix called `name`: each verdict on its colour, in words, with its count, a link to its
    group."""
    links = "".join(f'<a href="#{anchor(name, verdict)}">{chip(verdict)} {len(members)}</a>'
                    for verdict, members in groups(entries))
    return f'<p class="benign-overview">{links}</p>'


NOUNS = {"papers": ("claim", "claims"), "book": ("hypothesis", "hypotheses")}  # what a matrix's rows are


def matrix(entries: list[ledger.Entry], titles: dict[str, str], name: str, folded: tuple[str, ...] = ()) -> str:
    """The verdict matrix: one group per verdict (`groups`), headed by the verdict and its count, a row per claim
    (`row`). A group whose verdict is in `folded` starts closed; `name` makes the groups' anchors unique on a page
    (#name-holds, …)."""
    out = []
    for verdict, members in groups(entries):
        opened = "" if verdict in folded else " open"
        rows = count(len(members), *NOUNS.get(name, NOUNS["papers"]))
        out.append(f'<details class="benign-group" id="{anchor(name, verdict)}"{opened}><summary>{chip(verdict)} '
                   f'<span class="benign-group-count">{rows}</span></summary>'
                   + "".join(row(e, titles) for e in members) + "</details>")
    return f'<div class="benign-matrix">{"".join(out)}</div>'


@dataclass(frozen=True)
class Judged:
    """A build's verdicts, computed once: the ledger's entries and each notebook's comparison rows."""

    entries: list
    per_page: dict

    @classmethod
    def of(cls, records: dict[str, dict]) -> "Judged":
        return cls(ledger.evaluate(records, strict=True),  # a build's records: a misspelt key stops it
                   {name: expected.compare(name, r) for name, r in records.items()})


def claim_said(entries: list[ledger.Entry], page: str, where: str) -> str:
    """One claim's verdict, its cause where it has one, and its evidence, as prose quotes them (the claim of `page`
    made at `where`), in sentences the page ends with its own full stop: '*holds in part*. Its cause: …. Its
    evidence: …' — never inside parentheses, since evidence carries its own; 'not judged in this build' when its
    page did not run."""
    entry = next((e for e in entries if e.claim.page == page and e.claim.where == where), None)
    if entry is None:
        return "not judged in this build"
    finding = entry.finding
    cause = f" Its cause: {finding.cause}." if finding.cause else ""
    return f"*{finding.verdict}*.{cause} Its evidence: {finding.evidence}"


def counted(entries: list[ledger.Entry]) -> str:
    """Verdict counts as a sentence says them, the verdict in bold: "20 **hold**, 1 **holds in part** and 3 are
    **contradicted**" (`ledger.verdict_counts`)."""
    return and_list([verdict_count(verdict, k) for verdict, k in ledger.verdict_counts(entries).items()])


def verdict_count(verdict: str, k: int) -> str:
    """k claims with one verdict: '1 **holds**', '13 **hold in part**', '1 is **contradicted**', '3 are **not
    testable here**' (a verdict that is a verb agrees with k; the others take 'is' or 'are')."""
    if verdict.startswith("holds"):
        return f"{k} **{'holds' if k == 1 else 'hold'}{verdict[len('holds'):]}**"
    return f"{k} {'is' if k == 1 else 'are'} **{verdict}**"


def verdicts_said(entries: list[ledger.Entry]) -> str:
    """The verdict counts of the papers' claims, then those of the book's own hypotheses apart, in words."""
    papers, own = split(entries)
    said = f"Of the {count(len(papers), 'claim')} of the two papers this build tests: {counted(papers)}."
    if own:
        said += (f" Of the book's own {count(len(own), 'hypothesis', 'hypotheses')}, counted apart: "
                 f"{counted(own)}.")
    return said


def numbers_said(judged: Judged) -> str:
    """The compared numbers per kind of target, in words."""
    compared = [r for page_rows in judged.per_page.values() for r in page_rows]
    numbers = "; ".join(f"{kind}: {hits} of {total} match" for kind, (hits, total) in expected.counts(compared).items())
    return f"Compared numbers, each counted once and apart by what it is compared with — {numbers}."


def headline(judged: Judged) -> str:
    """One paragraph: the verdict counts (`verdicts_said`), then the compared numbers (`numbers_said`)."""
    return f"{verdicts_said(judged.entries)} {numbers_said(judged)}"


def landing(judged: Judged, titles: dict[str, str]) -> str:
    """The landing page's verdict matrix (MyST): the papers' claims, those that hold and those not testable here
    folded, then the book's own hypotheses apart."""
    papers, own = split(judged.entries)
    folded = (ledger.HOLDS, ledger.UNTESTABLE)  # what needs no second look on the landing page, one click away
    parts = [matrix(papers, titles, "papers", folded)]
    if own:
        parts.append('<p class="benign-matrix-head"><strong>The book\'s own hypotheses</strong>, counted apart from '
                     "the papers' claims:</p>" + matrix(own, titles, "book", folded))
    return "```{raw} html\n" + "\n".join(parts) + "\n```"


def summary_page(judged: Judged, titles: dict[str, str]) -> str:
    """The summary page: the verdict matrix of the papers' claims, the book's own hypotheses apart, then every
    comparison table, from this build's verdicts (`titles`: each notebook's page title)."""
    papers, own = split(judged.entries)
    lines = ["# Claims and numbers", "", headline(judged), "",
             "Each verdict comes from a rule of the book's claims ledger applied to this build's records, never "
             "from prose. Every rule measures an effect against a control (the run's own step 0, where the fixed "
             "head alone classifies; the same run on clean labels), can say *holds* and *contradicted*, and takes "
             "its thresholds from the book's one list of them, each with its reason and fixed before the runs unless "
             "its reason says otherwise. "
             "A row gives the verdict, the claim, where the paper makes it and, in one line, the "
             "cause of the verdict (where it holds, its evidence); a click opens the book's test, the whole evidence, "
             "the record's keys the rule read and the page that shows them.", "",
             "## The papers' claims", "", "```{raw} html", overview(papers, "papers") + matrix(papers, titles, "papers"),
             "```", ""]
    if own:
        lines += ["## The book's own hypotheses", "",
                  "Claims this book makes beyond the two papers, judged by rules of the same kind and counted apart "
                  "from the papers' verdicts.", "", "```{raw} html", overview(own, "book") + matrix(own, titles, "book"),
                  "```", ""]
    lines += ["## Numbers compared", "",
              "Each number is compared with one target, of one kind: "
              + "; ".join(f"*{k}*: {v}" for k, v in expected.KINDS.items())
              + ". Only *paper* rows are the paper's numbers; the kinds are counted apart. A number shown on two pages "
              "is counted on one. A value on the other side of a regime boundary from its target (another count of "
              "fitted labels, chance against above chance, an Eq.-9 ratio below one against above) is a miss whatever "
              "its distance. The *authors' code* column runs a transcription of their published scripts: their "
              "final version, commit c563aae, or, for the η sweep and the condition checks, "
              "the January main_math_frak.py that the final version lacks.", ""]
    for name, page_rows in judged.per_page.items():
        if page_rows:
            lines += [f"### {titles[name]}", "", f"{{doc}}`../notebooks/{name}`", "", "```{raw} html",
                      comparison(page_rows, titles), "```", ""]
    return "\n".join(lines) + "\n"


SHOWN_BELOW = 1e-4  # a page's tables write smaller numbers with an exponent (`pages.number`): `paper2_table` not


def paper2_table(frame, floor: float = 1e-6):
    """A table of `simulate` (`final` or `history`) as a page shows it: paper 2's symbols as column names
    (`paper2.SYMBOLS`), step sizes as '(0.01, 1)', numbers below 10⁻⁴ without an exponent (`words.tiny`: 'below 10⁻⁶'
    under `floor`, else positional; an attention weight of 0, a float underflow, too), the accuracies and losses before
    the attention weights, and no accuracy at step 0: there v = p = 0, so f(X) = 0 for every input, which
    predicts no class (`simulate` counts that tie as wrong, an accuracy of 0; a coin toss on ties would be right
    half the time)."""
    from .paper2 import SYMBOLS  # paper 2's trainer, imported only where its tables are shown (it needs torch)

    headline = [c for c in ("train_acc", "test_acc", "train_loss", "test_loss") if c in frame]  # before the attention
    attention = [c for c in frame.columns if str(c).endswith("attention")]  # weights, the table's last columns
    frame = frame[[c for c in frame.columns if c not in headline + attention] + headline + attention].copy()
    if "step_sizes" in frame:
        frame["step_sizes"] = ["(" + ", ".join(f"{b:g}" for b in beta) + ")" for beta in frame.step_sizes]
    if "step" in frame:
        frame.loc[frame.step == 0, [c for c in ("train_acc", "test_acc") if c in frame]] = np.nan
    for column in frame.columns[frame.dtypes == float]:
        values = frame[column]
        weight = str(column).endswith("attention")  # a softmax weight is never 0: a 0 is an underflow of a tiny one
        small = values.notna() & ((values != 0) | weight) & (values.abs() < SHOWN_BELOW)
        if small.any():
            frame[column] = [tiny(x or math.ulp(0.0), floor) if flag else x for x, flag in zip(values, small)]
    return frame.rename(columns=SYMBOLS)
