"""Build the Jupyter Book at one profile: run every notebook, then render what they produced.

1. Every notebook of the table of contents runs headless through `benign run` (papermill) at the profile, in
   table-of-contents order, into results/<notebook>/<profile>/ (executed .ipynb, metrics.json, figures). A failing
   notebook stops the build; its executed copy is kept in _build/reports/.
2. The sources are staged into _build/stage/<profile>/ with the executed notebooks in place of the .py files
   (papermill's injected-parameters cell hidden on the page, kept in the downloads), the package's source (the
   book shows its core recursion), and three pages generated from the runs' records: the paper-vs-here summary,
   reproducibility (versions, seeds, device, wall times) and downloads (figures as PNG/PDF, notebooks as .ipynb).
3. Jupyter Book renders the staged tree strictly: any warning (a broken cross-reference, a missing file) fails.
   MathJax is served from the book itself (sphinx-mathjax-offline), so formulas typeset with no network.

This module is also the Sphinx extension that refuses to render anything but a staged tree: `jupyter-book build .`
by hand would render notebooks nobody ran, so it stops with a message pointing to `make book`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from . import expected, notebooks
from .checks import ParameterError
from .notebooks import NotebookFailed
from .paths import BOOK_BUILD, ROOT, results_dir

SOURCES = ("_config.yml", "_toc.yml", "references.bib", "book", "benign")
GENERATED = ("summary", "reproducibility", "downloads")  # book/<page>.md, written from the runs' records


def toc_notebooks() -> list[str]:
    """The notebooks in table-of-contents order."""
    toc = (ROOT / "_toc.yml").read_text()
    files = [line.split("file:")[1].strip() for line in toc.splitlines() if "file:" in line]
    return [f.split("/", 1)[1] for f in files if f.startswith("notebooks/")]


def run_all(profile_name: str, reports: Path) -> dict[str, dict]:
    """Run every notebook at the profile, printing `[k/N] name  wall s` as each finishes; their metrics.json
    records by name."""
    records = {}
    names = toc_notebooks()
    for k, name in enumerate(names, 1):
        started = time.perf_counter()
        try:
            out = notebooks.run(name, profile_name, out=results_dir(name, profile_name))
        except NotebookFailed as err:
            reports.mkdir(parents=True, exist_ok=True)
            kept = reports / f"{name}.ipynb"
            shutil.copy2(err.executed, kept)
            raise RuntimeError(f"{err} — report: {kept}") from None
        records[name] = json.loads((out / "metrics.json").read_text())
        print(f"[{k}/{len(names)}] {name}  {time.perf_counter() - started:.1f} s", flush=True)
    return records


def stage(profile_name: str, records: dict[str, dict]) -> Path:
    """The book's sources with executed notebooks and the generated pages; returns the staged folder."""
    if profile_name not in notebooks.PROFILE_NAMES:
        raise ParameterError(f"unknown profile {profile_name!r}: use one of {', '.join(notebooks.PROFILE_NAMES)}")
    target = BOOK_BUILD / "stage" / profile_name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, target / name)
    config = yaml.safe_load((target / "_config.yml").read_text())
    config["sphinx"]["config"]["benign_staged"] = True  # see `setup`
    (target / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    (target / "notebooks").mkdir()
    for name in records:
        results = results_dir(name, profile_name)
        page = json.loads((results / f"{name}.ipynb").read_text())
        (target / "notebooks" / f"{name}.ipynb").write_text(json.dumps(hide_injected_parameters(page)))
        shutil.copytree(results, target / "downloads" / name, ignore=shutil.ignore_patterns(".*"))
    pages = {"summary": summary_page(records), "reproducibility": reproducibility_page(records, profile_name),
             "downloads": downloads_page(records, profile_name)}
    for page, text in pages.items():
        (target / "book" / f"{page}.md").write_text(text)
    return target


def hide_injected_parameters(notebook: dict) -> dict:
    """The executed notebook with papermill's "injected-parameters" cell tagged remove-cell: the page shows the
    parameters cell once, and no machine path (the cell holds out_dir)."""
    for cell in notebook["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell["metadata"]["tags"] = [*tags, "remove-cell"]
    return notebook


def setup(app):
    """The Sphinx extension (named in _config.yml): only a tree staged by `benign book` may be rendered."""
    app.add_config_value("benign_staged", False, "env")
    app.connect("config-inited", _require_staged)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def _require_staged(app, config) -> None:
    if not config.benign_staged:
        from sphinx.errors import ConfigError

        raise ConfigError("build the book with `make book` (benign book): it executes every notebook with papermill "
                          "and then renders the executed copies; `jupyter-book build` on the sources would render "
                          "notebooks that never ran")


def summary_page(records: dict[str, dict]) -> str:
    head = ["# Paper vs here, all figures", "",
            "Every row of every notebook's paper-vs-here table, gathered from this build's runs. *paper*: the number",
            "the paper reports; *authors' code*: a transcription of the authors' published script (`benign.authors`:",
            "their final version, commit c563aae, or the January one of main_math_frak.py, which the final one lacks)",
            "run by the notebook at the paper's stated setting (— where it was not run); *here*: ours. *match*:",
            "within the stated tolerance of the paper's number; *miss*: outside it, with its cause; rows a profile",
            "does not compute are left out.", ""]
    lines, total, hits = [], 0, 0
    causes = dict.fromkeys((*expected.CAUSES, expected.UNEXAMINED), 0)
    for name, record in records.items():
        if name not in expected.PAPER:
            continue
        table = expected.compare(name, record)
        lines += [f"## {notebooks.title(name)}", "", f"{{doc}}`../notebooks/{name}`", "",
                  "| quantity | paper | authors' code | here | tolerance | result | cause | note |",
                  "|---|---|---|---|---|---|---|---|"]
        for row in table.itertuples():
            if row.here is None:
                continue  # not computed at this profile
            result = "—" if row.match is None else ("match" if row.match else "**miss**")
            authors = "—" if row.authors is None or row.authors != row.authors else f"{row.authors:.4g}"
            lines.append(f"| {row.quantity} | {row.paper:g} | {authors} | {row.here:.4g} | ±{row.tolerance:g} | "
                         f"{result} | {row.cause} | {row.note} |")
            total += row.match is not None
            hits += bool(row.match)
            if row.match is False:
                causes[row.cause] += 1
        lines.append("")
    counts = "; ".join(f"{count} {cause}" for cause, count in causes.items() if count)
    head += [f"**{hits} of {total}** compared numbers match.", "", f"Misses by cause: {counts or 'none'}.", ""]
    return "\n".join(head + lines) + "\n"


def reproducibility_page(records: dict[str, dict], profile_name: str) -> str:
    lines = ["# Reproducibility", "",
             f"Generated from the `metrics.json` records of this build (profile `{profile_name}`). Each notebook's",
             "record also holds every parameter; rerun any row with `benign run NOTEBOOK --profile PROFILE`.", "",
             "| notebook | wall time (s) | device | seed | git commit | created (UTC) |", "|---|---|---|---|---|---|"]
    for name, record in records.items():
        seed = record.get("parameters", {}).get("seed", "—")
        commit = (record.get("git_commit") or "—")[:10]
        lines.append(f"| {name} | {record.get('wall_s', '—')} | {record.get('device', '—')} | {seed} | {commit} | "
                     f"{record.get('created', '—')} |")
    versions = next(iter(records.values()), {}).get("versions", {})
    lines += ["", "## Package versions", "", "| package | version |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in versions.items()]
    lines += ["", "Where and why the companion deliberately differs from the authors' code: {doc}`differences`.", ""]
    return "\n".join(lines) + "\n"


def downloads_page(records: dict[str, dict], profile_name: str) -> str:
    lines = ["# Downloads", "", "Every figure of this build as PNG and PDF, every executed notebook, and its record.",
             ""]
    for name in records:
        files = sorted(p.name for p in results_dir(name, profile_name).iterdir() if not p.name.startswith("."))
        lines += [f"## {notebooks.title(name)}", ""]
        lines += [f"- {{download}}`{f} <../downloads/{name}/{f}>`" for f in files]
        lines.append("")
    return "\n".join(lines) + "\n"


def build(profile_name: str = "book", output: Path | None = None) -> Path:
    """Run, stage and render; returns the folder holding html/ (default: the repository's _build/)."""
    output = Path(output) if output else ROOT
    records = run_all(profile_name, output / "_build" / "reports")
    staged = stage(profile_name, records)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(staged), "--path-output", str(output),
           "-W", "-n", "--keep-going"]
    done = subprocess.run(cmd)
    if done.returncode != 0:
        raise RuntimeError(f"the book build failed (exit {done.returncode}): see the warnings above")
    return output / "_build"
