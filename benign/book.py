"""Build the Jupyter Book at one profile: run every notebook, then render what they produced.

1. Every notebook of the table of contents runs headless (papermill) at the profile, in a process of its own and
   several side by side (`run_all`), into results/<notebook>/<profile>/ (executed .ipynb, metrics.json, figures).
   A failing notebook stops the build; its executed copy and its output are kept in _build/reports/.
2. The sources are staged into _build/stage/<profile>/ with the executed notebooks in place of the .py files
   (papermill's injected-parameters cell hidden on the page, kept in the downloads), the package's source (the
   book shows its core recursion), and four pages generated from records: the paper-vs-here summary,
   reproducibility (versions, seeds, device, wall times, Table 2's time by part), downloads (figures as PNG/PDF,
   notebooks as .ipynb) and speed (the benchmarks' own records, `benign.speed`);
   the landing page's verdict counts and matrix are substituted into it from the same records.
3. Jupyter Book renders the staged tree strictly: any warning (a broken cross-reference, a missing file) fails.
   MathJax is served from the book itself (sphinx-mathjax-offline), so formulas typeset with no network.

This module is also the Sphinx extension that refuses to render anything but a staged tree: `jupyter-book build .`
by hand would render notebooks nobody ran, so it stops with a message pointing to `make book`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

import yaml

from . import notebooks, paths, speed, thresholds
from .pages import Judged, claim_said, landing, numbers_said, summary_page, verdicts_said
from .notebooks import NotebookFailed
from .paths import BOOK_BUILD, RESULTS_ENV, ROOT, ROOT_ENV, results_dir
from .records import COMMIT_FILE, FIGURE_KEY, check_writable, git_commit
from .settings import check_profile
from .words import minus, setting

SOURCES = ("_config.yml", "_toc.yml", "references.bib", "book", "benign")
GENERATED = ("summary", "reproducibility", "downloads", "speed")  # book/<page>.md, written from the records


def toc_files() -> list[str]:
    """Every file of the table of contents (_toc.yml, read as yaml), in its order: the root, then each part's
    chapters and their sections."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())

    def files(entries: list[dict]) -> list[str]:
        return [f for e in entries for f in ([e["file"]] if "file" in e else []) + files(e.get("sections", []))]

    return [toc["root"]] + [f for part in toc.get("parts", []) for f in files(part.get("chapters", []))]


def toc_notebooks() -> list[str]:
    """The notebooks in table-of-contents order."""
    return [f.split("/", 1)[1] for f in toc_files() if f.startswith("notebooks/")]


FIRST = ("table2_finetune", "fig3_dynamics")  # the heads of the book's longest chains (table2 then backbone_reach,
# fig3 then fig5: 16.7 and 9.0 of the 25.9 min of the 2026-11-24 build), started before the rest


def start_order() -> list[str]:
    """The order the build starts notebooks in: `FIRST`, then the rest in table-of-contents order."""
    names = toc_notebooks()
    return [n for n in FIRST if n in names] + [n for n in names if n not in FIRST]


AFTER = {  # a notebook that reuses another's cached runs starts after it, so no run is computed twice
    "fig5_heatmap": "fig3_dynamics",  # the authors' script at the cells both pages check
    "fig7_one_layer_heatmap": "fig6_one_layer_dynamics",  # the authors' one-layer script at the cells both check
    "fig8_finetune_attention": "table2_finetune",  # Table 2's runs, read back from their cache
    "backbone_reach": "table2_finetune",  # Table 2's text rows and its default backbone's runs
}


def run_all(profile_name: str, reports: Path, jobs: int = 0) -> dict[str, dict]:
    """Run every notebook at the profile, `jobs` side by side (0: one per core, at most 4), each in a process of its
    own, in `start_order` except that a notebook waits for the one whose runs it reuses (`AFTER`). Each
    block of work takes the cores free of the others (`benign.device`): two notebooks side by side run a thread each,
    one alone runs on both cores. Prints `[k/N] name  wall s` as each finishes; returns their metrics.json records by
    name. A failing notebook stops the build once the running ones end; its executed copy is kept in `reports`.
    Ctrl-C is passed to the running notebooks once; they stop within a second or two, keeping what finished (sweep
    chunks, fine-tuning runs), and `notebooks.Interrupted` says how many notebooks had finished."""
    names = toc_notebooks()
    jobs = jobs or min(4, len(os.sched_getaffinity(0)))
    pending, running, records, failures = start_order(), {}, {}, []
    children: dict[str, subprocess.Popen] = {}
    with ThreadPoolExecutor(jobs) as pool:
        try:
            while running or (pending and not failures):
                ready = [n for n in pending if AFTER.get(n) not in names or AFTER[n] in records]
                for name in ready[:jobs - len(running)] if not failures else []:
                    pending.remove(name)
                    future = pool.submit(run_in_process, name, profile_name, reports, children)
                    running[future] = name, time.perf_counter()
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    name, started = running.pop(future)
                    error = future.result()
                    if error:
                        failures.append(error)
                        continue
                    records[name] = json.loads((results_dir(name, profile_name) / "metrics.json").read_text())
                    print(f"[{len(records)}/{len(names)}] {name}  {time.perf_counter() - started:.1f} s", flush=True)
        except KeyboardInterrupt:
            interrupt(children, running)
            raise notebooks.Interrupted(f"interrupted the book build: {len(records)} of {len(names)} notebooks had "
                                        "finished; rerun the same command to resume (finished sweep chunks and "
                                        "fine-tuning runs are cached)") from None
    if failures:
        raise RuntimeError("; ".join(failures))
    return {name: records[name] for name in names}


def interrupt(children: dict, running) -> None:
    """Pass Ctrl-C to the running notebooks' processes (each stops its kernel, keeps what finished and removes its
    temporary folder) and wait for them; a further Ctrl-C is passed on too (a notebook's second stops it at once)."""
    while True:
        for child in list(children.values()):
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGINT)
        try:
            wait(running)
            return
        except KeyboardInterrupt:
            continue


def check(profile_name: str) -> None:
    """Every notebook's settings at the profile (every value checked), before anything runs: a bad profile is one
    line, not one failure per notebook."""
    for name in toc_notebooks():
        notebooks.resolve(name, profile_name)


def run_in_process(name: str, profile_name: str, reports: Path, children: dict | None = None) -> str:
    """`run_one` in a Python process of its own (in a session of its own: Ctrl-C reaches it through `run_all`
    only, once), listed in `children` while it runs; its output goes to reports/NAME.log. The error, or ''."""
    reports.mkdir(parents=True, exist_ok=True)
    log = reports / f"{name}.log"
    children = {} if children is None else children
    with open(log, "w") as out:
        child = subprocess.Popen([sys.executable, "-m", "benign.book", name, profile_name, str(reports)], stdout=out,
                                 stderr=subprocess.STDOUT,
                                 env={**os.environ, RESULTS_ENV: str(paths.RESULTS), ROOT_ENV: str(ROOT)},
                                 start_new_session=True)
        children[name] = child
        try:
            code = child.wait()
        finally:
            children.pop(name, None)
    if code == 0:
        return ""
    lines = log.read_text().strip().splitlines()
    return f"{name}: {lines[-1] if lines else f'exit {code}'} (log: {log})"


def run_one(name: str, profile_name: str, reports: Path) -> None:
    """Run one notebook at the profile into results/NAME/PROFILE; when it fails, keep its executed copy in
    `reports` and raise."""
    try:
        notebooks.run(name, profile_name, out=results_dir(name, profile_name), progress=False)
    except NotebookFailed as err:
        kept = Path(reports) / f"{name}.ipynb"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(err.executed, kept)
        raise RuntimeError(f"{err} — report: {kept}") from None


def stage(profile_name: str, records: dict[str, dict]) -> Path:
    """The book's sources with executed notebooks and the generated pages; returns the staged folder."""
    target = BOOK_BUILD / "stage" / check_profile(profile_name)
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
    url = (config.get("repository") or {}).get("url")
    judged = Judged.of(records)  # the ledger and the comparison rows, once for the landing and summary pages
    titles = {name: notebooks.title(name) for name in records}
    config["parse"]["myst_substitutions"] = {
        "ledger_verdicts": verdicts_said(judged.entries),  # the landing page's verdict counts,
        "ledger_matrix": landing(judged, titles),  # its verdict matrix, before any figure,
        "ledger_numbers": numbers_said(judged),  # and its compared numbers; the two-papers page quotes one verdict
        "paper2_edge_verdict": claim_said(judged.entries, "paper2_snr_heatmap", "Theorems (SNR threshold)"),
        "paper2_above_band": records.get("paper2_snr_heatmap", {}).get(  # and the SNR map's reading above its band
            "above_band_words", "The SNR map did not run in this build."),
        "speed_said": speed.said(),  # and the landing page how many benchmark records this build has
        **harm_thresholds(),  # the model page's harm thresholds, synthetic and real-data
        "project_source": f"<{url}>" if url else "the archive on the {doc}`downloads` page, built with it"}
    (target / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    (target / "notebooks").mkdir()
    for name in records:
        results = results_dir(name, profile_name)
        page = json.loads((results / f"{name}.ipynb").read_text())
        page = fold_code(link_figures(hide_injected_parameters(page)))
        (target / "notebooks" / f"{name}.ipynb").write_text(json.dumps(page))
        folder = target / "downloads" / name
        shutil.copytree(results, folder, ignore=shutil.ignore_patterns(".*"))
        (folder / "metrics.json").rename(folder / download_name(name, "metrics.json"))
    source_archive(target / "downloads")
    write_engine_script(target / "book" / "_static" / "explore")
    pages = {"summary": summary_page(judged, titles), "reproducibility": reproducibility_page(records, profile_name),
             "downloads": downloads_page(records, profile_name), "speed": speed.page()}
    for page, text in pages.items():
        (target / "book" / f"{page}.md").write_text(text)
    return target


def harm_thresholds() -> dict[str, str]:
    """The two harm thresholds as the model page says them, from `thresholds`: a synthetic page's share of test
    accuracy, a real-data page's points and the same as a share."""
    real = thresholds.REAL_COST.value
    return {"harm_threshold": f"{thresholds.HARM.value:g}", "real_cost_points": f"{real:g}",
            "real_cost_threshold": f"{real / 100:g}"}


def write_engine_script(folder: Path) -> Path:
    """The explorable's engine (the ES module engine.mjs) as a classic script the page can load from file://, where
    module scripts and module workers are refused: it sets `BENIGN_ENGINE_SOURCE` to the module's text, which the
    page runs in a Web Worker with its "export " keywords removed. Written into the staged book, never committed."""
    source = (folder / "engine.mjs").read_text()
    target = folder / "engine-source.js"
    target.write_text(f"// generated by benign book from engine.mjs\nvar BENIGN_ENGINE_SOURCE = {json.dumps(source)};\n")
    return target


def hide_injected_parameters(notebook: dict) -> dict:
    """The executed notebook with papermill's "injected-parameters" cell tagged remove-cell: the page shows the
    parameters cell once, and no machine path (the cell holds out_dir)."""
    for cell in notebook["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell["metadata"]["tags"] = [*tags, "remove-cell"]
    return notebook


def fold_code(notebook: dict) -> dict:
    """Every code cell's input folded behind a toggle (tag hide-input), its outputs shown: a page reads as its
    argument, and the computation is one click away."""
    for cell in notebook["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code" and not any(t.startswith(("remove-", "hide-")) for t in tags):
            cell.setdefault("metadata", {})["tags"] = [*tags, "hide-input"]
    return notebook


def link_figures(notebook: dict) -> dict:
    """Each figure a notebook showed with `Notebook.save_figure` (an output marked FIGURE_KEY) becomes its saved PNG
    from the page's downloads at the column's width, a click on it opening the full-size PNG, with links to the PNG
    and the PDF below it (Sphinx copies both into the built book, so they open offline and from file:// too). A
    figure with a phone version (its panels in one column) shows both, classed benign-figure-wide and benign-figure-phone: the
    book's style sheet shows one of them by the window's width."""
    for cell in notebook["cells"]:
        for k, output in enumerate(cell.get("outputs", [])):
            figure = output.get("metadata", {}).get(FIGURE_KEY)
            if not figure:
                continue
            where = f"../downloads/{figure['notebook']}/{figure['name']}"
            alt = f"{notebooks.title(figure['notebook'])}: {figure.get('alt') or 'figure'}"
            shown = {where: "benign-figure"} if not figure.get("phone") else {
                where: "benign-figure benign-figure-wide", f"{where}.phone": "benign-figure benign-figure-phone"}
            markdown = "".join(f"```{{image}} {png}.png\n:alt: {alt}\n:width: 100%\n:class: {classes}\n```\n\n"
                               for png, classes in shown.items())
            markdown += f"Full size: {{download}}`PNG <{where}.png>` · {{download}}`PDF <{where}.pdf>`\n"
            cell["outputs"][k] = {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": markdown}}
    return notebook


def setup(app):
    """The Sphinx extension (named in _config.yml): only a tree staged by `benign book` may be rendered."""
    app.add_config_value("benign_staged", False, "env")
    app.connect("config-inited", _require_staged)
    app.connect("doctree-read", _true_minus)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def _true_minus(app, doctree) -> None:
    """A number glued with a format spec (`{glue:text}` with `key:+.3f`) comes out of Python's `format` with the
    hyphen: every pasted text gets the true minus sign and loses the sign of a zero (`words.minus`)."""
    from docutils import nodes

    for node in doctree.findall(nodes.inline):
        if "pasted-text" in node["classes"] and len(node.children) == 1 and isinstance(node[0], nodes.Text):
            node[0] = nodes.Text(minus(node[0].astext()))


def _require_staged(app, config) -> None:
    if not config.benign_staged:
        from sphinx.errors import ConfigError

        raise ConfigError("build the book with `make book` (benign book): it executes every notebook with papermill "
                          "and then renders the executed copies; `jupyter-book build` on the sources would render "
                          "notebooks that never ran")


def threads_said(record: dict) -> str:
    """A record's blocks of work as the reproducibility page says them: `n×k` per thread count k, then the worker
    processes its runs are given (Table 2's rows; none start for runs the cache holds); a sweep read whole from the
    cache says so."""
    said = ", ".join(f"{n}×{k}" for k, n in record.get("blocks_by_threads", {}).items())
    if not said:
        said = ("nothing computed: every sweep chunk read from the cache" if record.get("computed_chunks") == 0 else
                "no trainer call or sweep chunk")
    processes = record.get("parameters", {}).get("processes", 1)
    return said + (f"; runs not in the cache: {processes} worker processes" if processes and processes > 1 else "")


def reproducibility_page(records: dict[str, dict], profile_name: str) -> str:
    lines = ["# Reproducibility", "",
             f"Generated from the `metrics.json` records of this build (profile `{profile_name}`). Each notebook's",
             "record also holds every parameter; rerun any row with `benign run NOTEBOOK --profile PROFILE`.", "",
             "CPU threads: *free cores* (the thread policy of `benign.device`: each block of work takes the cores free",
             "of other work when it starts, at most the cores given) or *fixed N*, then `n×k` for n blocks of work",
             "(trainer calls, sweep chunks) computed on k threads.",
             "The wall time is this build's: a notebook whose sweeps or runs came from the cache shows the time to read",
             "them back and draw the page, not to compute them.",
             "", "| notebook | wall time (s) | device | CPU threads | seeds | git commit | created (UTC) |",
             "|---|---|---|---|---|---|---|"]
    for name, record in records.items():
        seed = seeds_said(record.get("parameters", {}))
        commit = (record.get("git_commit") or "—")[:10]
        blocks = threads_said(record)
        created = str(record.get("created", "—"))[:16].replace("T", " ").replace("-", "\u2011")  # never broken there
        wall = f"{record['wall_s']:.1f}" if isinstance(record.get("wall_s"), (int, float)) else "—"  # to a tenth
        lines.append(f"| `{name}` | {wall} | {record.get('device', '—')} | "
                     f"{record.get('thread_policy', '—')}: {blocks} | "
                     f"{seed} | {commit} | {created} |")
    lines += time_split_section(records.get("table2_finetune", {}).get("time_split", []))
    versions = next(iter(records.values()), {}).get("versions", {})
    lines += ["", "## Package versions", "", "| package | version |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in versions.items()]
    lines += ["", "Where and why the companion deliberately differs from the authors' code: {doc}`differences`.", ""]
    return "\n".join(lines) + "\n"


def seeds_said(parameters: dict) -> str:
    """The seeds a notebook's runs used, from its parameters: its list of seeds, or its first seed and how many runs
    follow it (`outcome_draws` data draws, else `replicates` or `num_seeds` runs: seeds seed, seed + 1, …), or the
    Table-2 profile whose runs it reads."""
    if "seeds" in parameters:
        return setting("seeds", parameters["seeds"])
    if "table2_profile" in parameters:
        return f"Table 2's ({parameters['table2_profile']} profile)"
    if "seed" not in parameters:
        return "—"
    runs = next((parameters[k] for k in ("outcome_draws", "replicates", "num_seeds") if k in parameters), 1)
    seed = parameters["seed"]
    return str(seed) if runs == 1 else f"{seed} to {seed + runs - 1}"


def time_split_section(split: list[dict]) -> list[str]:
    """Table 2's time by data set and part, as its runs' records give it (`realdata.report.time_split`)."""
    if not split:
        return []
    lines = ["", "## Where Table 2's time goes", "",
             "Wall seconds of the process that computed each part (one thread each at the book profile; cached runs",
             "keep the time of the build that computed them), with the counted work and the rate it ran at. The rows",
             "ran side by side in worker processes, one per core, so the parts add up to more than the notebook's",
             "wall time in the table above;",
             "`benchmarks/table2_profile.py` measures the same split from empty caches, beside the least time this",
             "machine's rate of matrix products allows for the counted work.",
             "",
             "| data set | part | time (s) | counted work (GFLOP) | rate (GFLOP/s) |", "|---|---|---|---|---|"]
    for row in split:
        cells = [f"{row[k]:.1f}" if isinstance(row[k], float) and row[k] == row[k] else "—"
                 for k in ("time (s)", "counted work (GFLOP)", "rate (GFLOP/s)")]
        lines.append(f"| {row['data set']} | {row['part']} | " + " | ".join(cells) + " |")
    return lines


PROJECT = ("README.md", "CONTRIBUTING.md", "Makefile", "pyproject.toml", "constraints.txt", "_config.yml", "_toc.yml",
           "references.bib", "benign", "notebooks", "book", "tests", "benchmarks")  # what the source archive holds


def source_archive(folder: Path) -> Path:
    """The project this book was built from (package, notebooks, tests), as one archive: the downloaded notebooks
    import `benign`, which holds their settings and presets."""
    import tarfile

    from . import __version__

    archive = folder / f"benign-{__version__}.tar.gz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    root = f"benign-{__version__}"
    commit = (git_commit() or "").encode()
    with tarfile.open(archive, "w:gz") as tar:
        for name in PROJECT:
            tar.add(ROOT / name, arcname=f"{root}/{name}",
                    filter=lambda info: None if "__pycache__" in info.name else info)
        if commit:  # the runs of an unpacked archive record it (`records.git_commit`)
            info = tarfile.TarInfo(f"{root}/{COMMIT_FILE}")
            info.size, info.mtime, info.mode = len(commit) + 1, int(time.time()), 0o644
            tar.addfile(info, io.BytesIO(commit + b"\n"))
    return archive


def download_name(notebook: str, file: str) -> str:
    """A result file's name among the downloads: the record named by its notebook (`fig3_dynamics.metrics.json`, so
    that thirteen downloaded records are not thirteen `metrics.json`), every other file as saved (it carries the
    notebook's or the figure's name already)."""
    return f"{notebook}.{file}" if file == "metrics.json" else file


def downloads_page(records: dict[str, dict], profile_name: str) -> str:
    from . import __version__

    commit = (next(iter(records.values()), {}).get("git_commit") or "unknown")[:10]
    archive = f"benign-{__version__}.tar.gz"
    lines = ["# Downloads", "", "Every figure of this build as PNG and PDF, every executed notebook, and its record.",
             "", "## The package", "",
             f"The notebooks import `benign`. {{download}}`{archive} <../downloads/{archive}>` is the project this book "
             f"was built from (commit `{commit}`): the package, the notebooks, the tests. To rerun a "
             "downloaded notebook:", "",
             "```bash", f"tar xzf {archive} && cd benign-{__version__}",
             "python3 -m venv .venv   # Python 3.11+",
             "# where there is no GPU, torch's CPU build first (the public index gives Linux the CUDA build):",
             ".venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
             ".venv/bin/pip install -c constraints.txt -e '.[book]'   # the trainers and the notebooks' stack",
             ".venv/bin/papermill ~/Downloads/fig3_dynamics.ipynb out.ipynb -p seed 7 -p out_dir runs/fig3-seed7",
             ".venv/bin/benign run fig3_dynamics --profile book -p seed 7   # the same, from the notebook's source",
             "```", "", "The core install (`pip install -e .`) is the trainers alone; the extras add the notebooks' "
             "stack (`book`), the real-data notebooks (`realdata`: Table 2, Figures 8/9, the backbone study, with "
             "`make venv`'s offline assets), sweeps on a dask cluster (`cluster`) and the tests (`test`); `all` is "
             "everything, what `make venv` installs with the tested versions pinned. `make book` and `make test` work "
             "in that folder as in a clone. The papers and the authors' repository are linked from "
             "{doc}`references`.", ""]
    for name in records:
        files = sorted(download_name(name, p.name) for p in results_dir(name, profile_name).iterdir()
                       if not p.name.startswith("."))
        lines += [f"## {notebooks.title(name)}", ""]
        lines += [f"- {{download}}`{f} <../downloads/{name}/{f}>`" for f in files]
        lines.append("")
    return "\n".join(lines) + "\n"


def build(profile_name: str = "book", output: Path | None = None, jobs: int = 0) -> Path:
    """Run (`jobs` notebooks side by side, 0: one per core, at most 4), stage and render; returns the folder
    holding html/ (default: the repository's _build/)."""
    output = Path(output) if output else ROOT
    check(profile_name)  # before anything is written or run
    check_writable(output / "_build", "--output")
    records = run_all(profile_name, output / "_build" / "reports", jobs)
    staged = stage(profile_name, records)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(staged), "--path-output", str(output),
           "-W", "-n", "--keep-going"]
    done = subprocess.run(cmd, start_new_session=True)  # Ctrl-C: killed by this process, no traceback of its own
    if done.returncode != 0:
        raise RuntimeError(f"the book build failed (exit {done.returncode}): see the warnings above")
    return output / "_build"


if __name__ == "__main__":  # one notebook of a build, in a process of its own (`run_all`)
    try:
        run_one(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
    except RuntimeError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt as err:
        print(err or "interrupted", file=sys.stderr)
        sys.exit(130)
