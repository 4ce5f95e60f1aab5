"""Every notebook's book profile beside one busy process, against the same build idle: wall time per notebook.

Two fresh clones of this repository (its committed HEAD), each with empty caches: in the first `benign book` runs
on an idle machine, in the second beside a single-thread Python busy loop started and stopped here. Each clone's
environment is made first (`make venv`, not timed). Prints each notebook's wall time in both builds (as the build
prints it: notebooks two at a time, as `make book` runs them), the ratio loaded / idle, the whole build's, and last
`ratio N`, the worst notebook's. Target: every notebook within 2× of its idle time. About an hour on 2 cores.
Usage: python benchmarks/book_under_load.py [--keep DIR]  (DIR: where the clones go; default a temporary folder)
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benign import speed

ROOT = Path(__file__).resolve().parents[1]
FINISHED = re.compile(r"^\[\d+/\d+\] (\S+)\s+([\d.]+) s$")  # benign book's line as each notebook finishes


def build(clone: Path, busy: bool) -> tuple[dict[str, float], float]:
    """Wall time of each notebook and of the whole `benign book` in a fresh clone (beside a busy loop if `busy`)."""
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    made = subprocess.run(["make", "-C", str(clone), "venv"], capture_output=True, text=True)
    if made.returncode:
        sys.exit(f"make venv failed in {clone}: {made.stderr.strip().splitlines()[-1:]}")
    other = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    started = time.perf_counter()
    try:
        done = subprocess.run([str(clone / ".venv/bin/benign"), "book", "--profile", "book"], cwd=clone,
                              capture_output=True, text=True)
    finally:
        if other:
            other.kill()
            other.wait()
    if done.returncode:
        sys.exit(f"book failed in {clone}: {done.stderr.strip().splitlines()[-1:]}")
    walls = {m[1]: float(m[2]) for m in map(FINISHED.match, done.stdout.splitlines()) if m}
    return walls, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", default="")
    folder = Path(parser.parse_args().keep or tempfile.mkdtemp(prefix="book_under_load_"))
    idle, idle_s = build(folder / "idle", busy=False)
    loaded, loaded_s = build(folder / "beside_one", busy=True)
    print(f"{'notebook':28s} {'idle s':>8s} {'beside one s':>13s} {'×':>5s}")
    worst = 0.0
    for name, seconds in idle.items():
        ratio = loaded[name] / seconds
        worst = max(worst, ratio)
        print(f"{name:28s} {seconds:8.1f} {loaded[name]:13.1f} {ratio:5.2f}")
    print(f"{'whole build':28s} {idle_s:8.1f} {loaded_s:13.1f} {loaded_s / idle_s:5.2f}")
    print("target: every notebook beside one busy process ≤ 2× its idle time")
    print(f"ratio {worst:.2f}")


if __name__ == "__main__":
    with speed.recorded("book_under_load"):  # also saved as results/benchmarks/book_under_load.json
        main()
