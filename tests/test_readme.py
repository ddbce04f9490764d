"""Every command of the README and of the docs pages runs as written, on tiny sizes.

The commands are parsed from the documents themselves (``eval/figures.py``'s parser,
the one ``make figures`` times them with), so editing one in the README edits the
test. Sizes are shrunk (games, trials, jobs, epochs, batches, a tiny network) and the
commands run in order in a temporary copy of what they read, so that each one can
use what the one before it wrote, as a newcomer following the README would.
"""

import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from nnsweeper.cli import main

ROOT = Path(__file__).resolve().parents[1]
#: The docs pages whose commands and Python blocks run here, after the README's and in
#: this order (a reader who follows them uses what the earlier commands wrote).
PAGES = [ROOT / "docs" / name for name in (
    "index.md", "engine.md", "solvers.md", "grading.md", "noguess.md", "models.md", "api.md", "own-board.md",
    "evaluation.md", "experiments.md", "notebooks.md", "architecture.md", "results.md")]
#: The docs pages whose blocks cannot run here, and why.
NOT_RUN = {"cluster.md": "its commands start a Dask, SLURM or Kubernetes cluster",
           "rl.md": "its example trains for about 30 s; tests/test_gym.py runs the same code on tiny sizes",
           "peers.md": "its commands need a JDK and a clone of the Java solver, which the repository does "
                       "not hold; tests/test_peers.py runs their Python side",
           "serve.md": "its commands start a server that runs until interrupted; tests/test_serve.py and "
                       "tests/test_browser.py start it and ask it what the page shows"}


def _load_figures():
    spec = importlib.util.spec_from_file_location("figures", ROOT / "eval" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


figures = _load_figures()

#: Option values replaced by tiny ones.
_TINY_OPTIONS = {"--trials": "2", "--games": "1", "--jobs": "1", "--count": "2"}
#: Appended to every ``nnsweeper train``: one epoch of a one-round, 8-wide network.
_TINY_TRAIN = ["train.epochs=1", "train.threads=1", "train.device=cpu", "train.in_memory=false",
               "model.hidden=8", "model.layers=1"]


def _all_commands() -> list[tuple[str, str]]:
    out = []
    for path in (figures.README, *PAGES):
        for heading, commands in figures.bash_blocks(path.read_text(encoding="utf-8")):
            out += [(f"{path.name} {heading}", c) for c in commands]
    return out


def shrink(words: list[str]) -> list[str]:
    """The command with tiny sizes."""
    out = list(words)
    for k, w in enumerate(out[:-1]):
        if w in _TINY_OPTIONS:
            out[k + 1] = _TINY_OPTIONS[w]
    if out[:2] == ["nnsweeper", "generate"] and "--games" in out:
        out[out.index("--games") + 1] = "10"  # the fewest per configuration that fill every split
    if out[:2] == ["nnsweeper", "train"]:
        out += _TINY_TRAIN
    if out[:2] == ["nnsweeper", "evaluate-model"]:
        out += ["--max-batches", "1"]
    return out


def test_shrink_keeps_the_command_and_makes_it_small():
    words = shlex.split("nnsweeper eval --solvers csp --trials 1000 --jobs 2 --out sweep")
    assert shrink(words) == shlex.split("nnsweeper eval --solvers csp --trials 2 --jobs 1 --out sweep")
    assert shrink(["nnsweeper", "train", "--config", "x.toml"])[-6:] == _TINY_TRAIN


def test_the_parser_finds_the_quick_commands():
    quick = figures.readme_commands()
    assert quick and all(c.startswith("nnsweeper ") for c in quick)
    assert any(c.startswith("nnsweeper analyze examples/board.txt") for c in quick)


def test_quick_commands_never_write_into_the_committed_results():
    for command in figures.readme_commands():
        words = shlex.split(command)
        for k, w in enumerate(words[:-1]):
            if w == "--out":
                assert not words[k + 1].startswith("eval/results"), command


def test_every_make_target_the_documents_name_exists():
    targets = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))
    named = {shlex.split(c)[1] for _, c in _all_commands() if c.startswith("make ")}
    assert named and named <= targets, named - targets


def test_every_command_runs_as_written_on_tiny_sizes(tmp_path, monkeypatch, capsys):
    for name in ("eval/results", "examples", "train"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-r", str(ROOT / name), str(tmp_path / name)], check=True)
    monkeypatch.chdir(tmp_path)
    ran = 0
    for where, command in _all_commands():
        words = shlex.split(command)
        if words[0] == "make":  # set-up and development: the fresh-clone CI runs them
            continue
        if words[0] == "jupyter":
            # The notebooks themselves run in tests/test_notebooks.py; here: the tool exists.
            assert (Path(sys.executable).parent / f"jupyter-{words[1]}").exists(), command
            assert (ROOT / words[-1]).exists(), command
            continue
        if words[0] == "tensorboard":  # a server to look at: the tool exists (the tensorboard extra)
            assert (Path(sys.executable).parent / "tensorboard").exists(), command
            continue
        assert words[0] == "nnsweeper", f"{where}: {command} (a command the test does not know how to run)"
        code = main(shrink(words)[1:])
        out = capsys.readouterr()
        assert code == 0, f"{where}: {command}\n{out.err}"
        ran += 1
    assert ran >= 10
    # What the quick start promises: a summary naming the reference, and the files.
    assert Path("sweep.json").exists() and Path("sweep.png").exists()
    table = json.loads(Path("mine.json").read_text())
    assert {r["solver"] for r in table["rows"]} >= {"mygnn", "hybrid-mygnn"}


def _files_written(words: list[str]) -> list[str]:
    """The files a documented ``nnsweeper`` command writes (tables, figures, animations)."""
    options = {w: words[k + 1] for k, w in enumerate(words[:-1]) if w.startswith("--")}
    command = words[1]
    if command in ("eval", "compare") and "--out" in options:
        return [options["--out"] + suffix for suffix in (".csv", ".json", ".png")]
    if command == "plot":
        tables = [w for w in words[2:] if w.endswith(".json")]
        return [options.get("--out", str(Path(tables[0]).with_suffix(".png")))]
    if command == "watch":
        return [options["--out"]]
    if command == "analyze" and "--png" in options:
        return [options["--png"]]
    return []


def test_no_command_of_a_page_overwrites_what_another_of_it_wrote():
    # A reader following a page keeps each result: a second command writing the same file
    # (two animations into one GIF, a plot redrawing compare's figure) loses the first.
    assert _files_written(shlex.split("nnsweeper plot board12.json")) == ["board12.png"]
    for path in (figures.README, *PAGES):
        wrote = {}
        for _, commands in figures.bash_blocks(path.read_text(encoding="utf-8")):
            for command in commands:
                words = shlex.split(command)
                for name in _files_written(words) if words[0] == "nnsweeper" else []:
                    assert name not in wrote, f"{path.name}: {command!r} overwrites {name} of {wrote[name]!r}"
                    wrote[name] = command


def test_every_docs_page_is_run_or_says_why_not():
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == {p.name for p in PAGES} | set(NOT_RUN), pages ^ ({p.name for p in PAGES} | set(NOT_RUN))


def test_every_link_between_the_documents_resolves():
    for path in (figures.README, *PAGES, *(ROOT / "docs" / n for n in NOT_RUN)):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")):
                assert (path.parent / target).exists(), f"{path.name}: {target}"


PYTHON_PAGES = [p for p in (figures.README, *PAGES) if "```python" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", PYTHON_PAGES, ids=[p.stem for p in PYTHON_PAGES])
def test_every_python_block_runs(path, tmp_path):
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    assert blocks
    for code in blocks:
        code = re.sub(r"trials=\d+", "trials=4", code)
        code = code.replace("n_jobs=2", "n_jobs=1")
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, f"{path.name}:\n{code}\n{done.stderr[-3000:]}"


def test_the_timings_block_is_the_one_timings_json_makes():
    doc = json.loads(figures.TIMINGS.read_text())
    assert figures.readme_block() == figures.timings_markdown(doc)
    timed = [e["command"] for e in doc["commands"]]
    assert "make compare" in timed
    assert set(figures.readme_commands()) <= set(timed)  # every quick command has its time
