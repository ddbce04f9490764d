"""Dataset generation: labels, determinism, resume after a kill, held-out seeds, bad input."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.datasets import (
    SPLITS,
    Part,
    check_seed_overlap,
    generate,
    load_manifest,
    manifest_seeds,
    parse_part,
    read_shard,
    record_game,
    resolve_parts,
    split_range,
    stream_seeds,
)
from nnsweeper.errors import ChecksumError, DatasetError, SeedOverlapError
from nnsweeper.grid import neighbour_sum
from nnsweeper.solvers import first_click_cell


def _states(root: Path, manifest: dict, split=None):
    for entry in manifest["shards"]:
        if split is None or entry["split"] == split:
            yield entry, read_shard(root / entry["file"], entry["sha256"])


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("data") / "small"
    m = generate(root, ["6x6:4-6:12", "beginner:6:explore"], seed=3, shard_games=5, start="random")
    return root, m


@pytest.fixture(scope="module")
def calib(tmp_path_factory):
    root = tmp_path_factory.mktemp("data") / "calib"
    m = generate(root, ["8x8:10:240"], seed=11, shard_games=60, start="random", splits=(1, 0, 0))
    return root, m


# ----------------------------------------------------------------- the mixture
def test_parse_part_grammar():
    assert [p.mines for p in parse_part("10x10:5-30/5:200")] == [5, 10, 15, 20, 25, 30]
    assert [p.mines for p in parse_part("10x10:5-7")] == [5, 6, 7]
    assert [p.mines for p in parse_part("8x9:3,9")] == [3, 9]
    (p,) = parse_part("expert:50:explore")
    assert (p.rows, p.cols, p.mines, p.games, p.policy) == (16, 30, 99, 50, "explore")
    assert p.key == "16x30-m99-safe-explore"
    (q,) = parse_part("beginner", games=7, first_click="zero")
    assert (q.games, q.first_click, q.policy) == (7, "zero", "csp")
    mixed = resolve_parts(["mixed"], games=3)
    assert len(mixed) == 26 + 3
    # A part's own record mode: another configuration, with games of its own.
    (g,) = parse_part("expert:50:search:none:guess")
    assert (g.record, g.key) == ("guess", "16x30-m99-safe-search-noflags-guess")
    (plain,) = parse_part("expert:50:search:none")
    assert len(g.stream_key) == 7 and g.stream_key[:6] == plain.stream_key
    assert g.to_dict()["record"] == "guess" and "record" not in p.to_dict()
    assert {(p.rows, p.cols) for p in mixed} == {(10, 10), (9, 9), (16, 16), (16, 30)}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("10x10", "ROWSxCOLS:MINES"),
        ("10by10:5:3", "ROWSxCOLS:MINES"),
        ("10x10:five", "mines must be"),
        ("10x10:9-5", "empty mine range"),
        ("10x10:5:0", "games must be at least 1; got 0"),
        ("10x10:5:x", "games must be a positive integer"),
        ("10x10:5:3:greedy", "unknown policy 'greedy'"),
        ("3x3:9:5", "impossible configuration 3x3 with 9 mines"),
        ("10x10:5:3:csp:extra", "unknown flags 'extra'"),
        ("10x10:5:3:csp:all:x", "unknown record mode 'x'; choose one of all, guess"),
        ("10x10:5:3:csp:all:guess:x", "too many"),
    ],
)
def test_parse_part_refuses(text, words):
    with pytest.raises(DatasetError, match=words):
        parse_part(text)


def test_a_part_records_every_decision_or_only_guesses_of_games_of_its_own(tmp_path):
    out = tmp_path / "d"
    generate(out, ["6x6:7:6:csp", "6x6:7:6:csp::guess"], splits=(1, 0, 0), seed=3, n_jobs=1, progress=False)
    manifest = load_manifest(out)

    def states(key):
        shards = [read_shard(out / e["file"]) for e in manifest["shards"] if e["config"] == key]
        return np.concatenate([sh["guess"] for sh in shards])

    every, guesses = states("6x6-m7-safe-csp"), states("6x6-m7-safe-csp-guess")
    assert guesses.all() and len(guesses) > 0 and not every.all()
    seeds = {c["configuration"]: set(stream_seeds(c)) for c in manifest["seed_streams"]}
    assert not seeds["6x6-m7-safe-csp"] & seeds["6x6-m7-safe-csp-guess"]


def test_duplicate_configuration_refused():
    with pytest.raises(DatasetError, match="10x10-m5-safe-csp appears twice"):
        resolve_parts(["10x10:5:10", "10x10:4-6:10"])


# ----------------------------------------------------------------- the labels
def test_labels_agree_with_the_hidden_layout(small):
    root, m = small
    parts = {p["rows"] * 100 + p["cols"]: p for p in m["arguments"]["parts"]}
    checked = 0
    for _, s in _states(root, m):
        for k in range(len(s["grid"])):
            grid, flags, mines = s["grid"][k], s["flags"][k], s["mines"][k]
            seed = int(s["game_seed"][k])
            rules = ns.Rules(grid.shape[0], grid.shape[1], int(s["total_mines"][k]),
                             parts[grid.shape[0] * 100 + grid.shape[1]]["first_click"])
            game = ns.Game(rules, seed=seed)
            game.reveal(*first_click_cell("random", *grid.shape, np.random.default_rng(seed)))
            layout = game.mine_layout()
            covered = grid < 0
            # The truth is the hidden layout on covered cells, and nothing elsewhere.
            np.testing.assert_array_equal(mines, layout & covered)
            assert not (layout & ~covered).any()
            # Revealed numbers are the layout's neighbour counts; flags sit on mines.
            np.testing.assert_array_equal(grid[~covered], neighbour_sum(layout)[~covered])
            assert not (flags & ~layout).any()
            checked += 1
    assert checked == sum(e["states"] for e in m["shards"]) > 100


def test_exact_probabilities_and_certainties(small):
    root, m = small
    for _, s in _states(root, m):
        for k in range(0, len(s["grid"]), 3):
            p = ns.mine_probabilities(s["grid"][k], int(s["total_mines"][k]), s["flags"][k])
            np.testing.assert_array_equal(s["prob"][k], p)
        covered = s["grid"] < 0
        assert not (s["mines"] & (s["prob"] == 0.0) & covered).any()
        assert (s["mines"][s["prob"] == 1.0]).all()
        assert (s["prob"][s["flags"]] == 1.0).all()
        assert (s["prob"][~covered] == 0.0).all()


def test_labels_are_calibrated(calib):
    """The mean exact probability of a bucket of cells matches its observed mine rate.

    The standard error is clustered by game (cells of one game are not independent).
    """
    root, m = calib
    edges = np.linspace(0, 1, 11)
    per_game = {}
    for _, s in _states(root, m):
        unknown = (s["grid"] < 0) & ~s["flags"]
        for k in range(len(s["grid"])):
            p, y = s["prob"][k][unknown[k]], s["mines"][k][unknown[k]]
            b = np.minimum((p * 10).astype(int), 9)  # tenths, as the card bins them
            acc = per_game.setdefault(int(s["game"][k]), np.zeros((3, 10)))
            acc += [np.bincount(b, minlength=10), np.bincount(b, p, 10), np.bincount(b, y, 10)]
    games = np.stack(list(per_game.values()))  # (games, 3, bins)
    n, psum, ysum = games.sum(axis=0)
    tested = 0
    for b in range(10):
        if n[b] < 500:
            continue
        mean_p, rate = psum[b] / n[b], ysum[b] / n[b]
        resid = games[:, 2, b] - rate * games[:, 0, b]
        se = np.sqrt((resid**2).sum()) / n[b]
        assert abs(rate - mean_p) < 4 * se + 0.005, (b, mean_p, rate, se)
        assert edges[b] <= mean_p <= edges[b + 1]
        tested += 1
    assert tested >= 5
    # The card's own calibration table sums the same cells.
    card = m["statistics"]["calibration"]
    np.testing.assert_array_equal(card["cells"], n)
    np.testing.assert_array_equal(card["mines"], ysum)


def test_record_guess_keeps_only_guesses():
    rules = ns.Rules(9, 9, 10)
    every, _ = record_game(rules, 2**62 + 5, "csp", record="all")
    guesses, _ = record_game(rules, 2**62 + 5, "csp", record="guess")
    assert guesses["guess"].all()
    kept = every["guess"]
    for name in ("grid", "flags", "prob", "step"):
        np.testing.assert_array_equal(guesses[name], every[name][kept])
    # A state where the policy had to guess has no cell the engine proves safe.
    unknown = (every["grid"] < 0) & ~every["flags"]
    assert not ((every["prob"] == 0) & unknown)[kept].any()


def test_explore_takes_random_non_certain_guesses():
    rules = ns.Rules(16, 16, 40)
    total = 0
    for seed in range(2**62, 2**62 + 6):
        plain, _ = record_game(rules, seed, "csp")
        wild, _ = record_game(rules, seed, "explore", epsilon=0.5)
        unknown = (wild["grid"] < 0) & ~wild["flags"]
        # Guesses at states with a provably safe cell are exploration moves.
        total += int((wild["guess"] & ((wild["prob"] == 0) & unknown).any(axis=(1, 2))).sum())
        assert not ((plain["prob"] == 0) & (plain["grid"] < 0) & ~plain["flags"])[plain["guess"]].any()
    assert total > 0


def test_reveal_clears_one_proven_cell_at_a_time():
    rules = ns.Rules(16, 16, 40)
    left_covered = 0
    for seed in range(2**62 + 20, 2**62 + 24):
        states, _ = record_game(rules, seed, "reveal", start="corner")
        again, _ = record_game(rules, seed, "reveal", start="corner")
        for name in states:
            np.testing.assert_array_equal(states[name], again[name])
        unknown = (states["grid"] < 0) & ~states["flags"]
        proven = (states["prob"] == 0) & unknown
        # Every decision reveals one cell: a proven-safe one when there is one.
        assert (proven.any(axis=(1, 2)) != states["guess"]).all()
        after = states["grid"][1:] >= 0
        clicked = after & (states["grid"][:-1] < 0)
        assert (clicked.sum(axis=(1, 2)) >= 1).all()
        left_covered += int(proven.sum(axis=(1, 2)).max())
        # A csp game reveals every proven cell at once: its states keep none covered.
        plain, _ = record_game(rules, seed, "csp", start="corner")
        assert not ((plain["prob"] == 0) & (plain["grid"] < 0) & ~plain["flags"]).any(axis=(1, 2)).all()
    assert left_covered > 4


@pytest.mark.parametrize("policy", ["reveal", "search", "single_point"])
def test_flag_modes_keep_the_game_and_relabel_with_the_kept_flags(policy):
    rules = ns.Rules(9, 9, 10)
    seed = 2**62 + 77
    full, _ = record_game(rules, seed, policy, start="corner")
    some, _ = record_game(rules, seed, policy, start="corner", flags="some")
    none, _ = record_game(rules, seed, policy, start="corner", flags="none")
    assert full["flags"].any()
    for other in (some, none):  # the same game, states and truth
        for name in ("grid", "mines", "step", "guess", "game_seed"):
            np.testing.assert_array_equal(other[name], full[name])
    assert not none["flags"].any()
    assert not (some["flags"] & ~full["flags"]).any()
    assert 0 < some["flags"].sum() < full["flags"].sum()
    for states in (full, some, none):
        for k in range(len(states["grid"])):
            exact = ns.mine_probabilities(states["grid"][k], 10, states["flags"][k])
            np.testing.assert_array_equal(states["prob"][k], exact)
        # Dropped flags were proven mines: the probabilities are those with every flag.
        np.testing.assert_allclose(states["prob"], full["prob"], rtol=0, atol=1e-12)


def test_a_network_policy_plays_the_bundled_model_without_flags_and_its_weights_are_recorded(tmp_path):
    from nnsweeper.datasets.policies import record_game
    from nnsweeper.models.digest import model_weights
    from nnsweeper.solvers import get_solver

    rules = ns.Rules(6, 6, 6)
    states, won = record_game(rules, 11, "gnn", start="center")
    assert len(states["grid"]) > 0 and not states["flags"].any()
    for grid, prob in zip(states["grid"], states["prob"], strict=True):
        np.testing.assert_allclose(prob, ns.mine_probabilities(grid, 6), rtol=0, atol=1e-12)
    # The games are the pure gnn solver's (flagging nothing): same seed, same game.
    env = ns.Game(rules, seed=11)
    rec = get_solver("gnn", flag_above=1.0).play(env, np.random.default_rng(11))
    assert rec.won == won and len(rec.moves) - 1 >= len(states["grid"])
    (part,) = resolve_parts(["6x6:6:2:gnn"])
    assert part.to_dict()["weights"] == model_weights("gnn")
    assert "weights" not in resolve_parts(["6x6:6:2:csp"])[0].to_dict()


def test_broad_and_unseen_mixtures():
    from nnsweeper.datasets import FLAG_MODES, POLICIES

    broad, unseen = resolve_parts("broad", games=2), resolve_parts("unseen", games=2)
    kinds = {(p.policy, p.flags) for p in broad}
    logic = ("csp", "single_point", "explore", "reveal", "search")  # not the network policies
    assert kinds == {(p, f) for p in logic for f in FLAG_MODES} == {(p.policy, p.flags) for p in unseen}
    assert set(POLICIES) == {*logic, "gnn", "cnn"}
    boards = {(p.rows, p.cols, p.mines) for p in broad}
    assert {(9, 9, 10), (16, 16, 40), (16, 30, 99), (10, 10, 30), (16, 20, 70)} <= boards
    assert {(p.rows, p.cols, p.mines) for p in unseen} == {(8, 8, 20), (24, 30, 200)}
    assert not boards & {(p.rows, p.cols, p.mines) for p in unseen}
    assert len(broad) == len(boards) * len(kinds)
    assert parse_part("expert::reveal:none")[0].key == "16x30-m99-safe-reveal-noflags"
    assert parse_part("expert::search:some")[0].key == "16x30-m99-safe-search-someflags"


def test_card_counts(small):
    root, m = small
    by_key = {c["key"]: c for c in m["configurations"]}
    assert set(by_key) == {"6x6-m4-safe-csp", "6x6-m5-safe-csp", "6x6-m6-safe-csp", "9x9-m10-safe-explore"}
    for c in m["configurations"]:
        assert sum(c["games_per_split"].values()) == c["games"]
        states = sum(e["states"] for e in m["shards"] if e["config"] == c["key"])
        assert sum(c["states_per_split"].values()) == states == c["statistics"]["states"]
    rows = {r["configuration"]: r for r in m["card"]}
    assert rows["all"]["states"] == sum(e["states"] for e in m["shards"])
    st = m["statistics"]
    assert st["frontier_cells"] + st["interior_cells"] == st["unknown_cells"]
    assert rows["all"]["frontier_share"] == pytest.approx(st["frontier_cells"] / st["unknown_cells"])
    assert 0 < rows["all"]["mean_prob_safe"] < rows["all"]["mean_prob_mines"] < 1
    assert "9x9-m10-safe-explore" in m["card_text"] and "guess needed" in m["card_text"]


# ------------------------------------------------------------------ seeds
def test_split_seeds_are_disjoint_and_never_evaluation_seeds(small):
    root, m = small
    seeds = manifest_seeds(root)
    assert set(seeds) == set(SPLITS)
    for split, s in seeds.items():
        lo, hi = split_range(split)
        assert ((s >= lo) & (s < hi)).all()
    # Streams regenerate exactly the seeds in the shards.
    for split in SPLITS:
        stored = np.concatenate([s["game_seed"] for _, s in _states(root, m, split)])
        assert set(stored.tolist()) <= set(seeds[split].tolist())
    check_seed_overlap(root, ns.game_seeds(0, 5000))  # no overlap: returns quietly


def test_overlap_with_evaluation_is_refused(small, tmp_path):
    root, m = small
    evil = json.loads((root / "manifest.json").read_text())
    evil["seed_streams"].append({"split": "train", "seeds": [int(ns.game_seeds(0, 10)[7]), 12]})
    words = r"1 evaluation game seed\(s\) are also in the dataset's 'train'"
    with pytest.raises(SeedOverlapError, match=words):
        check_seed_overlap(evil, ns.game_seeds(0, 10))
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(evil))
    with pytest.raises(SeedOverlapError, match="held-out"):
        ns.evaluate(["single_point"], [3], rows=5, cols=5, trials=10, datasets=path)
    table = ns.evaluate(["single_point"], [3], rows=5, cols=5, trials=10, datasets=root)
    assert table.metadata["arguments"]["held_out_from"] == [os.fspath(root)]


# ------------------------------------------------------------ determinism
def test_same_bytes_for_any_number_of_jobs(tmp_path):
    args = dict(parts=["7x7:6-7:9", "5x6:4:5:explore"], seed=5, shard_games=4)
    a = generate(tmp_path / "a", n_jobs=1, **args)
    b = generate(tmp_path / "b", n_jobs=2, **args)
    assert a == b
    assert (tmp_path / "a/manifest.json").read_bytes() == (tmp_path / "b/manifest.json").read_bytes()
    for e in a["shards"]:
        assert (tmp_path / "a" / e["file"]).read_bytes() == (tmp_path / "b" / e["file"]).read_bytes()
    # A finished folder with the same arguments is checked and returned, not redone.
    mtime = (tmp_path / "a/manifest.json").stat().st_mtime_ns
    assert generate(tmp_path / "a", n_jobs=1, **args) == a
    assert (tmp_path / "a/manifest.json").stat().st_mtime_ns == mtime


def test_resume_after_kill_gives_identical_bytes(tmp_path):
    argv = ["10x10:15:200", "--shard-games", "2", "--seed", "9", "--jobs", "1", "--quiet"]
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "nnsweeper", "generate", str(out), *argv], env=env)
    deadline = time.monotonic() + 120
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        done = len(list(out.glob("shards/*/[!.]*.npz")))
        if done >= 4:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.005)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (out / "manifest.json").exists()
    total = 100  # 160 + 20 + 20 games in shards of 2
    assert 4 <= len(list(out.glob("shards/*/[!.]*.npz"))) < total
    # Started again with the same arguments, it finishes the rest.
    from nnsweeper.cli import main

    assert main(["generate", str(out), *argv]) == 0
    ref = tmp_path / "reference"
    assert main(["generate", str(ref), *argv]) == 0
    assert (out / "manifest.json").read_bytes() == (ref / "manifest.json").read_bytes()
    files = sorted(p.relative_to(ref) for p in ref.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert len(files) == total + 1  # the shards and the manifest: a finished run leaves no lock file
    for f in files:
        assert (out / f).read_bytes() == (ref / f).read_bytes(), f


# -------------------------------------------------------------- bad input
def test_folder_with_a_different_dataset_is_refused(small, tmp_path):
    root, m = small
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(DatasetError, match=r"holds a different dataset \(its seed differ"):
        generate(root, ["6x6:4-6:12", "beginner:6:explore"], seed=4, shard_games=5)
    with pytest.raises(DatasetError, match="parts differ"):
        generate(root, ["6x6:4-6:13", "beginner:6:explore"], seed=3, shard_games=5)
    assert before == {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    # A partial run with other arguments is refused too.
    part = tmp_path / "partial"
    part.mkdir()
    (part / ".generate.json").write_text(json.dumps({"arguments": {"seed": 1}, "nnsweeper_version": "0"}))
    with pytest.raises(DatasetError, match="holds a different dataset"):
        generate(part, ["5x5:3:2"])
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match="not empty and holds no nnsweeper dataset"):
        generate(foreign, ["5x5:3:2"])
    assert (foreign / "notes.txt").read_text() == "mine"
    # What a run killed in its first write leaves (atomic_path's temporary file) is no dataset in the way.
    killed = tmp_path / "killed"
    killed.mkdir()
    (killed / "..generate.json.ab12cd_9.json").write_text('{"nnsweeper_')
    generate(killed, ["5x5:3:2"])
    assert not list(killed.glob("..generate.json.*"))


@pytest.mark.parametrize("damage", ["truncate", "edit"])
def test_damaged_shard_is_named(small, tmp_path, damage):
    root, m = small
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    entry = m["shards"][3]
    path = copy / entry["file"]
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=entry["file"].split("/")[-1]):
        read_shard(path, entry["sha256"])
    # Asking for the finished dataset again checks every shard and names the damaged one.
    args = m["arguments"]
    with pytest.raises(ChecksumError, match="is damaged"):
        generate(copy, [Part(**p) for p in args["parts"]], seed=args["seed"], shard_games=args["shard_games"])


def test_every_single_byte_change_of_a_shard_is_named_or_changes_nothing(tmp_path, each_byte_changed):
    # A shard read without its digest (as generate reads what a killed run finished): each byte in
    # turn set to its complement is refused as damaged, naming the shard and the way out, or reads
    # back the very arrays written; never another exception of the zip reader.
    m = generate(tmp_path / "d", ["5x5:3:1"], seed=1, shard_games=1, splits=(1, 0, 0))
    path = tmp_path / "d" / m["shards"][0]["file"]
    written = read_shard(path)
    refusals, reads = each_byte_changed(path, lambda: read_shard(path), DatasetError)
    for message in refusals:
        assert f"shard '{path}' is damaged" in message and "remove it and run the same generate" in message
    for i, arrays in reads:
        assert arrays.keys() == written.keys(), i
        for name, array in written.items():
            assert arrays[name].dtype == array.dtype and np.array_equal(arrays[name], array), (i, name)
    assert len(refusals) > len(reads) > 0  # most bytes matter; the zip has slack (times, attributes)


def test_a_damaged_zip_index_of_a_resumed_shard_is_one_line(tmp_path, capsys):
    from nnsweeper.cli import main
    from nnsweeper.datasets.generate import generating_code

    out = tmp_path / "d"
    argv = ["generate", str(out), "5x5:3:4", "--shard-games", "1", "--seed", "2", "--jobs", "1", "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    # As a killed run leaves it: shards and the plan, no manifest.
    m = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").unlink()
    (out / ".generate.json").write_text(json.dumps({"nnsweeper_version": m["nnsweeper_version"],
                                                    "code": generating_code(), "arguments": m["arguments"]}))
    shard = out / m["shards"][0]["file"]
    data = bytearray(shard.read_bytes())
    entry = data.index(b"PK\x01\x02")  # the zip's index: its first entry's flags, marked encrypted
    data[entry + 8] ^= 0x01
    shard.write_bytes(bytes(data))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"shard '{shard}' is damaged" in err and "RuntimeError" in err, err


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(policy="greedy"), "unknown policy 'greedy'"),
        (dict(record="some"), "record must be one of all, guess"),
        (dict(start="middle"), "start must be one of"),
        (dict(epsilon=1.5), "epsilon must be in"),
        (dict(splits=(0.5, 0.2, 0.2)), "sum to 1"),
        (dict(splits=(0.5, 0.5)), "three fractions"),
        (dict(shard_games=0), "shard_games must be at least 1; got 0"),
        (dict(seed=-1), "seed must be at least 0; got -1"),
        (dict(games=2.5), "games must be an integer; got 2.5"),
        (dict(first_click="maybe"), "first_click must be one of"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, words):
    with pytest.raises(DatasetError, match=words):
        generate(tmp_path / "x", ["5x5:3:2"], **kwargs)
    assert not (tmp_path / "x").exists()


def test_impossible_configuration_refused(tmp_path):
    with pytest.raises(DatasetError, match="impossible configuration 4x4 with 16 mines"):
        generate(tmp_path / "x", [Part(4, 4, 16, 5)])
    with pytest.raises(DatasetError, match="impossible configuration"):
        generate(tmp_path / "x", ["4x4:12:5"], first_click="zero")
    assert not (tmp_path / "x").exists()


def test_manifest_checks(small, tmp_path):
    root, _ = small
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(DatasetError, match="not an nnsweeper dataset manifest"):
        load_manifest(bad)
    m = json.loads((root / "manifest.json").read_text())
    m["format_version"] = 99
    bad.write_text(json.dumps(m))
    with pytest.raises(DatasetError, match="format_version 99"):
        load_manifest(bad)
    with pytest.raises(DatasetError, match="no dataset manifest"):
        load_manifest(tmp_path / "nothing")


# ------------------------------------------------------------------ command line
def test_generate_command(tmp_path, capsys):
    from nnsweeper.cli import main

    out = tmp_path / "cli"
    assert main(["generate", str(out), "6x6:5:10", "--shard-games", "4", "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "6x6-m5-safe-csp" in printed and "splits: train 8 games" in printed
    assert load_manifest(out)["arguments"]["shard_games"] == 4
    assert main(["generate", str(tmp_path / "y"), "6x6:5:10:nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown policy 'nope'" in err
    assert main(["generate", str(tmp_path / "z")]) == 2
    assert "give at least one PART" in capsys.readouterr().err


def test_dask_backend_gives_the_same_dataset(tmp_path):
    pytest.importorskip("dask.distributed")
    from nnsweeper.parallel import backend

    args = dict(parts=["6x6:5:6"], seed=2, shard_games=2)
    local = generate(tmp_path / "local", n_jobs=1, **args)
    with backend("dask"):
        remote = generate(tmp_path / "dask", n_jobs=None, **args)
    assert remote == local


def _assert_same_json(a, b, where="manifest"):
    """Equal JSON values: floats within 1e-12 (relative), everything else exactly."""
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-300), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _assert_same_json(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same_json(x, y, f"{where}[{k}]")
    else:
        assert a == b, where


def test_committed_fixture_regenerates(tmp_path):
    """data/fixtures/tiny is what its documented command makes, on any machine.

    Exact things compare exactly: the configurations and counts, every state's grid,
    flags, truth and guess, and the exact probabilities, which are correctly rounded
    rationals and so the same float64 everywhere. The card's float sums (of those
    probabilities) compare within a relative 1e-12. Shard bytes are not compared: the
    deflate stream may differ between zlib builds, the arrays may not.
    """
    fixture = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "tiny"
    committed = load_manifest(fixture)
    args = committed["arguments"]
    again = generate(tmp_path / "tiny", [Part(**p) for p in args["parts"]], seed=args["seed"],
                     shard_games=args["shard_games"], splits=args["splits"], record=args["record"],
                     epsilon=args["epsilon"], start=args["start"])

    def strip(m):
        return {k: v for k, v in m.items() if k not in ("shards", "nnsweeper_version")}

    _assert_same_json(strip(again), strip(committed))
    assert [(e["file"], e["states"]) for e in again["shards"]] == [
        (e["file"], e["states"]) for e in committed["shards"]
    ]
    for old, new in zip(committed["shards"], again["shards"], strict=True):
        a, b = read_shard(fixture / old["file"], old["sha256"]), read_shard(tmp_path / "tiny" / new["file"])
        assert a.keys() == b.keys()
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=f"{old['file']}: {name}")


# ------------------------------------------------------------------ limits
@pytest.mark.parametrize(
    ("parts", "kwargs", "words"),
    [
        (["100000x100000:5:1"], {}, "impossible configuration 100000x100000 with 5 mines: rows must be at "
                                    "most 1000; got 100000"),
        (["200x200:5:1"], {}, r"at most 10000 cells .*; got 200x200 = 40000"),
        (["100x100:1500:20"], {}, r"shard_games=50 is too many for 100x100 boards: .* at most 100000 board "
                                  r"cells .*, so at most 10 games of 100x100"),
        (["10x10:5:2000000"], {}, "games must be at most 1000000; got 2000000"),
        (["10x10:5-10:200000"], {}, "at most 1000000 games; its 6 configurations ask for 1200000"),
        (["10x10:5:200000"], {"shard_games": 1}, "at most 100000 shards; .* make 200000"),
        (["10x10:1-99999999999"], {}, "at most 10000 configurations; these mine counts make 99999999999"),
        (["10x10:5:2"], {"games": 10**7}, "games must be at most 1000000"),
        (["10x10:5:2"], {"n_jobs": 10**6}, r"n_jobs must be a non-zero integer from -\d+ to \d+"),
    ],
)
def test_limits_are_refused_before_the_folder_is_touched(tmp_path, parts, kwargs, words):
    with pytest.raises(DatasetError, match=words):
        generate(tmp_path / "x", parts, **kwargs)
    assert not (tmp_path / "x").exists()


def test_limit_constants():
    from nnsweeper.datasets.generate import (
        MAX_DATASET_CELLS,
        MAX_DATASET_GAMES,
        MAX_PARTS,
        MAX_SHARD_CELLS,
        MAX_SHARDS,
    )

    assert (MAX_DATASET_CELLS, MAX_SHARD_CELLS, MAX_DATASET_GAMES, MAX_SHARDS, MAX_PARTS) == (
        10_000, 100_000, 1_000_000, 100_000, 10_000)
    # The largest boards and shards allowed are accepted.
    (p,) = parse_part("100x100:1500:10")
    assert (p.rows, p.cols, p.games) == (100, 100, 10)
    assert len(parse_part("10x10:1-98")) == 98


def test_seed_key_codes_never_change():
    # Every dataset's seeds are built from these codes; they are fixed, not list positions.
    from nnsweeper.datasets.policies import FLAG_CODES, POLICY_CODES
    from nnsweeper.game import FIRST_CLICK_CODES
    from nnsweeper.seeds import SPLIT_CODES, seed_stream

    assert POLICY_CODES == {"csp": 0, "single_point": 1, "explore": 2, "reveal": 3, "search": 4, "gnn": 5,
                            "cnn": 6}
    assert FLAG_CODES == {"all": 0, "some": 1, "none": 2}
    assert FIRST_CLICK_CODES == {"safe": 0, "zero": 1, "none": 2, "no-guess": 3, "no-guess-fast": 4}
    assert SPLIT_CODES == {"train": 0, "val": 1, "test": 2}
    part = parse_part("9x9:10:4:explore", first_click="zero")[0]
    assert part.stream_key == (9, 9, 10, 1, 2)
    entry = seed_stream(7, "val", part.stream_key, 4)
    assert entry["spawn_key"] == [0x6E6E7377, 1, 9, 9, 10, 1, 2]
    # A flag mode other than "all" adds its code; "all" keeps the key parts had before.
    assert parse_part("9x9:10:4:explore:none", first_click="zero")[0].stream_key == (9, 9, 10, 1, 2, 2)
    assert parse_part("9x9:10:4:explore:all", first_click="zero")[0] == part
    # The seeds of that stream, as the datasets made before the codes were written out have them.
    assert stream_seeds(entry).tolist() == [4952910768315896470, 4921787201867990394, 4981559585416634908,
                                            5114027343234490045]


def test_a_damaged_stream_cannot_ask_for_billions_of_seeds():
    from nnsweeper.seeds import DATA_KEY

    with pytest.raises(DatasetError, match="games must be from 0 to 1000000; got 1000000000000"):
        stream_seeds({"entropy": 0, "spawn_key": [DATA_KEY, 0, 1], "games": 10**12})


def test_second_writer_is_refused_and_the_folder_resumes_once_the_lock_is_free(tmp_path):
    from filelock import FileLock

    from nnsweeper.cli import main
    from nnsweeper.datasets.generate import LOCK_NAME

    out = tmp_path / "busy"
    out.mkdir()
    held = FileLock(os.fspath(out / LOCK_NAME))
    held.acquire()
    try:
        with pytest.raises(DatasetError, match=f"another process is writing dataset '{out}'"):
            generate(out, ["5x5:3:4"], shard_games=2)
        assert main(["generate", str(out), "5x5:3:4", "--shard-games", "2", "--jobs", "1", "--quiet"]) == 2
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]  # nothing else was written
    finally:
        held.release()
    m = generate(out, ["5x5:3:4"], shard_games=2)
    assert m["splits"]["train"]["games"] + m["splits"]["val"]["games"] + m["splits"]["test"]["games"] == 4
    assert not (out / LOCK_NAME).exists()  # removed as the run ended
    with FileLock(os.fspath(out / LOCK_NAME), timeout=0):  # free once the run ends
        pass


def test_a_killed_writer_releases_the_folder(tmp_path):
    """The lock is the kernel's: a process killed while holding it does not block the next run."""
    from nnsweeper.datasets.generate import LOCK_NAME

    out = tmp_path / "orphan"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time, filelock; lock = filelock.FileLock(sys.argv[1]); lock.acquire(); "
         "print('held', flush=True); time.sleep(600)", os.fspath(out / LOCK_NAME)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DatasetError, match="another process is writing dataset"):
            generate(out, ["5x5:3:2"])
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert (out / LOCK_NAME).exists()  # left behind by the killed process
    m = generate(out, ["5x5:3:2"])
    assert load_manifest(out) == json.loads(json.dumps(m))


def test_a_partial_dataset_of_other_code_is_refused(tmp_path, monkeypatch):
    import importlib

    gen = importlib.import_module("nnsweeper.datasets.generate")  # the module, not the function

    out = tmp_path / "d"
    original, made = gen._make_shard, []

    def stop_after_one(*task):
        if made:
            raise KeyboardInterrupt
        made.append(task)
        return original(*task)

    monkeypatch.setattr(gen, "_make_shard", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        generate(out, ["5x5:3:6"], shard_games=2, n_jobs=1)
    monkeypatch.undo()
    plan_file = out / ".generate.json"
    plan = json.loads(plan_file.read_text())
    assert plan["code"] == gen.generating_code()
    plan["code"] = "0" * 64  # as a run of other code would have written it
    plan_file.write_text(json.dumps(plan))
    with pytest.raises(DatasetError, match=r"made by other nnsweeper code \(generating code 000000000000, "
                                           r"this run's [0-9a-f]{12}\), whose shards may differ"):
        generate(out, ["5x5:3:6"], shard_games=2, n_jobs=1)
