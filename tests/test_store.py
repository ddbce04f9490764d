"""Streaming, resumable evaluation: the game store, seeds drawn in blocks, tables from stored games."""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnsweeper.evaluation import evaluate, game_seeds, unpack_outcomes
from nnsweeper.evaluation.games import Board, GameResults, play_games
from nnsweeper.evaluation.identity import solver_identity
from nnsweeper.evaluation.rows import median_of_chunks as _median
from nnsweeper.evaluation.rows import pack_stream as _pack_stream
from nnsweeper.evaluation.runner import SEED_BLOCK as _SEED_BLOCK
from nnsweeper.evaluation.runner import Seeds as _Seeds
from nnsweeper.evaluation.store import GameStore, MemoryStore, StoreError, held_games
from nnsweeper.evaluation.table import pack_outcomes
from nnsweeper.solvers import get_solver


def ident(description: str, code: str = "c" * 64, **weights) -> dict:
    """A solver's identity as the harness makes it (solver_identity), with made-up digests."""
    return {"description": description, "code": code, "weights": weights}


# Figures that depend on the clock; everything else in a row is a function of the games.
TIMES = ("mean_seconds", "median_seconds", "max_seconds", "setup_seconds")


def same_rows(a, b):
    """Rows equal in every figure but the times (NaN equal to NaN)."""
    assert len(a) == len(b)
    for r, s in zip(a, b, strict=True):
        for key in r:
            if key in TIMES:
                continue
            x, y = r[key], s[key]
            assert x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y)), (key, x, y)


def wins_on_even_seed(env, rng):
    return env.seed % 2 == 0


class Interrupting:
    """A solver that wins on even seeds and raises KeyboardInterrupt at its ``stop``-th game."""

    def __init__(self, stop):
        self.stop, self.played = stop, 0

    def __call__(self, env, rng):
        self.played += 1
        if self.played == self.stop:
            raise KeyboardInterrupt
        return env.seed % 2 == 0

    def __repr__(self):
        return "Interrupting()"


# ------------------------------------------------------------------ seeds
@settings(max_examples=40, deadline=None)
@given(base=st.integers(0, 2**32), cuts=st.lists(st.integers(0, 3 * _SEED_BLOCK), min_size=1, max_size=6))
def test_seeds_drawn_in_blocks_are_the_notebooks_seeds(base, cuts):
    """Any run of seeds, asked in any order, is the same slice of the one-shot draw."""
    top = 3 * _SEED_BLOCK + 5
    whole = game_seeds(base, top)
    seeds = _Seeds(base)
    edges = sorted(cuts)
    for a, b in [*zip([0, *edges], [*edges, top], strict=True), (edges[0] // 2, edges[-1])]:
        np.testing.assert_array_equal(seeds.take(a, b), whole[a:b])


# ------------------------------------------------------------- summaries
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0, 1e4, width=32), min_size=1, max_size=30), min_size=1, max_size=8))
def test_median_of_chunks_is_numpys(chunks):
    arrays = [np.array(c, dtype=np.float64) for c in chunks]
    whole = np.concatenate(arrays)
    assert _median(lambda: iter(arrays), len(whole)) == float(np.median(whole))


def test_median_is_exact_when_every_time_is_in_one_bin():
    x = 1.0 + np.arange(10_001) * 2.0**-20  # all share the top 16 bits of their float32
    rng = np.random.default_rng(0)
    rng.shuffle(x)
    assert _median(lambda: iter(np.array_split(x, 7)), len(x)) == float(np.median(x)) == 1.0 + 5000 * 2.0**-20


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), max_size=21), min_size=1, max_size=6))
def test_packing_in_chunks_packs_the_whole(chunks):
    whole = np.array([b for c in chunks for b in c], dtype=bool)
    assert _pack_stream(np.array(c, dtype=bool) for c in chunks) == pack_outcomes(whole)


# ----------------------------------------------------------------- store
def results(won, seconds=0.5):
    n = len(won)
    return GameResults(np.array(won, dtype=bool), np.arange(n, dtype=np.float64), np.full(n, 0.25),
                       np.full(n, seconds), np.zeros(n, np.int32), np.zeros(n, np.int32),
                       np.zeros(n, np.int32), setup_seconds=1.5)


@pytest.mark.parametrize("kind", ["disk", "memory"])
def test_a_store_keeps_chunks_and_knows_what_is_missing(tmp_path, kind):
    board = Board("5x5", 5, 5, 3)
    with (GameStore(tmp_path / "s", base_seed=4, first_click="safe", version="x") if kind == "disk"
          else MemoryStore()) as store:
        job = store.job("csp", ident("CSP()"), board)
        assert job.missing(10) == [(0, 10)] and job.done(10) == 0
        job.write(0, results([True, False, True]))
        job.write(6, results([False, True, True, True, False, False]))
        assert job.missing(10) == [(3, 6)] and job.missing(8) == [(3, 6)] and job.done(12) == 9
        assert job.tally(10) == (5, 7)  # games 0-2 and 6-9 of [0, 10)
        with pytest.raises(StoreError, match="lacks games 3 to 5 of the 10"):
            list(job.read(10))
        job.write(3, results([True] * 3, seconds=1 / 3))
        parts = list(job.read(10))
        assert sum(len(p) for p in parts) == 10
        won = np.concatenate([p.won for p in parts])
        np.testing.assert_array_equal(won, [1, 0, 1, 1, 1, 1, 0, 1, 1, 1])
        # Times keep float32 precision, wherever the games are kept.
        assert parts[1].seconds[0] == float(np.float32(1 / 3))
        assert [p.setup_seconds for p in parts] == [1.5, 1.5, 1.5]
        assert store.job("csp", ident("CSP()"), board) is job


def test_a_store_refuses_other_games_and_a_second_writer(tmp_path):
    path = tmp_path / "s"
    with GameStore(path, base_seed=4, first_click="safe", version="1") as store:
        store.job("csp", ident("CSP(start='corner')"), Board("5x5", 5, 5, 3))
        with pytest.raises(StoreError, match="another process is writing game store"):
            GameStore(path, base_seed=4, first_click="safe", version="1")
        assert (path / "LOCK").exists()
    assert not (path / "LOCK").exists()  # a closed store leaves no lock file
    with pytest.raises(StoreError, match=r"its base_seed 4 \(this run: 5\)"):
        GameStore(path, base_seed=5, first_click="safe", version="1")
    with pytest.raises(StoreError, match=r"its first_click 'safe' \(this run: 'zero'\)"):
        GameStore(path, base_seed=4, first_click="zero", version="1")
    with GameStore(path, base_seed=4, first_click="safe", version="2") as store:  # another version, same code
        store.job("csp", ident("CSP(start='corner')"), Board("5x5", 5, 5, 3))
        with pytest.raises(StoreError, match=r"holds games of 'csp' on 5x5 with 3 mines played by another "
                                             r"experiment: its description \"CSP\(start='corner'\)\" \(this "
                                             r"run's \"CSP\(start='center'\)\"\); remove '.*csp-5x5x3'"):
            store.job("csp", ident("CSP(start='center')"), Board("5x5", 5, 5, 3))
        store.job("csp", ident("CSP(start='center')"), Board("5x5", 5, 5, 4))  # another board: another job
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="is not empty and holds no game store"):
        GameStore(tmp_path / "other", base_seed=0, first_click="safe", version="1")
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="exists and is not a folder"):
        GameStore(tmp_path / "file", base_seed=0, first_click="safe", version="1")


def test_a_damaged_chunk_is_named(tmp_path):
    with GameStore(tmp_path / "s", base_seed=0, first_click="safe", version="1") as store:
        job = store.job("sp", ident("SP()"), Board("5x5", 5, 5, 3))
        job.write(0, results([True, False]))
        chunk = next(job.folder.glob("*.npz"))
        chunk.write_bytes(chunk.read_bytes()[:40])
        with pytest.raises(StoreError, match=f"chunk '{chunk}' is damaged"):
            list(job.read(2))


def test_every_single_byte_change_of_a_chunk_is_named_or_changes_nothing(tmp_path, each_byte_changed):
    # Each byte of a chunk, in turn, set to its complement: reading the store either refuses the
    # chunk as damaged (naming it, with the way out) or gives back the very games written. The
    # zip reader raises many kinds of exception for damaged bytes (a changed compression method
    # NotImplementedError, an "encrypted" flag RuntimeError); none may escape as itself.
    board, written = Board("5x5", 5, 5, 3), results([True, False, True])
    with GameStore(tmp_path / "s", base_seed=0, first_click="safe", version="1") as store:
        store.job("sp", ident("SP()"), board).write(0, written)
    chunk = next((tmp_path / "s").glob("*/*.npz"))

    def read():
        with GameStore(tmp_path / "s", base_seed=0, first_click="safe", version="1") as store:
            job = store.job("sp", ident("SP()"), board)
            return job.tally(3), list(job.read(3))

    refusals, reads = each_byte_changed(chunk, read, StoreError)
    for message in refusals:
        assert f"chunk '{chunk}'" in message and "remove it and run again" in message, message
    for i, (tally, (part,)) in reads:
        assert tally == (2, 3), i
        for name, _ in GameResults.FIELDS:
            assert np.array_equal(getattr(part, name), getattr(written, name)), (i, name)
        assert part.setup_seconds == written.setup_seconds, i
    assert len(refusals) > len(reads) > 0  # most bytes matter; the zip has slack (times, attributes)


def test_a_damaged_zip_index_is_one_line_of_the_command(tmp_path, capsys):
    from nnsweeper.cli import main

    out = tmp_path / "t"
    argv = ["eval", "--solvers", "single_point", "--rows", "5", "--cols", "5", "--mines", "3",
            "--trials", "4", "--jobs", "1", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    chunk = sorted(tmp_path.glob("t.games/*/*.npz"))[0]
    data = bytearray(chunk.read_bytes())
    entry = data.index(b"PK\x01\x02")  # the zip's index: its first entry's compression method (deflate)
    data[entry + 10] ^= 0x01  # 8 -> 9, deflate64, which zipfile cannot read (NotImplementedError)
    chunk.write_bytes(bytes(data))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"chunk '{chunk}' is damaged (NotImplementedError" in err, err
    assert "remove it and run again to play its games anew" in err


def test_job_folders_are_safe_and_distinct(tmp_path):
    with GameStore(tmp_path / "s", base_seed=0, first_click="safe", version="1") as store:
        a = store.job("../x", ident("A"), Board("5x5", 5, 5, 3))
        b = store.job("_/x", ident("B"), Board("5x5", 5, 5, 3))
        assert a.folder.parent == b.folder.parent == tmp_path / "s" and a.folder != b.folder


def test_held_games_counts_a_store_being_written_without_opening_it(tmp_path):
    path = tmp_path / "s"
    assert held_games(path, 10) == {}  # no store yet
    with GameStore(path, base_seed=0, first_click="safe", version="1") as store:
        odd = store.job("a/b", ident("A"), Board("5x5", 5, 5, 3))  # a name made safe: crc-suffixed folder
        odd.write(0, results([True] * 4))
        odd.write(2, results([False] * 5))  # overlaps games 2 and 3: each game counts once
        odd.write(9, results([True] * 3))
        plain = store.job("csp", ident("CSP()"), Board("5x5", 5, 5, 4))
        plain.write(0, results([True, False]))
        (odd.folder / ".000000000020-000000000030.npz.tmp").write_bytes(b"")  # a chunk being written
        (path / "csp-5x5x9").mkdir()  # a job folder whose job.json is not written yet
        # The writer holds the lock; reading what it holds takes none.
        held = held_games(path, 10)
        assert held == {odd.folder.name: ("a/b", 8), "csp-5x5x4": ("csp", 2), "csp-5x5x9": (None, 0)}
        assert odd.folder.name != "a/b-5x5x3" and held_games(path, 100)[odd.folder.name] == ("a/b", 10)
    (path / plain.folder.name / "job.json").write_text("{")  # unreadable: no solver, games still counted
    assert held_games(path, 10)["csp-5x5x4"] == (None, 2)


# ------------------------------------------------------- resumed evaluations
def test_an_interrupted_evaluation_resumes_to_the_uninterrupted_table(tmp_path):
    solvers = {"csp": get_solver("csp"), "sp": get_solver("single_point")}
    plain = evaluate(solvers, [4, 6], rows=6, cols=6, trials=120)
    store = tmp_path / "run.games"

    # Interrupt the run after some chunks: the store keeps what was finished.
    calls = []
    from nnsweeper.evaluation import store as store_module

    original = store_module._DiskJob.write

    def write_then_stop(self, a, part):
        original(self, a, part)
        calls.append((self.name, a, len(part)))
        if len(calls) == 5:
            raise KeyboardInterrupt

    store_module._DiskJob.write = write_then_stop
    try:
        with pytest.raises(KeyboardInterrupt, match=r"interrupted: \d+ of 480 games are recorded in"):
            evaluate(solvers, [4, 6], rows=6, cols=6, trials=120, store=store)
    finally:
        store_module._DiskJob.write = original
    kept = sum(n for _, _, n in calls)
    assert 0 < kept < 480

    played = []
    original_play = play_games

    def counting(solver, board, first_click, seeds, record):
        played.append(len(seeds))
        return original_play(solver, board, first_click, seeds, record)

    from nnsweeper.evaluation import runner

    runner.play_games = counting
    try:
        resumed = evaluate(solvers, [4, 6], rows=6, cols=6, trials=120, store=store)
    finally:
        runner.play_games = original_play
    assert sum(played) == 480 - kept  # nothing recorded is played again
    same_rows(resumed.rows, plain.rows)
    # A longer run on the same store plays only the new games.
    played.clear()
    runner.play_games = counting
    try:
        longer = evaluate(solvers, [4, 6], rows=6, cols=6, trials=150, store=store)
    finally:
        runner.play_games = original_play
    assert sum(played) == 4 * 30
    same_rows(longer.rows, evaluate(solvers, [4, 6], rows=6, cols=6, trials=150).rows)


def test_a_plain_callable_resumes_after_an_exception_in_this_process(tmp_path):
    store = tmp_path / "s"
    with pytest.raises(KeyboardInterrupt):
        evaluate({"even": Interrupting(stop=70)}, [3], rows=5, cols=5, trials=100, store=store)
    table = evaluate({"even": Interrupting(stop=-1)}, [3], rows=5, cols=5, trials=100, store=store)
    seeds = game_seeds(0, 100)
    np.testing.assert_array_equal(unpack_outcomes(table.rows[0]["outcomes"], 100), seeds % 2 == 0)


def test_the_store_must_be_a_path():
    with pytest.raises(ValueError, match="store must be a folder path or None; got 3"):
        evaluate({"even": wins_on_even_seed}, [3], rows=5, cols=5, trials=2, store=3)


# ------------------------------------------------------------ the command
def _eval_command(out, trials):
    return [sys.executable, "-m", "nnsweeper", "eval", "--solvers", "csp,single_point", "--rows", "8",
            "--cols", "8", "--mines", "10,12", "--trials", str(trials), "--jobs", "2", "--quiet",
            "--out", str(out)]


def _children(pid):
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


_KILL_TRIALS = 3000  # long enough a run to be killed with its fourth chunk written


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The rows of the run that the killed runs must end with, played once without a stop."""
    whole = tmp_path_factory.mktemp("whole") / "whole"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(_eval_command(whole, _KILL_TRIALS), check=True, env=env, capture_output=True)
    return json.loads(whole.with_suffix(".json").read_text())["rows"]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_command_resumes_to_the_uninterrupted_table(tmp_path, sig, uninterrupted):
    import psutil

    trials = _KILL_TRIALS
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cut = tmp_path / "cut"
    proc = subprocess.Popen(_eval_command(cut, trials), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    store = tmp_path / "cut.games"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(store.glob("*/*.npz"))) < 4:
        time.sleep(0.05)
    workers = _children(proc.pid)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGTERM:
        assert proc.returncode == 130 and b"run the same command again" in err, err
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"workers alive 10 s after {sig.name}: {alive}"
    assert not (tmp_path / "cut.json").exists()
    chunks = list(store.glob("*/*.npz"))
    assert chunks
    subprocess.run(_eval_command(cut, trials), check=True, env=env, capture_output=True)
    same_rows(uninterrupted, json.loads((tmp_path / "cut.json").read_text())["rows"])


@pytest.mark.cluster
def test_a_dask_run_that_loses_a_worker_plays_the_local_games(tmp_path, dask_scheduler_address, monkeypatch):
    """eval on a real scheduler with two worker processes, one killed mid-run: the local table."""
    from nnsweeper.cli import main
    from nnsweeper.evaluation import store as store_module

    address, workers = dask_scheduler_address
    args = ["eval", "--solvers", "csp,single_point", "--rows", "8", "--cols", "8", "--mines", "10,12",
            "--trials", "600", "--start", "corner", "--quiet"]
    assert main([*args, "--jobs", "1", "--out", str(tmp_path / "local")]) == 0
    written = []
    original = store_module._DiskJob.write

    def write_and_kill(self, a, part):
        original(self, a, part)
        written.append(len(part))
        if len(written) == 2:  # a chunk is in, the rest is being played: lose a worker
            workers[0].kill()
            workers[0].wait(timeout=10)

    monkeypatch.setattr(store_module._DiskJob, "write", write_and_kill)
    assert main([*args, "--backend", "dask", "--scheduler", address, "--out", str(tmp_path / "dask")]) == 0
    assert workers[0].poll() is not None and workers[1].poll() is None
    assert sum(written) == 4 * 600  # every game once, none lost with the worker
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("local", "dask"))
    same_rows(a["rows"], b["rows"])
    assert [r["workers"] for r in b["metadata"]["runs"]] == [2]


def test_games_in_memory_are_let_go_as_each_configuration_is_summarised(monkeypatch):
    """Without a store only the configurations being played are held, not the whole run."""
    from nnsweeper.evaluation import eval_solver_over_mines
    from nnsweeper.evaluation import store as store_module

    held, peak = {}, [0]
    write, release = store_module._MemoryJob.write, store_module._MemoryJob.release

    def counting_write(self, a, part):
        write(self, a, part)
        held[id(self)] = held.get(id(self), 0) + len(part)
        peak[0] = max(peak[0], sum(held.values()))

    def counting_release(self):
        release(self)
        held[id(self)] = 0

    monkeypatch.setattr(store_module._MemoryJob, "write", counting_write)
    monkeypatch.setattr(store_module._MemoryJob, "release", counting_release)
    table = evaluate({"even": wins_on_even_seed}, [3, 4, 5, 6], rows=5, cols=5, trials=50)
    assert peak[0] == 50 and sum(held.values()) == 0  # one configuration at a time, none kept
    seeds = game_seeds(0, 50)
    assert [r["wins"] for r in table.rows] == [int((seeds % 2 == 0).sum())] * 4
    peak[0] = 0
    rates = eval_solver_over_mines(wins_on_even_seed, [3, 4, 5], rows=5, cols=5, trials=50)
    assert peak[0] == 50 and list(rates) == [(seeds % 2 == 0).mean()] * 3


def test_a_run_that_fails_keeps_its_games_and_says_so(tmp_path):
    class Breaks:
        def __init__(self):
            self.played = 0

        def __call__(self, env, rng):
            self.played += 1
            if self.played == 120:
                raise RuntimeError("a solver's bug")
            return env.seed % 2 == 0

        def __repr__(self):
            return "Breaks()"

    store = tmp_path / "s"
    with pytest.raises(RuntimeError, match="a solver's bug"):
        evaluate({"b": Breaks()}, [3], rows=5, cols=5, trials=200, store=store)
    with GameStore(store, base_seed=0, first_click="safe", version=__import__("nnsweeper").__version__) as st:
        runs = st.runs()
        assert [r["status"] for r in runs] == ["failed"] and 0 < runs[0]["games"] < 200
        job = st.job("b", solver_identity(Breaks()), Board("5x5", 5, 5, 3))
        assert job.done(200) == runs[0]["games"]


# ------------------------------------------------- a store that cannot lie
def _chunks(store, job_name):
    return sorted((store / job_name).glob("0*.npz"))


def _rerun_refused(match, *args, **kwargs):
    with pytest.raises(StoreError, match=match):
        evaluate(*args, **kwargs)


def test_a_checkpoint_replaced_under_the_same_path_is_another_experiment(tmp_path):
    import torch

    from nnsweeper.models import MineModel, save_checkpoint

    path = tmp_path / "m.pt"
    models = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        models.append(MineModel.from_config({"arch": "cnn", "channels": 4, "blocks": 1}))
    save_checkpoint(path, models[0])
    store = tmp_path / "s"
    args = dict(rows=5, cols=5, trials=30, store=store)
    evaluate({"m": get_solver("hybrid-cnn", model=path)}, [4], **args)
    save_checkpoint(path, models[1])  # another model saved over the same path
    args["trials"] = 60
    _rerun_refused(rf"checkpoint '{path}' held other bytes \(sha256 [0-9a-f]{{12}}, now [0-9a-f]{{12}}\); "
                   r"remove '.*m-5x5x4' \(or run with --replace-changed; in Python, on_change='replace'\)",
                   {"m": get_solver("hybrid-cnn", model=path)}, [4], **args)
    # Asked to, the store plays that solver's games anew: the table of the new model alone.
    fresh = evaluate({"m": get_solver("hybrid-cnn", model=path)}, [4], on_change="replace", **args)
    same_rows(fresh.rows, evaluate({"m": get_solver("hybrid-cnn", model=path)}, [4], rows=5, cols=5,
                                   trials=60).rows)
    assert fresh.metadata["weights"]["m"][str(path)] == solver_identity(
        get_solver("hybrid-cnn", model=path))["weights"][str(path)]


def test_games_of_other_code_are_refused_at_the_job_and_at_every_chunk(tmp_path, monkeypatch):
    from nnsweeper.evaluation import identity

    store = tmp_path / "s"
    solvers = {"sp": get_solver("single_point")}
    evaluate(solvers, [3], rows=5, cols=5, trials=40, store=store)
    monkeypatch.setattr(identity, "code_digest", lambda solver=None: "d" * 64)
    _rerun_refused(r"other nnsweeper code played them \(playing code [0-9a-f]{12}, this run's dddddddddddd\)",
                   solvers, [3], rows=5, cols=5, trials=80, store=store)
    # Without the job's record the chunks still say which code played them.
    (store / "sp-5x5x3" / "job.json").unlink()
    chunk = _chunks(store, "sp-5x5x3")[0]
    _rerun_refused(rf"chunk '{chunk}' holds games of another experiment: other nnsweeper code played "
                   r"them .*; remove it and run again to play its games anew",
                   solvers, [3], rows=5, cols=5, trials=80, store=store)
    for old in _chunks(store, "sp-5x5x3"):
        old.unlink()
    fresh = evaluate(solvers, [3], rows=5, cols=5, trials=80, store=store)
    same_rows(fresh.rows, evaluate(solvers, [3], rows=5, cols=5, trials=80).rows)


@pytest.mark.parametrize("foreign", ["base_seed", "solver", "board", "range"])
def test_a_foreign_chunk_is_refused(tmp_path, foreign):
    solvers = {"sp": get_solver("single_point")}
    home = tmp_path / "home"
    evaluate(solvers, [3], rows=5, cols=5, trials=40, store=home)
    target = _chunks(home, "sp-5x5x3")[0]
    other = tmp_path / "other"
    if foreign == "base_seed":
        evaluate(solvers, [3], rows=5, cols=5, trials=40, base_seed=7, store=other)
        source, said = _chunks(other, "sp-5x5x3")[0], r"its base_seed 7 \(this run's 0\)"
    elif foreign == "solver":
        evaluate({"sp": get_solver("csp")}, [3], rows=5, cols=5, trials=40, store=other)
        source = _chunks(other, "sp-5x5x3")[0]
        said = r"its description \"CSPSolver\(.*\)\" \(this run's \"Single"
    elif foreign == "board":
        evaluate(solvers, [4], rows=5, cols=5, trials=40, store=other)
        source, said = _chunks(other, "sp-5x5x4")[0], r"its mines 4 \(this run's 3\)"
    else:  # the right games under another range's name
        evaluate(solvers, [3], rows=5, cols=5, trials=80, store=other)
        source, said = _chunks(other, "sp-5x5x3")[-1], r"its games \[\d+, 80\] \(this run's \[0, 40\]\)"
        target = target.with_name(f"{0:012d}-{40:012d}.npz")
        for old in _chunks(home, "sp-5x5x3"):
            old.unlink()
    target.write_bytes(source.read_bytes())
    _rerun_refused(rf"chunk '{target}' holds games of another experiment: .*{said}", solvers, [3],
                   rows=5, cols=5, trials=40, store=home)


def test_damaged_files_are_named_with_a_way_out_that_keeps_the_games(tmp_path):
    solvers = {"sp": get_solver("single_point")}
    store = tmp_path / "s"
    plain = evaluate(solvers, [3], rows=5, cols=5, trials=60)
    evaluate(solvers, [3], rows=5, cols=5, trials=60, store=store)
    # runs.json, store.json and job.json: removing the damaged file is the way out; no game is lost.
    ways_out = {"runs.json": "it only lists the past runs, every game is kept",
                "store.json": "every game is kept",
                "sp-5x5x3/job.json": "its chunks are kept and checked one by one"}
    for name, way_out in ways_out.items():
        (store / name).write_text('{"runs": [')
        _rerun_refused(rf"'{store / name}' is damaged \(.*\); remove it and run the same command again: "
                       rf"{way_out}", solvers, [3], rows=5, cols=5, trials=60, store=store)
        (store / name).unlink()
        same_rows(evaluate(solvers, [3], rows=5, cols=5, trials=60, store=store).rows, plain.rows)
    # A chunk emptied by a power loss before its bytes reached the disk: named, then played anew.
    chunk = _chunks(store, "sp-5x5x3")[0]
    chunk.write_bytes(b"")
    _rerun_refused(rf"chunk '{chunk}' is damaged \(EOFError: .*\); remove it and run again to play its "
                   r"games anew",
                   solvers, [3], rows=5, cols=5, trials=60, store=store)
    chunk.unlink()
    same_rows(evaluate(solvers, [3], rows=5, cols=5, trials=60, store=store).rows, plain.rows)


def test_leftover_temporary_files_do_not_block_a_store(tmp_path):
    store = tmp_path / "s"
    store.mkdir()
    (store / ".store.json.k2j4h_x9.json").write_text("{")  # a killed first write of store.json
    solvers = {"sp": get_solver("single_point")}
    table = evaluate(solvers, [3], rows=5, cols=5, trials=30, store=store)
    same_rows(table.rows, evaluate(solvers, [3], rows=5, cols=5, trials=30).rows)
    assert not list(store.glob(".*"))


def test_a_newer_store_format_is_refused_with_upgrade_as_the_way_out(tmp_path):
    store = tmp_path / "s"
    store.mkdir()
    (store / "store.json").write_text(json.dumps({"format": 3, "base_seed": 0, "first_click": "safe"}))
    _rerun_refused(r"has format 3, newer than the format 2 this nnsweeper \(.*\) reads: a newer nnsweeper "
                   r"wrote it; upgrade nnsweeper to continue it \(its games are kept\)",
                   {"sp": get_solver("single_point")}, [3], rows=5, cols=5, trials=30, store=store)
    assert json.loads((store / "store.json").read_text())["format"] == 3  # left as it was


def test_an_older_store_format_is_refused(tmp_path):
    store = tmp_path / "s"
    store.mkdir()
    (store / "store.json").write_text(json.dumps({"format": 1, "base_seed": 0, "first_click": "safe",
                                                  "nnsweeper_version": "0.1.0"}))
    _rerun_refused(r"has format 1, not 2 \(before format 2 its chunks recorded no experiment",
                   {"sp": get_solver("single_point")}, [3], rows=5, cols=5, trials=30, store=store)


def test_the_code_digest_follows_the_code_that_plays(tmp_path, monkeypatch):
    import shutil

    from nnsweeper import sourcecode
    from nnsweeper.evaluation import identity

    modules = identity.playing_modules()
    for name in ("nnsweeper.solvers.csp", "nnsweeper.solvers.search", "nnsweeper.engine.probability",
                 "nnsweeper.game", "nnsweeper.evaluation.games", "nnsweeper.models.gnn",
                 "nnsweeper.features"):
        assert name in modules
    for name in modules:  # no command line, plot, training or data generation
        assert not name.startswith(("nnsweeper.cli", "nnsweeper.plots", "nnsweeper.training",
                                    "nnsweeper.datasets", "nnsweeper.evaluation.table", "nnsweeper.parallel"))
    copy = tmp_path / "nnsweeper"
    shutil.copytree(sourcecode._ROOT, copy, ignore=shutil.ignore_patterns("*.pt", "__pycache__"))
    monkeypatch.setattr(sourcecode, "_ROOT", copy)
    try:
        sourcecode.clear_cache()
        before = identity.code_digest()
        with open(copy / "cli" / "evaluation.py", "a") as fh:
            fh.write("\n# a comment\n")
        (copy / "plots" / "new.py").write_text("x = 1\n")
        sourcecode.clear_cache()
        assert identity.code_digest() == before  # not code that plays
        sp = copy / "solvers" / "single_point.py"
        sp.write_bytes(sp.read_bytes().replace(b"\n", b"\r\n"))
        sourcecode.clear_cache()
        assert identity.code_digest() == before  # other line endings, same code
        solvers = {name: get_solver(name) for name in ("single_point", "csp", "search", "gnn")}
        each = {name: identity.code_digest(fn) for name, fn in solvers.items()}
        sp.write_bytes(sp.read_bytes() + b"\r\nx = 1\r\n")
        sourcecode.clear_cache()
        assert identity.code_digest() != before
        # Each solver's digest covers the code its games go through, not the other solvers'.
        after = {name: identity.code_digest(fn) for name, fn in solvers.items()}
        assert [name for name in solvers if after[name] != each[name]] == ["single_point"]
        gnn = copy / "models" / "gnn.py"  # the registry imports it by name: followed all the same
        gnn.write_bytes(gnn.read_bytes() + b"\nx = 1\n")
        sourcecode.clear_cache()
        assert identity.code_digest(solvers["gnn"]) != after["gnn"]
        assert identity.code_digest(solvers["search"]) == after["search"]
    finally:
        monkeypatch.undo()
        sourcecode.clear_cache()


def test_chunks_played_by_other_code_or_weights_are_not_kept(tmp_path, monkeypatch):
    from nnsweeper.evaluation import runner

    digests = iter(["a" * 64] + ["b" * 64] * 100)  # this process's, then a worker's
    monkeypatch.setattr(runner, "code_digest", lambda solver=None: next(digests))
    store = tmp_path / "s"
    with pytest.raises(StoreError, match=r"a worker plays other nnsweeper code \(playing code bbbbbbbbbbbb, "
                                         r"this run's aaaaaaaaaaaa\); its games of 'sp' were not kept"):
        evaluate({"sp": get_solver("single_point")}, [3], rows=5, cols=5, trials=40, store=store)
    assert not _chunks(store, "sp-5x5x3")
    monkeypatch.undo()

    class Replaced:
        """A solver whose checkpoint is replaced after its first chunk."""

        def __init__(self):
            self.asked = 0

        def weights(self):
            self.asked += 1
            # Asked by the harness, by the run, then after every chunk: replaced after the first.
            return {"m.pt": "1" * 64 if self.asked <= 3 else "2" * 64}

        def __call__(self, env, rng):
            return env.seed % 2 == 0

    with pytest.raises(StoreError, match=r"a worker played 'r' with other weights than this run's .*was a "
                                         r"checkpoint replaced during the run\?"):
        evaluate({"r": Replaced()}, [3], rows=5, cols=5, trials=40, store=store)
    assert len(_chunks(store, "r-5x5x3")) == 1  # the chunk played before the change, and no other


def test_a_write_past_a_file_size_limit_names_the_file(tmp_path):
    import resource

    def limit():  # store.json and job.json fit, a chunk of games does not
        resource.setrlimit(resource.RLIMIT_FSIZE, (1500, resource.RLIM_INFINITY))

    out = tmp_path / "t"
    proc = subprocess.run([sys.executable, "-m", "nnsweeper", "eval", "--solvers", "single_point", "--rows",
                           "5", "--cols", "5", "--mines", "3", "--trials", "20", "--jobs", "1", "--quiet",
                           "--out", str(out)], preexec_fn=limit, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    job = tmp_path / "t.games" / "single_point-5x5x3"
    assert re.fullmatch(rf"nnsweeper: error: \[Errno 27\] cannot write '{job}/\d{{12}}-\d{{12}}\.npz': File "
                        r"too large\n", proc.stderr), proc.stderr
    assert not list(job.glob(".*"))  # no temporary file left


def test_a_row_is_the_same_whether_its_games_are_held_or_streamed(tmp_path, monkeypatch):
    """A job of at most HOLD_GAMES games is read once and held; a larger one is read from the store
    once per figure. Every figure of the row, the times and the outcomes included, is the same."""
    from nnsweeper.evaluation import rows

    solvers = {"csp": get_solver("csp"), "sp": get_solver("single_point")}
    held = evaluate(solvers, [4, 6], rows=6, cols=6, trials=90, store=tmp_path / "games")
    monkeypatch.setattr(rows, "HOLD_GAMES", 10)
    streamed = evaluate(solvers, [4, 6], rows=6, cols=6, trials=90, store=tmp_path / "games")
    for r, s in zip(held.rows, streamed.rows, strict=True):
        assert r.keys() == s.keys()
        for key, x in r.items():
            assert x == s[key] or (isinstance(x, float) and math.isnan(x) and math.isnan(s[key])), key
