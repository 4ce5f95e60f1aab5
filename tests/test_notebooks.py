"""Every notebook follows the "Add a figure" checklist in CONTRIBUTING.md, so a newcomer can copy any of them."""

import ast

import pytest
import yaml

from benign import book, checks, expected, ledger, notebooks, paths


@pytest.mark.parametrize("name", notebooks.names())
def test_every_notebook_follows_the_add_a_figure_checklist(name):
    import jupytext

    cells = jupytext.read(notebooks.path(name)).cells
    # 1. a title and the claim the figure supports come first
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ") and "**Claim" in cells[0].source
    # 2. one parameters cell of plain literals, each with a comment saying what it is, out_dir last
    _, cell = notebooks._parameter_cell(name)
    assignments = ast.parse(cell.source).body
    assert all(isinstance(node, ast.Assign) for node in assignments)
    assert list(notebooks.defaults(name))[-1] == "out_dir"
    lines = [line for line in cell.source.splitlines() if "=" in line and not line.startswith("#")]
    assert all("  # " in line for line in lines), [line for line in lines if "  # " not in line]
    # 3. the shared preamble, with the notebook's own name, in the cell after the parameters
    following = cells[cells.index(next(c for c in cells if c.source == cell.source)) + 1].source
    assert f'nb = notebooks.start("{name}", globals())' in following
    source = notebooks.path(name).read_text()
    assert source.count("notebooks.start(") == 1 and "nb.save_metrics(" in source and "nb.save_figure(" in source
    assert source.rstrip().endswith("nb.compare(metrics)") or "nb.compare(metrics)" in cells[-1].source
    # 4. a profile file with smoke and paper overrides, every name a parameter (or `profiles_of: OTHER`, sharing
    #    the profiles of a notebook with the same parameters)
    profile = yaml.safe_load((paths.PROFILES / f"{name}.yml").read_text())
    if set(profile) == {"profiles_of"}:
        assert notebooks.defaults(profile["profiles_of"]) == notebooks.defaults(name)
        profile = yaml.safe_load((paths.PROFILES / f"{profile['profiles_of']}.yml").read_text())
    assert set(profile) == {"smoke", "paper"}
    for overrides in profile.values():
        assert set(overrides or {}) <= set(notebooks.defaults(name))
    # 5. every parameter with a range has a rule
    for pname, default in notebooks.defaults(name).items():
        if isinstance(default, (int, float, list)) and not isinstance(default, bool):
            assert checks.rule_for(pname) is not None, f"{name}: {pname} has no rule in benign/checks.py"
    # 6. what the page is judged by: numbers it compares or claims of the ledger, and 7. a place in the contents
    assert name in expected.EXPECTED or any(claim.page == name for claim in ledger.CLAIMS)
    assert name in book.toc_notebooks()
