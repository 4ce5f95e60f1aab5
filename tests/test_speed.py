"""The benchmarks' records and the Speed page built from them; the README a newcomer reads: short, no measured
number, its layout the package's real import levels."""

import ast
import json
import os
import re
import shlex
import sys

import pytest

from benign import paths, records, speed
from test_ledger import typed_numbers
from test_package import imports, modules


@pytest.fixture
def results(tmp_path, monkeypatch):
    """A results folder of the test's own."""
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    return tmp_path


def test_a_record_holds_the_command_commit_machine_date_lines_and_ratio(results):
    path = speed.write("demo", ["config: d=2000", "fast: 0.2 s", "ratio 183.5", ""], load_before=0.5)
    assert path == results / "benchmarks" / "demo.json"
    record = json.loads(path.read_text())
    assert record["lines"] == ["config: d=2000", "fast: 0.2 s", "ratio 183.5"]
    assert record["ratio"] == 183.5
    assert record["git_commit"] == records.git_commit()
    assert record["local_changes"] in (True, False, None)
    assert record["command"] == speed.command() and shlex.split(record["command"])[2:] == sys.argv[1:]
    assert {"cpu", "cores", "cores_given", "load_1min_after"} <= set(record["machine"])
    assert record["machine"]["load_1min_before"] == 0.5 and record["machine"]["cores"] == os.cpu_count()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", record["date"])
    assert speed.read("demo") == record


def test_the_ratio_is_the_last_ratio_line_or_none():
    assert speed.RATIO.match("  ratio 2.45").group(1) == "2.45"
    assert not speed.RATIO.match("the ratio of the two")


def test_a_record_without_a_ratio_line_has_none(results):
    speed.write("demo", ["ran, no ratio printed"])
    assert speed.read("demo")["ratio"] is None


def test_recorded_prints_as_usual_and_saves_only_a_finished_run(results, capsys):
    with speed.recorded("demo"):
        print("fast: 0.2 s")
        print("ratio 7.0")
    assert capsys.readouterr().out == "fast: 0.2 s\nratio 7.0\n"
    assert speed.read("demo")["lines"] == ["fast: 0.2 s", "ratio 7.0"]

    with pytest.raises(RuntimeError), speed.recorded("failed"):
        print("half")
        raise RuntimeError("the benchmark failed")
    assert speed.read("failed") is None and not speed.record_path("failed").exists()


def test_ctrl_c_ends_a_benchmark_in_one_line_and_saves_nothing(results, capsys):
    with pytest.raises(SystemExit) as ended, speed.recorded("stopped"):
        print("half of it")
        raise KeyboardInterrupt
    assert ended.value.code == 130 and speed.read("stopped") is None
    assert capsys.readouterr().err == "stopped: interrupted; no record saved\n"


def test_a_record_is_replaced_whole_or_not_at_all(results, monkeypatch):
    speed.write("demo", ["ratio 1.0"])

    def fail(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        speed.write("demo", ["ratio 2.0"])
    assert speed.read("demo")["ratio"] == 1.0
    assert [p.name for p in (results / "benchmarks").iterdir()] == ["demo.json"]  # no temporary file left


@pytest.mark.parametrize("text", ["{\"lines\": [\"ratio", "", "[1, 2]", "{\"ratio\": 3}", "\x00\xff"])
def test_a_damaged_record_is_no_record(results, text):
    path = speed.record_path("fast_trainer")
    path.parent.mkdir(parents=True)
    path.write_text(text, errors="surrogateescape")
    assert speed.read("fast_trainer") is None
    assert "This build has no measurement of it" in section(speed.page(), "fast_trainer")


def section(page: str, name: str) -> str:
    """The part of the Speed page about one benchmark."""
    heading = f"## {speed.scripts()[name].rstrip('.')}"
    return page.split(heading, 1)[1].split("\n## ", 1)[0]


def test_the_page_lists_every_benchmark_with_what_it_measures_and_its_command(results):
    page = speed.page()
    scripts = sorted(p.stem for p in speed.BENCHMARKS.glob("*.py"))
    assert list(speed.scripts()) == scripts and len(scripts) >= 10
    for name in scripts:
        doc = ast.get_docstring(ast.parse((speed.BENCHMARKS / f"{name}.py").read_text()))
        assert f"## {doc.splitlines()[0].rstrip('.')}\n" in page
        text = section(page, name)
        assert f"`.venv/bin/python benchmarks/{name}.py`" in text
        assert "This build has no measurement of it" in text and f"`results/benchmarks/{name}.json`" in text
        said = speed.ratio_said(name)  # every benchmark defines its ratio, on the page under its heading
        assert "`ratio N`" in said and said.endswith(".") and f"\n\n{said}\n\n" in text, name
    assert speed.ratio_said("encoder_batched") == ("The last line is `ratio N` = the literal computation's wall "
                                                   "time, one run at a time, over the batched one.")
    assert speed.ratio_said("paper2").endswith("data generation included.")  # not the numbered item after it


def test_the_landing_page_says_whether_the_build_has_records(results, monkeypatch):
    monkeypatch.setattr(speed, "GPU_RECORDS", results / "gpu")
    assert speed.said() == ("`make bench` measures by how much on your machine, and the {doc}`speed` page shows its "
                            "records (this build has none of its own yet)")
    (results / "gpu").mkdir()
    (results / "gpu" / "paper2.json").write_text(json.dumps({"lines": ["ratio 33"]}))
    assert speed.said().endswith("none of its own yet; 1 benchmark measured on a GPU, kept with the code)")
    speed.write("fast_trainer", ["ratio 244.0"])
    speed.write("fig5_grid", ["ratio 1328"])
    assert speed.said() == (f"the {{doc}}`speed` page shows by how much, from this machine's records (2 of its "
                            f"{len(speed.scripts())} benchmarks measured; 1 benchmark measured on a GPU, kept with the code)")


def test_the_page_shows_a_records_lines_commit_machine_and_date(results):
    speed.write("fast_trainer", ["fast trainer: 0.268 s (best of 3)", "ratio 244.0"], load_before=1.25)
    record = speed.read("fast_trainer")
    page = speed.page()
    text = section(page, "fast_trainer")
    assert "```text\nfast trainer: 0.268 s (best of 3)\nratio 244.0\n```" in text
    assert "no measurement" not in text
    assert f"`{record['git_commit'][:10]}`" in text and f"`{record['machine']['cpu']}`" in text
    assert f"`{record['date'][:10]}" in text and f"`{record['command']}`" in text and "1.25 before" in text
    assert "no measurement" in section(page, "fig5_grid")
    assert not typed_numbers(page), typed_numbers(page)  # every number of the page is in code, from the record


def test_a_record_made_on_a_gpu_is_shown_after_this_machines(results, monkeypatch):
    """Kept records from a lent GPU (benchmarks/gpu/) appear in their benchmark's section, with their own machine;
    a benchmark without one shows none, and a damaged one is no record."""
    kept = results / "gpu"
    monkeypatch.setattr(speed, "GPU_RECORDS", kept)
    speed.write("fig5_grid", ["fast: 1521 runs in 40.2 s (cpu)", "ratio 1328"])
    made = speed.read("fig5_grid")
    on_gpu = dict(made, lines=["fast: 1521 runs in 16.7 s (cuda)", "ratio 587"],
                  machine=dict(made["machine"], gpu="NVIDIA H100 80GB HBM3"))
    kept.mkdir()
    (kept / "fig5_grid.json").write_text(json.dumps(on_gpu))
    (kept / "paper2.json").write_text("{not json")
    text = section(speed.page(), "fig5_grid")
    assert text.index("in 40.2 s (cpu)") < text.index("On a GPU, kept in `benchmarks/gpu/fig5_grid.json`")
    assert "in 16.7 s (cuda)\nratio 587" in text and "GPU `NVIDIA H100 80GB HBM3`" in text
    assert "On a GPU" not in section(speed.page(), "paper2") and "On a GPU" not in section(speed.page(), "explore")
    assert "Note, written" not in text
    (kept / "fig5_grid.json").write_text(json.dumps(dict(on_gpu, note="Its first direct step carries start-up.")))
    assert "ratio 587\n```\n\n**Note, written when this record was kept.** Its first direct step carries start-up." in (
        section(speed.page(), "fig5_grid"))


def test_every_benchmark_records_under_its_own_name():
    calls = {p.stem: re.findall(r"speed\.recorded\(\"(\w+)\"\)", p.read_text()) for p in speed.BENCHMARKS.glob("*.py")}
    assert all(found == [name] for name, found in calls.items() if found), calls


# The README: read in two minutes, no number a build can change, the layout the package's import levels.
README = paths.ROOT / "README.md"
MEASURED = re.compile(r"\d(?:[\d.,]*\d)?\s*(?:%|×|(?:s|ms|µs|us|sec|seconds?|min|minutes?|h|hours?|[kMG]i?B|"
                      r"GFLOP/s|FLOP)(?!\w))|\bratio\s+\d|\d\s*(?:x|X)\b", re.I)


def test_the_check_for_measurements_finds_them():
    found = "took 12.3 s, 0.27s, 13.1 min, 51 GB, 2.45×, 3x slower, 25 % and ratio 45; 1.5 hours"
    assert MEASURED.findall(found) == ["12.3 s", "0.27s", "13.1 min", "51 GB", "2.45×", "3x", "25 %", "ratio 4",
                                       "1.5 hours"]
    assert not MEASURED.findall("Python 3.11, torch==2.13.0, ICML 2025, -p seed 7 --out runs/fig3-seed7, 2 steps, "
                                "paper 2's model, Figures 8, 9, exits with code 2")


def test_the_readme_is_short_and_types_no_measurement():
    text = README.read_text()
    assert len(text.splitlines()) <= 120
    assert not MEASURED.findall(text), MEASURED.findall(text)
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "a dated log"
    assert "make book" in text and "make test" in text  # .ci/run runs the README's test command


def layout() -> list[list[str]]:
    """The README's package tree: the module names of each line under `benign/`, top line first."""
    block = next(b for b in re.findall(r"^```\w*\n(.*?)^```", README.read_text(), re.S | re.M) if "\nbenign/" in b)
    lines = block.split("\nbenign/", 1)[1].splitlines()[1:]
    return [re.split(r"\s{2,}", line.strip())[0].replace("/", "").split() for line in lines
            if re.match(r"  \S", line)]


def test_the_readme_layout_is_the_packages_import_levels():
    """Every module of the package on one line of the README's tree, each importing only from the lines below it."""
    top = {name.split(".")[1] for name in modules() if name != "benign"}
    graph = {m: set() for m in top}
    for name, path in modules().items():
        if name != "benign":
            graph[name.split(".")[1]] |= {m.split(".")[1] for m, _ in imports(name, path) if m != "benign"}
    levels = layout()
    listed = [m for line in levels for m in line]
    assert sorted(listed) == sorted(top), set(listed) ^ top
    assert levels[-1] == ["models"]
    for i, line in enumerate(levels):
        below = {m for later in levels[i + 1:] for m in later}
        for module in line:
            assert graph[module] - {module} <= below, f"{module} imports {graph[module] - {module} - below} from " \
                                                      "its own line or above"


def test_a_cost_sampled_at_a_few_d_is_read_over_a_grid_by_its_quadratic_fit():
    sample = [250, 1250, 2500, 3750, 5000]
    cost = [1 + 2e-3 * d + 3e-7 * d * d for d in sample]  # a + b·d + c·d², read back exactly at other d
    assert speed.quadratic_in_d(sample, cost, [0, 10000]) == pytest.approx([1.0, 51.0])


def test_the_reference_rate_is_timed_on_the_runs_device(monkeypatch):
    seen = []

    def timed(fn, device):
        seen.append(str(device))
        fn()
        return 2.0

    monkeypatch.setattr(speed, "timed", timed)
    assert speed.gemm_rate(8, 4, 2, repeats=5, device="cpu") == pytest.approx(2 * 8 * 4 * 2 * 5 / 2.0 / 1e9)
    assert seen == ["cpu", "cpu"]  # the warm-up product and the timed ones, both on the device asked for


def test_timed_counts_the_call():
    calls = []
    seconds = speed.timed(lambda: calls.append(1))
    assert calls == [1] and 0 <= seconds < 1
