"""Every notebook follows the "Add a figure" checklist in CONTRIBUTING.md, so a newcomer can copy any of them."""

import ast

import pytest

from benign import book, checks, expected, ledger, notebooks, settings


@pytest.mark.parametrize("name", notebooks.names())
def test_every_notebook_follows_the_add_a_figure_checklist(name):
    import jupytext

    cells = jupytext.read(notebooks.path(name)).cells
    # 1. a title and the claim the figure supports come first
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ") and "**Claim" in cells[0].source
    # 2. one parameters cell naming the profile and the overrides of the notebook's settings type, and out_dir
    cell = next(c for c in cells if "parameters" in c.metadata.get("tags", []))
    assignments = ast.parse(cell.source).body
    assert [node.targets[0].id for node in assignments] == ["profile", "overrides", "out_dir"]
    assert [ast.literal_eval(node.value) for node in assignments] == ["book", {}, ""]
    assert all("  # " in line for line in cell.source.splitlines()), cell.source
    assert f"benign.settings.{settings.SETTINGS[name].__name__}" in cell.source
    # 3. the shared preamble, with the notebook's own name, in the cell after the parameters
    following = cells[cells.index(cell) + 1].source
    assert f'nb = notebooks.start("{name}", globals())' in following
    source = notebooks.path(name).read_text()
    assert source.count("notebooks.start(") == 1 and "nb.save_metrics(" in source and "nb.save_figure(" in source
    assert source.rstrip().endswith("nb.compare(metrics)") or "nb.compare(metrics)" in cells[-1].source
    # 2. presets for smoke and paper, every name a setting
    kind = settings.SETTINGS[name]
    assert set(kind.PRESETS) == {"smoke", "paper"}
    for overrides in kind.PRESETS.values():
        assert set(overrides) <= set(notebooks.defaults(name))
    # 4. every setting with a range has a rule
    for pname, default in notebooks.defaults(name).items():
        if isinstance(default, (int, float, list)) and not isinstance(default, bool):
            assert checks.rule_for(pname) is not None, f"{name}: {pname} has no rule in benign/checks.py"
    # 5. what the page is judged by: numbers it compares or claims of the ledger, and 6. a place in the contents
    assert name in expected.EXPECTED or any(claim.page == name for claim in ledger.CLAIMS)
    assert name in book.toc_notebooks()
