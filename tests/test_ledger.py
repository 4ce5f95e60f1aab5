"""The verdicts: comparison rows with honest tolerances and regime boundaries, numbers counted once and by kind,
the claims ledger's rules, tables that read, and prose that types no measured number."""

import json
import re

import pytest

from benign import expected, ledger, notebooks, pages, paths


def row_of(notebook: str, key: str, metrics: dict) -> expected.Row:
    return next(r for r in expected.compare(notebook, metrics) if r.expected.key == key)


def test_a_value_across_a_regime_boundary_is_a_miss_whatever_its_distance():
    # Figure 1's harmful test accuracy: 0.48 is chance on 100 balanced test samples, the paper's 0.62 is above it
    row = row_of("fig1_token_selection", "harmful_test_acc", {"harmful_test_acc": 0.48})
    assert abs(0.48 - 0.62) <= row.expected.allowed  # within the distance ...
    assert not row.match and row.result == "miss: chance against above chance"  # ... but the other regime
    # Figure 3's large-signal train accuracy: 18 of 20 fitted is another count than the paper's 16 of 20
    row = row_of("fig3_dynamics", "large_signal_train_acc", {"large_signal_train_acc": 0.9})
    assert not row.match and row.result == "miss: 18 of 20 against 16 of 20"
    assert row_of("fig3_dynamics", "large_signal_train_acc", {"large_signal_train_acc": 0.8}).match
    # an Eq.-9 ratio above one against the paper's below one
    row = row_of("eta_sweep", "noise_ratio_0.70_frak_ratio", {"noise_ratio_0.70_frak_ratio": 1.02})
    assert not row.match and row.result.startswith("miss: above 1")


def test_a_miss_gets_its_cause_from_the_authors_number_or_a_static_cause():
    key = "balanced_test_acc"
    metrics = {key: 0.93, f"authors_{key}": 0.935}
    assert row_of("fig3_dynamics", key, metrics).cause == expected.AUTHORS_AGREE
    metrics[f"authors_{key}"] = 0.996
    assert row_of("fig3_dynamics", key, metrics).cause == expected.OURS_DIFFER
    del metrics[f"authors_{key}"]
    assert row_of("fig3_dynamics", key, metrics).cause == expected.UNEXAMINED
    metrics[key] = 0.995
    assert row_of("fig3_dynamics", key, metrics).cause == ""  # a match has no cause
    # the authors' number on the other side of a regime boundary from ours does not agree with us
    metrics = {"harmful_test_acc": 0.48, "authors_harmful_test_acc": 0.62}
    assert row_of("fig1_token_selection", "harmful_test_acc", metrics).cause == expected.OURS_DIFFER
    # their one draw within the range of ours over seeds agrees with us, though it is another count than our plotted run
    metrics = {"large_signal_train_acc": 0.9, "authors_large_signal_train_acc": 0.95,
               "large_signal_train_acc_min": 0.85, "large_signal_train_acc_max": 0.95}
    assert row_of("fig3_dynamics", "large_signal_train_acc", metrics).cause == expected.AUTHORS_AGREE
    metrics["large_signal_train_acc_max"] = 0.9
    assert row_of("fig3_dynamics", "large_signal_train_acc", metrics).cause == expected.OURS_DIFFER
    substitute = [e for e in expected.EXPECTED["table2_finetune"] if e.key.startswith("rotten_tomatoes")]
    assert substitute and all(e.cause == expected.SUBSTITUTE and e.kind == expected.NEAREST for e in substitute)


def test_numbers_are_counted_once_and_apart_by_kind():
    fig3 = {"balanced_train_acc": 1.0, "balanced_test_acc": 0.99, "balanced_train_loss": 0.5}
    fig5 = {"balanced_train_acc": 1.0, "balanced_test_acc": 0.99}
    rows = expected.compare("fig3_dynamics", fig3) + expected.compare("fig5_heatmap", fig5)
    assert expected.counts(rows) == {expected.PAPER: (2, 2), expected.AUTHORS: (0, 1)}
    assert all(r.expected.counted_on == "fig3_dynamics" for r in expected.compare("fig5_heatmap", fig5))


def test_a_table2_row_that_cannot_test_the_claim_is_not_counted_and_says_why():
    key = "mnist_5k_noise0.2_n200_test_acc"
    metrics = {key: 0.6, "mnist_5k_tests_claim": 1.0, "mnist_5k_clean_train_acc": 1.0,
               "mnist_5k_reach_free_mean": 0.9}
    row = row_of("table2_finetune", key, metrics)
    assert row.testable and row.counted and not row.match and row.cause == expected.SUBSTITUTE
    metrics.update({"mnist_5k_tests_claim": 0.0, "mnist_5k_reach_free_mean": 0.29})
    row = row_of("table2_finetune", key, metrics)
    assert not row.counted and row.result == "not counted"
    assert row.cause.startswith(expected.NOT_TESTABLE) and "0.29 of the flipped labels" in row.cause
    assert expected.counts([row]) == {}
    metrics["mnist_5k_clean_train_acc"] = 0.8  # clean labels unfitted: that is the cause given first
    assert "does not fit even its clean labels (train accuracy 0.80" in row_of("table2_finetune", key, metrics).cause


def test_the_image_claim_is_not_testable_where_no_image_row_can_test_it():
    record = {"image_rows": 2.0, "image_rows_testing": 0.0, "image_reach_free_mean": 30.0,
              "image_flipped_fitted_mean": 25.0, "parameters": {"seeds": [42]}}
    entry = next(e for e in ledger.evaluate({"table2_finetune": record}) if e.claim.claim.startswith("The same"))
    assert entry.finding.verdict == ledger.OFFLINE and "can fit 30% of them, phase 2 fitted 25%" in entry.finding.evidence
    assert "out of reach" in entry.finding.cause
    record.update({"image_rows_testing": 1.0, "image_testing_flipped_fitted_mean": 100.0,
                   "image_testing_test_vs_base_mean": -28.0})
    entry = next(e for e in ledger.evaluate({"table2_finetune": record}) if e.claim.claim.startswith("The same"))
    assert entry.finding.verdict == ledger.PART  # fitted, but harmful


def test_every_tolerance_has_its_reason_and_every_row_a_known_kind():
    for rows in expected.EXPECTED.values():
        for e in rows:
            assert e.kind in expected.KINDS and e.tolerance in expected.TOLERANCES, e
            assert expected.TOLERANCES[e.tolerance].reason
            assert e.kind != expected.PAPER or e.where, f"{e.key}: a paper number says where the paper gives it"


def fig3_record(large_signal_noisy: tuple[int, int]) -> dict:
    record = {"parameters": {"seed": 42, "replicates": 3, "n": 20, "num_steps": 1000, "d_balanced": 2000,
                             "signal_norm_balanced": 20.0, "d_large_noise": 4500, "signal_norm_large_noise": 5.0,
                             "d_large_signal": 1000, "signal_norm_large_signal": 80.0}}
    for name, test, noisy in (("balanced", 0.99, (4, 4)), ("large_noise", 0.85, (4, 4)),
                              ("large_signal", 1.0, large_signal_noisy)):
        record.update({f"{name}_test_acc": test, f"{name}_test_acc_min": test - 0.01,
                       f"{name}_test_acc_max": test + 0.005, f"{name}_noisy_fitted": noisy[0],
                       f"{name}_noisy_fitted_min": noisy[0], f"{name}_noisy_fitted_max": noisy[1],
                       f"{name}_noisy_count": 4, f"{name}_clean_fitted_min": 16, f"{name}_clean_count": 16})
    return record


def test_the_ledger_judges_by_rules_over_the_records():
    def verdict(record, where):
        entries = ledger.evaluate({"fig3_dynamics": record})
        return next(e for e in entries if e.claim.where == where)

    assert verdict(fig3_record((0, 0)), "Figure 3(c)").finding.verdict == ledger.HOLDS
    found = verdict(fig3_record((2, 3)), "Figure 3(c)")
    assert found.finding.verdict == ledger.PART and "2 of 4 (seeds: 2–3)" in found.finding.evidence
    assert verdict(fig3_record((4, 4)), "Figure 3(c)").finding.verdict == ledger.CONTRADICTED
    assert verdict(fig3_record((0, 0)), "Figure 3(b)").finding.verdict == ledger.HOLDS  # 0.86 < 0.98 − 0.05
    entry = verdict(fig3_record((0, 0)), "Figure 3(a)")
    assert entry.finding.verdict == ledger.HOLDS and "balanced_noisy_fitted_min" in entry.keys
    assert entry.claim.test.startswith("(d, ‖μ‖) = (2000, 20.0); 3 seeds from 42")  # what this build ran
    # a claim whose numbers the profile did not compute is left out, not judged
    assert not [e for e in ledger.evaluate({"fig3_dynamics": {}}) if e.claim.page == "fig3_dynamics"]


def test_the_theorem_clock_is_not_a_miss_for_reaching_the_conditions_early():
    record = {"test_error_at_step0_share": 0.93, "benign_slope_p_only": 0.05, "benign_slope_p_only_std": 0.1,
              "parameters": {"num_steps": 50000}}
    entry = next(e for e in ledger.evaluate({"theory_clock": record}) if "τ = Θ" in e.claim.claim)
    assert entry.finding.verdict == ledger.NOT_SEEN and "reaching them earlier is no contradiction" in entry.finding.cause


def test_tables_read_without_index_none_nan_booleans_exponents_or_cut_notes():
    metrics = {"harmful_test_acc": 0.48, "benign_test_acc": 1.0, "harmful_train_acc": 1.0}
    html = pages.Comparison(expected.compare("fig1_token_selection", metrics))._repr_html_()
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert cells and not [c for c in cells if re.fullmatch(r"\s*(None|NaN|nan|True|False|\d+)\s*", c) and c != "1"]
    assert "e+0" not in html and "e-0" not in html and "…" not in html
    assert html.count("<th>") == 7 and "<th></th>" not in html  # no index column
    assert pages.number(1e-05) == "1.0e-05" and pages.number(0.4526) == "0.4526" and pages.number(1.0) == "1"
    assert pages.number(float("inf")) == "∞" and pages.cell(float("nan")) == "—" and pages.cell(True) == "yes"
    # a note shared by rows is one footnote
    html = pages.Comparison(expected.compare("eta_sweep", {"noise_ratio_0.65_test_acc": 0.9,
                                                            "noise_ratio_0.70_test_acc": 0.9}))._repr_html_()
    assert html.count("the appendix does not state n") == 1


def glued(executed: dict) -> set[str]:
    return {o["metadata"]["scrapbook"]["name"] for c in executed["cells"] for o in c.get("outputs", [])
            if "scrapbook" in o.get("metadata", {})}


def test_every_ledger_row_links_to_a_page_that_glues_what_it_quotes(built_book):
    results = built_book.parent.parent / "results"
    records = {p.parent.parent.name: json.loads(p.read_text()) for p in results.glob("*/smoke/metrics.json")}
    entries = ledger.evaluate(records)
    assert entries, "the smoke build judged no claim"
    summary = (built_book / "book" / "summary.html").read_text()
    for entry in entries:
        page = entry.claim.page
        executed = json.loads((results / page / "smoke" / f"{page}.ipynb").read_text())
        missing = set(entry.keys) - glued(executed)
        assert not missing, f"{entry.claim.where}: {page} does not glue {missing}"
        assert f'href="../notebooks/{page}.html"' in summary
    assert re.search(r"Of the \d+ claims of the two papers this build tests", summary)
    index = (built_book / "book" / "index.html").read_text()
    assert re.search(r"Of the \d+ claims of the two papers this build tests", index)


# Digits a page's prose may hold without a glue role: the kinds, in one place.
ALLOWED_NUMBERS = [
    r"(Figure|Figures|Fig\.|Table|Tables|Eq\.|Eqs\.|Section|Theorem|Theorems|Appendix|ICML|step|steps)\s+\d+(\.\d+)?",
    r"\b(19|20)\d\d(-\d\d-\d\d)?\b",  # years and dates
    r"\b\d+(\.\d+)?\s*(×|x)\s*\d+\b",  # a grid's shape, 39 × 39
    r"\b(p|d|n|T|η|α|ρ|‖μ‖|n_test|c|k)\s*=\s*[\d.]+",  # a setting named by its symbol
    r"\(\d+(\.\d+)?, \d+(\.\d+)?\)",  # a (d, ‖μ‖) setting
    r"\b[\d.]+\s*(%|GB|MB|s|min|h|px|epochs|layers|heads|tokens|M)\b",
    r"\b\d+\.\d+\.\d+\b",  # a version
]


# The papers' settings and the backbones' published sizes, quoted where a page describes them (not measured here).
SETTINGS = {"5", "15", "20", "39", "42", "80", "100", "120", "200", "300", "314", "500", "750", "1000", "1521",
            "2000", "2718", "4500", "5000", "10000", "12000", "40000", "6", "9", "12", "16", "32", "64", "128", "196",
            "197", "384", "768", "30", "0.005", "0.15", "2.5", "7.5"}


def quoted_values() -> set[str]:
    """The paper's numbers and settings, quoted where a page discusses them."""
    values = set(SETTINGS)
    for rows in expected.EXPECTED.values():
        for e in rows:
            values |= {f"{e.target:g}", f"{e.target:.1f}", f"{e.target:.2f}", f"{e.target:.3f}",
                       f"{100 * e.target:g}"}
    return values


def typed_numbers(text: str) -> list[str]:
    text = re.sub(r"\{glue:text\}`[^`]*`|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\{cite\}`[^`]*`|\([^)]*\.(md|html|png)\)|"
                  r"https?://\S+|```.*?```", " ", text, flags=re.S)
    for pattern in ALLOWED_NUMBERS:
        text = re.sub(pattern, " ", text)
    allowed = quoted_values()
    found = re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?!\w|\.\d)", text)
    return [x for x in found if x not in allowed and x not in {"0", "1", "2", "3"}]


def test_the_check_for_typed_numbers_finds_one():
    assert typed_numbers("Measured once, the ratio was 0.145 to 1.654.") == ["0.145", "1.654"]
    assert typed_numbers("at {glue:text}`x:.2f`, Figure 5, in 2025, $n = 20$, the paper's 0.867") == []


def documents() -> list:
    return [*sorted(paths.NOTEBOOKS.glob("*.py")), *sorted((paths.ROOT / "book").glob("*.md"))]


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.name)
def test_prose_types_no_measured_number(document):
    import jupytext

    text = document.read_text() if document.suffix == ".md" else "\n".join(
        c.source for c in jupytext.read(document).cells if c.cell_type == "markdown")
    assert not typed_numbers(text), f"{document.name}: numbers typed into prose (glue them): {typed_numbers(text)}"


def test_the_book_mentions_no_issue_seed_file_or_readme():
    for page in [*paths.NOTEBOOKS.glob("*.py"), *(paths.ROOT / "book").glob("*.md")]:
        text = page.read_text()
        prose = text if page.suffix == ".md" else "\n".join(
            line for line in text.splitlines() if line.startswith("# "))
        assert not re.search(r"\bissue \d+|seed notebook|\bREADME\b", prose), page.name


@pytest.mark.parametrize("profile", ["smoke", "book", "paper"])
def test_every_claims_test_names_parameters_its_notebook_has(profile):
    """A claim's test is formatted with its notebook's parameters; a name the notebook lacks would drop the claim
    from the ledger without a word (`ledger.evaluate` skips a claim whose record lacks a key)."""

    for claim in ledger.CLAIMS:
        parameters = notebooks.resolve(claim.page, profile)
        text = claim.test.format(p=parameters)
        assert "{" not in text and text.strip(), claim.claim
