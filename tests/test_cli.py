"""The command line as a user meets it: list, smoke runs of every notebook, plain papermill, and bad input."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benign import notebooks
from benign.checks import ParameterError

BIN = Path(sys.executable).parent

REQUIRED_KEYS = {
    "fig3_dynamics": [f"{s}_{k}" for s in ("balanced", "large_noise", "large_signal")
                      for k in ("train_acc", "test_acc", "train_loss", "test_loss")],
    "fig1_token_selection": [f"{r}_{s}_acc" for r in ("harmful", "benign", "not_overfitting") for s in ("train", "test")],
}


def run(cli, *args):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=900)


def test_list_shows_every_notebook_with_parameters(benign_cli):
    done = run(benign_cli, "list")
    assert done.returncode == 0, done.stderr
    for name in notebooks.names():
        assert name in done.stdout
    assert "num_steps=1000" in done.stdout and "noise_ratio=0.2" in done.stdout


def test_the_project_folder_is_found_where_the_package_is_installed_apart_from_it(benign_cli, tmp_path):
    """`pip install .` puts the package away from the notebooks: benign then reads the project in $BENIGN_ROOT or
    the working folder, says in one line where it looked when there is none, and a closed pipe ends it quietly."""
    from benign import paths

    assert paths.project_root() == paths.ROOT and (paths.ROOT / "notebooks").is_dir()  # a clone: beside the package
    env = {**os.environ, paths.ROOT_ENV: str(tmp_path)}
    done = subprocess.run([benign_cli, "list"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and done.stderr == (
        f"benign: error: no notebooks folder at {tmp_path / 'notebooks'}: run benign in the project's folder (a clone "
        "or the book's source archive), or set BENIGN_ROOT to it\n")
    code = f"import os; os.environ[{paths.ROOT_ENV!r}] = {str(tmp_path)!r}; from benign import paths; print(paths.ROOT)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == str(tmp_path)
    listing = subprocess.Popen([benign_cli, "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    listing.stdout.close()  # the reader is gone before a line is written, as `benign list | head -0`
    assert listing.wait(timeout=120) == 141 and listing.stderr.read() == b""


@pytest.mark.parametrize("name", notebooks.names())
def test_every_notebook_runs_with_the_smoke_profile(benign_cli, name, tmp_path):
    out = tmp_path / "out"
    done = run(benign_cli, "run", name, "--profile", "smoke", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr == "" and done.stdout == f"wrote {out}\n"  # quiet: no warning, no bar without a terminal
    assert (out / f"{name}.ipynb").exists()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["profile"] == "smoke" and metrics["notebook"] == name
    assert metrics["parameters"]["out_dir"] == str(out)
    assert metrics["versions"]["torch"] and metrics["device"]
    for key in REQUIRED_KEYS.get(name, []):
        assert isinstance(metrics[key], float), key
    wide = [p for p in out.glob("*.png") if not p.name.endswith(".phone.png")]  # every figure as PNG and PDF
    assert wide and len(wide) == len(list(out.glob("*.pdf")))
    assert all(p.with_name(p.name.replace(".phone", "")) in wide for p in out.glob("*.phone.png"))  # beside its own
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left behind


def test_run_applies_parameters_and_default_output_folder(benign_cli, tmp_path):
    out = tmp_path / "seed7"
    done = run(benign_cli, "run", "fig3_dynamics", "--profile", "smoke", "-p", "seed", "7", "-p", "num_steps", "30",
               "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    params = json.loads((out / "metrics.json").read_text())["parameters"]
    assert params["seed"] == 7 and params["num_steps"] == 30 and params["d_balanced"] == 200


def test_plain_papermill_runs_the_converted_notebook(tmp_path):
    source = tmp_path / "fig1.ipynb"
    subprocess.run([BIN / "jupytext", "--to", "ipynb", "notebooks/fig1_token_selection.py", "-o", source],
                   check=True, capture_output=True)
    out = tmp_path / "pm"
    done = subprocess.run([BIN / "papermill", source, tmp_path / "executed.ipynb", "-p", "d", "300", "-p", "n", "20",
                           "-p", "n_test", "20", "-p", "out_dir", str(out), "--kernel", "python3"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((out / "metrics.json").read_text())["parameters"]["d"] == 300


BAD = [
    (["run", "fig3_dynamics", "-p", "noise_ratio", "1.5"], "noise_ratio = 1.5 is not allowed"),
    (["run", "fig3_dynamics", "-p", "d_balanced", "0"], "d_balanced = 0 is not allowed: d_balanced must be an integer"),
    (["run", "fig3_dynamics", "-p", "num_steps", "abc"], "num_steps = 'abc' is not allowed: num_steps must be an int"),
    (["run", "fig3_dynamics", "-p", "learning_rate", "fast"], "learning_rate must be a number"),
    (["run", "fig3_dynamics", "-p", "num_steps", "2.5"], "num_steps must be an integer"),
    (["run", "fig3_dynamics", "-p", "progress", "maybe"], "progress must be True or False"),
    (["run", "fig3_dynamics", "-p", "device", "tpu"], "device must be one of auto"),
    (["run", "fig3_dynamics", "-p", "sead", "7"], "unknown parameter 'sead' for fig3_dynamics: use one of seed,"),
    (["run", "fig9_nothing"], "unknown notebook 'fig9_nothing': use one of"),
    (["run", "fig3_dynamics", "--profile", "huge"], "unknown profile 'huge': use one of smoke, book, paper"),
    (["run", "fig3_dynamics", "-p", "seed"], "expected 2 arguments"),
    (["run", "fig3_dynamics", "-p", "seed", "1", "-p", "seed", "2"], "parameter 'seed' given twice"),
    (["launch"], "invalid choice"),
    (["run", "paper2_two_steps", "-p", "eta", "0.1"], "parameter 'eta' was renamed: use 'noise_ratio'"),
    (["run", "paper2_snr_heatmap", "-p", "rho_values", "[1.0]"], "parameter 'rho_values' was removed: the "
     "signal-norm grid of the SNR map is geometric now"),
    (["run", "fig3_dynamics", "-p", "reuse_train_seed", "True"], "was renamed: use 'authors_test_seed'"),
    (["run", "table2_finetune", "-p", "max_steps", "600"], "parameter 'max_steps' was removed: phase 2 is bounded in"),
    (["run", "table2_finetune", "-p", "datasets", "['mnist_5k', 'mnist_5k']"], "a non-empty list of distinct data set"),
    (["run", "table2_finetune", "-p", "vit_layers", "13"], "vit_layers = 13 is not allowed: vit_layers must be an int"),
    (["run", "backbone_reach", "-p", "vit_depths", "[0, 2]"], "vit_depths must be a non-empty list of integers"),
    (["run", "backbone_reach", "-p", "vit_widths", "[66]"], "vit_widths must be a list of multiples of 4 (the heads)"),
    (["run", "backbone_reach", "-p", "table2_profile", "huge"], "unknown profile 'huge': use one of smoke, book"),
    (["run", "fig5_heatmap", "--profile", "smoke", "-p", "snapshot_steps", "[50, 5000]"],
     "snapshot_steps = [50, 5000] is not allowed: [5000] lie after the run's last step (300)"),
    (["run", "fig5_heatmap", "--profile", "smoke", "-p", "d_values_long", "[200]", "-p", "signal_norm_values_long",
      "[5.0]"], "is not a map: give at least two values of d and two of the signal norm"),
    (["run", "fig3_dynamics", "-p", "out_dir", "/tmp/x"], "out_dir is not a parameter of benign run: give the output "
     "folder as --out FOLDER"),
    (["run", "fig3_dynamics", "-p", "n", "2"], "n = 2 with noise_ratio = 0.2 flips 0 of the 1 labels of each class"),
    (["run", "theory_clock", "-p", "n_values", "[4, 20]"], "each of n_values must be at least 6 at this noise ratio"),
    (["book", "--profile", "nosuch"], "unknown profile 'nosuch': use one of smoke, book, paper"),
    (["book", "--profile", "nosuch", "--jobs", "0"], "--jobs 0 is not allowed: give 1 or more"),
    (["book", "--jobs", "-2"], "--jobs -2 is not allowed: give 1 or more"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_exit_2_and_leaves_out_untouched(benign_cli, tmp_path, args, message):
    out = tmp_path / "out"
    out.mkdir()
    earlier = json.dumps({"notebook": args[1] if args[0] == "run" else "", "note": "earlier results"})
    (out / "metrics.json").write_text(earlier)
    done = run(benign_cli, *args, "--out", str(out)) if args[0] == "run" and len(args) > 1 else run(benign_cli, *args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert message in lines[0] and "Traceback" not in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and (out / "metrics.json").read_text() == earlier


def test_resolve_merges_defaults_profile_and_overrides():
    params = notebooks.resolve("fig3_dynamics", "smoke", {"seed": "3"})
    assert params["seed"] == 3 and params["num_steps"] == 60 and params["learning_rate"] == 0.005
    assert notebooks.resolve("fig3_dynamics", "book")["num_steps"] == 1000
    assert notebooks.resolve("fig3_dynamics", "book", {"learning_rate": "1"})["learning_rate"] == 1.0
    with pytest.raises(ParameterError, match="unknown profile"):
        notebooks.resolve("fig3_dynamics", "Book")


def test_module_entry_point_matches_console_script():
    done = subprocess.run([sys.executable, "-m", "benign.cli", "run", "fig3_dynamics", "-p", "n", "1"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "n = 1 is not allowed: n must be an integer >= 2" in done.stderr


@pytest.mark.parametrize("name", notebooks.names())
def test_papermill_sees_every_parameter_the_notebook_declares(name):
    """papermill reads a parameters cell line by line and skips a line it cannot parse (a comment holding '=' is
    enough), then warns 'Passed unknown parameter' on every run: each parameter must be one it can read."""
    from papermill.translators import PythonTranslator

    import jupytext

    cell = next(c for c in jupytext.read(notebooks.path(name)).cells if "parameters" in c.metadata.get("tags", []))
    seen = [p.name for p in PythonTranslator.inspect(cell)]
    assert seen == ["profile", "overrides", "out_dir"]


def test_a_run_in_a_terminal_shows_cells_and_training_progress_there_not_in_the_notebook(tmp_path):
    """In a terminal `benign run` draws papermill's bar of cells and the trainer's own bar (written by the kernel
    to the terminal); the executed notebook keeps no trace of either."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios

    out = tmp_path / "out"
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal of 40 × 120
    proc = subprocess.Popen([str(BIN / "benign"), "run", "fig3_dynamics", "--profile", "smoke", "-p", "num_steps",
                             "200", "--out", str(out)], stdin=follower, stdout=follower, stderr=follower,
                            close_fds=True)
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 600)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the run is over
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.wait(timeout=60) == 0, seen.decode(errors="replace")[-2000:]
    text = seen.decode(errors="replace")
    assert "Executing" in text and "cell/s" in text  # cells done of total
    assert "gradient descent" in text  # the trainer's steps
    assert f"wrote {out}" in text and "WARNING" not in text
    outputs = json.dumps([c.get("outputs", []) for c in json.loads((out / "fig3_dynamics.ipynb").read_text())["cells"]])
    assert "gradient descent" not in outputs and "it/s" not in outputs
    assert json.loads((out / "metrics.json").read_text())["parameters"]["progress"] is True


def checksums(folder: Path) -> dict:
    import hashlib

    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_out_holding_another_notebooks_results_is_refused_unless_forced(benign_cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "metrics.json").write_text(json.dumps({"notebook": "fig5_heatmap"}))
    (out / "fig5_heatmap.png").write_bytes(b"a figure")
    before = checksums(tmp_path)
    done = run(benign_cli, "run", "fig1_token_selection", "--profile", "smoke", "--out", str(out))
    assert done.returncode == 2 and done.stderr == (f"benign: error: --out {out} holds fig5_heatmap's results: give an "
                                                    "empty folder or fig1_token_selection's own, or add --force to "
                                                    "replace what it holds\n")
    assert checksums(tmp_path) == before
    (out / "metrics.json").unlink()
    done = run(benign_cli, "run", "fig1_token_selection", "--profile", "smoke", "--out", str(out))
    assert done.returncode == 2 and "holds a file that is not fig1_token_selection's results" in done.stderr
    done = run(benign_cli, "run", "fig1_token_selection", "--profile", "smoke", "--out", str(out), "--force")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (out / "fig5_heatmap.png").exists()  # replaced, not mixed
    assert json.loads((out / "metrics.json").read_text())["notebook"] == "fig1_token_selection"


def test_out_that_cannot_be_written_is_one_line_and_exit_2(benign_cli, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("kept")
    cases = [(a_file, f"--out {a_file} is a file: give a folder"),
             (a_file / "out", f"--out {a_file / 'out'} cannot be made: {a_file} is a file: give a folder"),
             (Path("/proc/benign-test/out"), "--out /proc/benign-test/out cannot be written: ")]
    if os.getuid() != 0:  # root writes anywhere: a read-only folder only stops others
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        cases.append((locked / "out", "cannot be written: Permission denied"))
    before = checksums(tmp_path)
    for out, message in cases:
        done = run(benign_cli, "run", "fig1_token_selection", "--profile", "smoke", "--out", str(out))
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith(f"benign: error: {message}"), done.stderr
    assert checksums(tmp_path) == before


