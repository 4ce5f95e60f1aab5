"""The verdict matrix of the summary and landing pages, on hand-built ledger entries: grouped by verdict, the verdict
first in each row and in words, one line of why, the details behind a click, the book's own hypotheses apart."""

import re
from html.parser import HTMLParser

from benign import ledger, pages

TITLES = {"fig1_token_selection": "Figure 1", "fig3_dynamics": "Figure 3", "theory_clock": "The clock"}


def entry(paper, verdict, claim, evidence="train accuracy 1.00, test 0.98", cause="", page="fig3_dynamics",
          keys=("balanced_test_acc",)):
    return ledger.Entry(ledger.Claim(paper, "Figure 3(a)", claim, page, "d = 2000, 3 seeds", lambda m: None),
                        ledger.Finding(verdict, evidence, cause), keys)


ENTRIES = [  # every verdict, both papers and the book's own, in an order that is not the verdicts'
    entry(ledger.S, ledger.CONTRADICTED, "Claim A.", cause="every noisy label is fitted"),
    entry(ledger.M, ledger.HOLDS, "Claim B."),
    entry(ledger.BOOK, ledger.HOLDS, "Hypothesis C.", page="theory_clock"),
    entry(ledger.S, ledger.PART, "Claim D.", cause="the test accuracy drops"),
    entry(ledger.S, ledger.HOLDS, "Claim E.", page="fig1_token_selection"),
    entry(ledger.BOOK, ledger.CONTRADICTED, "Hypothesis F.", cause="the slope is 0.4, not 0.25"),
    entry(ledger.S, ledger.NOT_SEEN, "Claim G.", cause="no boundary inside the grid"),
    entry(ledger.S, ledger.UNTESTABLE, "Claim H.", evidence="—", cause="the model hub is unreachable here", keys=()),
]


class Rows(HTMLParser):
    """The matrix as a reader meets it: groups (their verdict and opened or not) and, in each, the rows' summaries
    as text in order (`first`: the text of a row's first element) and their details' text."""

    def __init__(self, text):
        super().__init__()
        self.groups, self.stack, self.text = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        css = attrs.get("class") or ""
        self.stack.append((tag, css))
        if tag == "details" and "benign-group" in css:
            self.groups.append({"id": attrs["id"], "open": "open" in attrs, "rows": [], "head": ""})
        elif tag == "details" and "benign-row" in css:
            self.groups[-1]["rows"].append({"summary": "", "first": None, "classes": None, "details": ""})
        elif "benign-verdict" in css and self.groups and self.groups[-1]["rows"] \
                and self.groups[-1]["rows"][-1]["classes"] is None:
            self.groups[-1]["rows"][-1]["classes"] = css

    def handle_endtag(self, tag):
        self.stack.pop()

    def handle_data(self, data):
        inside = [t for t, _ in self.stack]
        if not self.groups or not data.strip():
            return
        group = self.groups[-1]
        if not group["rows"]:
            group["head"] += " " + data
            return
        row = group["rows"][-1]
        if inside.count("summary") and "dl" not in inside:
            if row["first"] is None:
                row["first"] = data.strip()
            row["summary"] += data
        else:
            row["details"] += data


def test_the_matrix_groups_by_verdict_in_the_ledger_s_order_with_the_verdict_first_in_words():
    papers, own = pages.split(ENTRIES)
    found = Rows(pages.matrix(papers, TITLES, "papers")).groups
    verdicts = [v for v in ledger.VERDICTS if any(e.finding.verdict == v for e in papers)]
    assert [g["id"] for g in found] == ["papers-" + pages.verdict_class(v).removeprefix("benign-v-") for v in verdicts]
    assert all(g["open"] for g in found)
    for group, verdict in zip(found, verdicts):
        members = [e for e in papers if e.finding.verdict == verdict]
        assert group["head"].split() == verdict.split() + [str(len(members)), "claim" if len(members) == 1 else
                                                          "claims"]
        assert [r["first"] for r in group["rows"]] == [verdict] * len(members)  # the verdict first, as words
        assert all(pages.verdict_class(verdict) in r["classes"] for r in group["rows"])  # and on its colour
        assert [r["summary"].split(verdict, 1)[1].strip()[:8] for r in group["rows"]] == \
            [e.claim.claim[:8] for e in members]  # the claims in the ledger's order
    assert len({pages.verdict_class(v) for v in ledger.VERDICTS}) == len(ledger.VERDICTS)
    line = pages.overview(papers, "papers")  # each verdict in words with its count, linked to its group
    assert re.findall(r'<a href="#([\w-]+)"><span class="benign-verdict [\w-]+">([^<]+)</span> (\d+)</a>', line) == [
        (g["id"], v, str(sum(e.finding.verdict == v for e in papers))) for g, v in zip(found, verdicts)]


def test_a_row_shows_one_line_of_why_and_opens_on_test_evidence_keys_and_page():
    long = ("noisy labels fitted 4 of 4 (seeds: 4–4); clean ones all fitted: yes; test accuracy 0.980 (seeds: "
            "0.970–0.990); balanced setting 0.990 (seeds: 0.980–1.000)")
    held = entry(ledger.S, ledger.HOLDS, "Claim.", evidence=long, keys=("balanced_test_acc", "balanced_noisy_count"))
    missed = entry(ledger.S, ledger.PART, "Claim.", evidence=long, cause="the test accuracy drops")
    row = Rows(pages.matrix([held, missed], TITLES, "x")).groups
    shown, opened = row[0]["rows"][0], row[0]["rows"][0]["details"]
    assert "evidence: noisy labels fitted 4 of 4 (seeds: 4–4); clean ones all fitted: yes …" in shown["summary"]
    assert len(pages.shorten(long)) <= pages.SHORT and pages.shorten("short; enough") == "short; enough"
    assert long in opened and "d = 2000, 3 seeds" in opened and "balanced_noisy_count" in opened
    assert "Figure 3" in opened and 'href="../notebooks/fig3_dynamics.html"' in pages.row(held, TITLES)
    assert "cause: the test accuracy drops" in row[1]["rows"][0]["summary"]  # a cause, where there is one, is the why
    assert "Sakamoto & Sato, Figure 3(a)" in shown["summary"]
    assert '<a href="https://arxiv.org/abs/2409.17625" title="arXiv:2409.17625">' in pages.row(held, TITLES)
    own = pages.row(entry(ledger.BOOK, ledger.HOLDS, "Ours."), TITLES)
    assert "arxiv" not in own and '<span class="benign-where">Figure 3(a)</span>' in own  # no paper to link
    assert pages.shorten("a" * 200).endswith(" …") and len(pages.shorten("word " * 40)) <= pages.SHORT


def test_the_book_s_own_hypotheses_are_shown_and_counted_apart():
    judged = pages.Judged(ENTRIES, {})
    text = pages.summary_page(judged, TITLES)
    papers_at, own_at = text.index("## The papers' claims"), text.index("## The book's own hypotheses")
    numbers_at = text.index("## Numbers compared")
    assert papers_at < own_at < numbers_at
    assert "Hypothesis" not in text[papers_at:own_at] and "Claim " not in text[own_at:numbers_at]
    assert text[own_at:numbers_at].count('class="benign-row"') == 2
    said = pages.headline(judged)
    assert said.startswith("Of the 6 claims of the two papers this build tests: 2 **hold**, 1 **holds in part**, "
                           "1 is **not seen at these sizes**, 1 is **contradicted** and 1 is **not testable here**. "
                           "Of the book's own 2 hypotheses, counted apart: 1 **holds** and 1 is **contradicted**.")
    assert [pages.verdict_count(v, 3) for v in ("holds", "holds in part", "contradicted")] == [
        "3 **hold**", "3 **hold in part**", "3 are **contradicted**"]
    only_papers = pages.Judged([e for e in ENTRIES if e.claim.paper != ledger.BOOK], {})
    assert "book's own" not in pages.headline(only_papers)
    assert "## The book's own hypotheses" not in pages.summary_page(only_papers, TITLES)
    one = pages.Judged([ENTRIES[1], ENTRIES[2]], {})
    assert pages.headline(one).startswith("Of the 1 claim of the two papers this build tests: 1 **holds**. Of the "
                                          "book's own 1 hypothesis, counted apart: 1 **holds**.")


def test_the_landing_matrix_folds_what_holds_or_is_offline_and_keeps_the_book_s_hypotheses_apart():
    text = pages.landing(pages.Judged(ENTRIES, {}), TITLES)
    assert text.startswith("```{raw} html\n") and text.endswith("\n```")
    groups = Rows(text).groups
    assert {g["id"]: g["open"] for g in groups} == {
        "papers-holds": False, "papers-holds-in-part": True, "papers-not-seen-at-these-sizes": True,
        "papers-contradicted": True, "papers-not-testable-here": False, "book-holds": False,
        "book-contradicted": True}
    assert text.index('id="papers-') < text.index("own hypotheses") < text.index('id="book-')


def test_the_landing_page_leads_with_the_matrix_before_any_figure():
    from benign import paths

    index = (paths.ROOT / "book" / "index.md").read_text()
    assert index.index("{{ ledger_verdicts }}") < index.index("{{ ledger_matrix }}") < index.index("```{figure}")
    assert not re.search(r"```\{(figure|image)\}|!\[", index[:index.index("{{ ledger_matrix }}")])


def test_a_page_quotes_one_claims_verdict_with_its_evidence():
    from test_ledger import edge_record, fig3_record

    entries = ledger.evaluate({"fig3_dynamics": fig3_record((0, 0))})
    said = pages.claim_said(entries, "fig3_dynamics", "Figure 3(c)")
    finding = next(e.finding for e in entries if e.claim.where == "Figure 3(c)")
    assert finding.verdict == ledger.HOLDS and said == f"*holds*. Its evidence: {finding.evidence}"
    grid = {"n_values": [50, 200, 800], "n_tail_min": 200, "signal_norm_min": 2, "signal_norm_max": 256,
            "signal_norm_steps_per_doubling": 8, "num_seeds": 3}  # what the claim's test names
    edge = ledger.evaluate({"paper2_snr_heatmap": {**edge_record(-0.5, 0.016, 1 / 64), "parameters": grid}})
    finding = edge[0].finding
    assert pages.claim_said(edge, "paper2_snr_heatmap", "Theorems (SNR threshold)") == (
        f"*holds in part*. Its cause: {finding.cause}. Its evidence: {finding.evidence}")  # no nested parentheses
    assert pages.claim_said(entries, "paper2_snr_heatmap", "Theorems (SNR threshold)") == "not judged in this build"


def test_the_reproducibility_page_names_every_notebooks_seeds():
    from benign.book import seeds_said

    assert [seeds_said(p) for p in ({"seeds": [42, 314, 2718]}, {"seed": 0, "replicates": 3, "outcome_draws": 50},
                                    {"seed": 42, "replicates": 3}, {"seed": 0, "num_seeds": 3}, {"seed": 42},
                                    {"table2_profile": "book"}, {})] == [
        "42, 314 and 2718", "0 to 49", "42 to 44", "0 to 2", "42", "Table 2's (book profile)", "—"]


def test_the_reproducibility_page_never_calls_a_notebook_without_blocks_read_from_the_cache():
    from benign.book import reproducibility_page

    records = {"fig1_token_selection": {"wall_s": 23.9, "thread_policy": "free cores", "blocks_by_threads": {}},
               "fig5_heatmap": {"wall_s": 9.0, "thread_policy": "free cores", "blocks_by_threads": {"4": 2}}}
    page = reproducibility_page(records, "book")  # a notebook that draws its queries by hand runs no trainer call
    assert "| free cores: no trainer call or sweep chunk |" in page and "2×4" in page and "cache)" not in page
    read = {"fig7_one_layer_heatmap": {"wall_s": 20.0, "thread_policy": "free cores", "blocks_by_threads": {},
                                       "computed_chunks": 0},  # its sweep's chunks all read from the cache
            "table2_finetune": {"wall_s": 30.0, "thread_policy": "fixed 1", "blocks_by_threads": {"1": 1},
                                "parameters": {"processes": 2}}}
    page = reproducibility_page(read, "book")
    assert "| free cores: nothing computed: every sweep chunk read from the cache |" in page
    assert "| fixed 1: 1×1; runs not in the cache: 2 worker processes |" in page
