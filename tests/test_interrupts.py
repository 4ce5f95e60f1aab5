"""Ctrl-C as a user sends it (SIGINT to a real process): the work stops within seconds, what finished is kept,
one line is printed, the exit code is 130, no worker or temporary folder is left behind, and the same command
resumes where it stopped."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benign import paths

BIN = Path(sys.executable).parent
STOP_S = 5.0  # the bound asserted on the time from SIGINT to exit (measured: 1–1.5 s on 2 cores idle; 3.2 s once
# beside two busy processes): "at once" to a reader, with room for a loaded CI machine; a hang takes far longer

SLOW_KERNEL = textwrap.dedent("""
    import os, time

    def kernel(points):  # a chunk takes a while, as a real one does
        time.sleep(1.0)
        return [{**p, "twice": 2 * p["d"], "pid": os.getpid()} for p in points]
""")

SWEEP = textwrap.dedent("""
    import json, sys
    from benign import sweep

    if __name__ == "__main__":  # its worker processes are spawned: they import this file
        sys.path.insert(0, sys.argv[1])
        import slow

        points = sweep.grid(d=list(range(3, 15)), seed=0)  # 12 chunks of one point
        try:
            table = sweep.run(slow.kernel, points, cache=sys.argv[2])
        except sweep.SweepInterrupted as err:
            print(err, file=sys.stderr)
            sys.exit(130)
        print(json.dumps({"computed": table.attrs["computed_chunks"], "twice": table["twice"].tolist()}))
""")


def start(command, **kwargs) -> subprocess.Popen:
    """The command as a terminal's foreground job runs it: SIGINT raises KeyboardInterrupt even when this test runs
    with SIGINT ignored (under nohup, or as a background job of a non-interactive shell, which children inherit)."""
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kwargs)


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (from /proc), e.g. a sweep's worker processes or a notebook's kernel."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids, within_s: float = 5.0) -> set[int]:
    """Those of `pids` still running after `within_s` seconds (multiprocessing's resource tracker ends a moment after
    its owner)."""
    deadline = time.monotonic() + within_s
    while True:
        left = {p for p in pids if Path(f"/proc/{p}").exists() and _state(p) != "Z"}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def interrupt(process: subprocess.Popen, when, timeout_s: float = 120.0) -> tuple[float, set[int]]:
    """Wait until `when()` holds (or `timeout_s`), send SIGINT to the process alone, and return the seconds it took
    to exit and the processes it had started."""
    deadline = time.monotonic() + timeout_s
    while not when() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, "the command ended before it could be interrupted"
    below = descendants(process.pid)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    return time.monotonic() - sent, below


@pytest.fixture
def sweep_script(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW_KERNEL)
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP)
    return lambda cache: [sys.executable, str(script), str(tmp_path), str(cache)]


def test_ctrl_c_stops_a_sweep_at_once_and_keeps_every_finished_chunk(sweep_script, tmp_path):
    cache = tmp_path / "cache"
    command = sweep_script(cache)
    process = start(command)
    took, below = interrupt(process, lambda: len(list(cache.glob("*.json"))) >= 2)
    err = process.stderr.read()
    assert process.returncode == 130 and took < STOP_S, (process.returncode, took, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err  # no worker printed a KeyboardInterrupt
    kept = int(re.fullmatch(rf"(\d+) of 12 chunks kept in {re.escape(str(cache))}; rerun the same command to "
                            "resume", lines[0]).group(1))
    assert 2 <= kept < 12 and len(list(cache.glob("*.json"))) == kept
    assert not alive(below), "worker processes outlived the interrupted sweep"
    assert not list(cache.glob(".*"))  # no half-written cache file

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["computed"] == 12 - kept  # only what was missing
    assert result["twice"] == [2 * d for d in range(3, 15)]


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
def test_plain_papermill_prints_no_traceback_from_sweep_workers(tmp_path, cached):
    """papermill interrupts a kernel before it shuts it down (SIGINT to its process group): the sweep's workers
    must not answer with KeyboardInterrupt tracebacks on a run that succeeded."""
    source = tmp_path / "conditions.ipynb"
    subprocess.run([BIN / "jupytext", "--to", "ipynb", "notebooks/conditions_heatmap.py", "-o", source], check=True,
                   capture_output=True, cwd=paths.ROOT)
    smoke = ["-y", json.dumps({"d_grid": [200, 400, 200], "signal_norm_grid": [5.0, 25.0, 20.0], "num_steps": 30,
                               "n_test": 50, "authors_code": False, "use_cache": cached})]
    done = subprocess.run([BIN / "papermill", source, tmp_path / "executed.ipynb", *smoke, "-p", "out_dir",
                           str(tmp_path / "out"), "--kernel", "python3"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    ours = kernel_shutdown_noise(done.stderr)
    assert "Traceback" not in ours and "KeyboardInterrupt" not in ours, done.stderr[-3000:]


def kernel_shutdown_noise(stderr: str) -> str:
    """stderr without what ipykernel itself logs when papermill's shutdown interrupt (jupyter_client interrupts a
    kernel before it shuts it down) finds it still in a message handler, as happens on a loaded machine: its one
    line "KeyboardInterrupt caught in kernel." and asyncio's two lines on the control task it drops. Not from the
    sweep's workers, which the test is about; any other line stays."""
    noise = re.compile(r"\[IPKernelApp\] ERROR \| KeyboardInterrupt caught in kernel\.|Task was destroyed but it is "
                       r"pending!|task: <Task pending name='Task-\d+' coro=<Kernel\.dispatch_control\(\).*")
    return noise.sub("", stderr)


def kernel_started(process: subprocess.Popen, settle_s: float):
    """A condition for `interrupt`: the process has a grandchild (a kernel's sweep workers below `benign run`, or a
    notebook's kernel below `benign book`'s notebook process) for `settle_s` seconds."""
    seen = []

    def ready():
        if not seen and len(descendants(process.pid)) >= 2:
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] > settle_s
    return ready


def test_ctrl_c_stops_benign_run_in_a_sweep_and_leaves_out_and_no_folder(benign_cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    earlier = json.dumps({"notebook": "fig5_heatmap", "note": "earlier results"})
    (out / "metrics.json").write_text(earlier)
    process = start([benign_cli, "run", "fig5_heatmap", "--profile", "smoke", "-p", "num_steps", "100000", "-p",
                     "use_cache", "False", "--out", str(out)])
    took, below = interrupt(process, kernel_started(process, settle_s=3.0))  # the kernel's sweep workers started
    err = process.stderr.read()
    assert process.returncode == 130 and took < STOP_S, (process.returncode, took, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert re.fullmatch(r"benign: interrupted fig5_heatmap in cell \d+: none of 3 chunks kept: no cache folder was "
                        r"given\n", err), err
    assert (out / "metrics.json").read_text() == earlier and [p.name for p in out.iterdir()] == ["metrics.json"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no .out.PID.* folder left beside it
    assert not alive(below), "the kernel or its workers outlived the interrupted run"


def test_a_killed_run_s_folder_is_removed_by_the_next_run(benign_cli, tmp_path):
    out = tmp_path / "out"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".out.{dead.stdout.strip()}.abc123"  # what a run killed with SIGKILL leaves
    stale.mkdir()
    ours = tmp_path / f".out.{os.getpid()}.abc123"  # a live process's: not touched
    ours.mkdir()
    done = subprocess.run([benign_cli, "run", "fig1_token_selection", "--profile", "smoke", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", ours.name])


def test_ctrl_c_stops_benign_book_and_every_notebook_it_runs(benign_cli, tmp_path):
    results = tmp_path / "results"
    env = {**os.environ, paths.RESULTS_ENV: str(results)}
    process = start([benign_cli, "book", "--profile", "smoke", "--output", str(tmp_path / "site")], env=env)
    took, below = interrupt(process, kernel_started(process, settle_s=8.0))
    err = process.stderr.read()
    assert process.returncode == 130 and took < STOP_S, (process.returncode, took, err)
    assert re.fullmatch(r"benign: interrupted the book build: \d+ of \d+ notebooks had finished; rerun the same "
                        r"command to resume \(finished sweep chunks and fine-tuning runs are cached\)\n", err), err
    assert not [p for p in results.rglob(".*") if p.is_dir()]  # no notebook's temporary folder left behind
    assert not alive(below), "a notebook process or its kernel outlived the interrupted build"
