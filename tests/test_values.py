"""Value datasets (survival play), the value network's inputs, its training and the value solver."""

import itertools
import json
import pickle

import numpy as np
import pytest
import torch

import nnsweeper as ns
from nnsweeper.datasets.policies import policy_solver
from nnsweeper.datasets.values import (
    PositionBatches,
    SurvivalGame,
    generate_values,
    load_value_manifest,
    prepare_positions,
    read_value_split,
    record_value_game,
)
from nnsweeper.errors import DatasetError
from nnsweeper.game import Game, Rules
from nnsweeper.models.checkpoint import CheckpointError
from nnsweeper.models.value import (
    VALUE_CELL_FEATURES,
    VALUE_GLOBAL_FEATURES,
    ValueGNN,
    load_value_model,
    save_value_model,
    value_inputs,
    value_metrics,
)
from nnsweeper.solvers import ValueSolver, get_solver
from nnsweeper.training import TrainingError, load_value_config, train_value


# ----------------------------------------------------------------- survival play
def test_survival_game_without_a_mine_is_the_ordinary_game():
    rules = Rules(9, 9, 10)
    for seed in range(5):
        a, b = Game(rules, seed=seed), SurvivalGame(rules, seed=seed)
        a.reveal(0, 0)
        b.reveal(0, 0)
        np.testing.assert_array_equal(a.mine_layout(), b.mine_layout())
        assert b.redraws == []


def test_a_revealed_mine_redraws_a_consistent_layout_with_the_cell_safe():
    rules = Rules(9, 9, 10)
    g = SurvivalGame(rules, seed=3)
    g.reveal(0, 0)
    before = g.observe()
    mine = tuple(np.argwhere(g.mine_layout() & (g.mask == 1))[0])
    _, reward, done, info = g.reveal(*mine)
    assert info.get("result") != "lose" and reward >= 0
    assert g.redraws == [1]
    after = g.observe()
    revealed = before >= 0
    np.testing.assert_array_equal(after[revealed], before[revealed])  # the numbers seen stay
    assert after[mine] >= 0
    assert g.mine_layout().sum() == 10
    np.testing.assert_array_equal(g._counts, ns.grid.neighbour_sum(g.mine_layout()))


def test_redraws_are_uniform_over_the_layouts_where_the_cell_is_safe():
    # 3x3, 2 mines, (0, 0) revealed as 1: the layouts put one mine among its three
    # neighbours and one elsewhere; guessing (0, 1) when it holds a mine must land on
    # each layout with (0, 1) safe equally often.
    grid = np.full((3, 3), -1)
    grid[0, 0] = 1
    layouts = []
    for cells in itertools.combinations(range(1, 9), 2):
        m = np.zeros(9, dtype=bool)
        m[list(cells)] = True
        m = m.reshape(3, 3)
        if ns.grid.neighbour_sum(m)[0, 0] == 1:
            layouts.append(m)
    wanted = [m for m in layouts if not m[0, 1]]
    start = next(m for m in layouts if m[0, 1])
    counts = dict.fromkeys((m.tobytes() for m in wanted), 0)
    draws = 1200
    for seed in range(draws):
        g = SurvivalGame(Rules(3, 3, 2), seed=seed)
        g._set_layout(start.copy())
        g.reveal(0, 0)
        assert g.observe()[0, 0] == 1
        g.reveal(0, 1)
        counts[g.mine_layout().tobytes()] += 1
    expected = draws / len(wanted)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert all(c > 0 for c in counts.values())
    assert chi2 < 30  # len(wanted) - 1 = 9 degrees of freedom: p < 0.001 beyond 27.9


class _FixedLayout(Game):
    """A game whose first reveal places a given layout."""

    def __init__(self, rules, layout, seed):
        self.layout = layout
        super().__init__(rules, seed=seed)

    def _place(self, allowed):
        self._set_layout(self.layout.copy())


def _exact_win_rate(rules, policy, start, first):
    """The policy's chance to win, averaged over every layout that the first-click rule allows."""
    rows, cols = rules.rows, rules.cols
    cells = [c for c in range(rows * cols) if c != first[0] * cols + first[1]]
    wins = n = 0
    for k, chosen in enumerate(itertools.combinations(cells, rules.mines)):
        m = np.zeros(rows * cols, dtype=bool)
        m[list(chosen)] = True
        game = _FixedLayout(rules, m.reshape(rows, cols), k)
        wins += policy_solver(policy, start, 0.0).play(game, np.random.default_rng(k)).won
        n += 1
    return wins / n


def test_value_labels_average_to_the_policys_exact_chance_to_win():
    rules = Rules(4, 4, 4)
    exact = _exact_win_rate(rules, "csp", "corner", (0, 0))
    firsts = []
    for seed in range(600):
        arrays = record_value_game(rules, seed, "csp", start="corner", record="all")
        assert arrays is not None
        # A game with no decision after the first click was won by the first click.
        firsts.append(arrays["value"][0] if len(arrays["value"]) else 1.0)
    firsts = np.array(firsts)
    se = firsts.std() / np.sqrt(firsts.size)
    assert abs(firsts.mean() - exact) < 4 * se + 1e-9, (firsts.mean(), exact, se)


@pytest.mark.parametrize("policy", ["csp", "search"])
def test_survived_at_the_first_position_is_the_ordinary_games_result(policy):
    rules = Rules(9, 9, 10)
    for seed in range(12):
        arrays = record_value_game(rules, seed, policy, start="corner", record="all")
        if not len(arrays["value"]):
            continue
        solver = policy_solver(policy, "corner", 0.0)
        won = solver.play(Game(rules, seed=seed), np.random.default_rng(seed)).won
        assert bool(arrays["survived"][0]) == won
        assert np.all(np.diff(arrays["value"]) >= 0)  # fewer guesses left, never a lower value
        assert arrays["value"][-1] > 0 and np.all(arrays["value"] <= 1)


def test_guess_records_keep_each_guess_and_its_outcome_board():
    rules = Rules(16, 16, 40)
    every = record_value_game(rules, 5, "search", start="corner", record="all")
    kept = record_value_game(rules, 5, "search", start="corner", record="guess")
    guesses = np.flatnonzero(every["guess"])
    assert guesses.size and len(kept["value"]) == 2 * guesses.size
    values = np.append(every["value"], 1.0)
    for k, t in enumerate(guesses):
        position, outcome = 2 * k, 2 * k + 1
        np.testing.assert_array_equal(kept["grid"][position], every["grid"][t])
        assert kept["guess"][position] and not kept["outcome"][position]
        assert kept["value"][position] == every["value"][t]
        # The outcome board: the guessed cell shows its number, nothing else is opened.
        changed = np.argwhere(kept["grid"][outcome] != every["grid"][t])
        assert len(changed) == 1 and kept["grid"][outcome][tuple(changed[0])] >= 0
        assert kept["outcome"][outcome] and not kept["guess"][outcome]
        assert kept["value"][outcome] == values[t + 1]
    again = record_value_game(rules, 5, "search", start="corner", record="guess")
    for k in kept:
        np.testing.assert_array_equal(kept[k], again[k])


def test_generate_values_is_reproducible_and_refuses_bad_arguments(tmp_path):
    m1 = generate_values(tmp_path / "a", ["6x6:5:12"], seed=2, shard_games=4, n_jobs=1)
    m2 = generate_values(tmp_path / "b", ["6x6:5:12"], seed=2, shard_games=4, n_jobs=2)
    assert [e["sha256"] for e in m1["shards"]] == [e["sha256"] for e in m2["shards"]]
    assert load_value_manifest(tmp_path / "a")["splits"] == m1["splits"]
    seeds = np.concatenate([ns.seeds.stream_seeds(s) for s in m1["seed_streams"]])
    assert seeds.min() >= 2**62  # never an evaluation seed
    train = read_value_split(tmp_path / "a", "train")
    assert sum(len(a["value"]) for a in train) == m1["splits"]["train"]["states"]
    assert generate_values(tmp_path / "a", ["6x6:5:12"], seed=2, shard_games=4)["shards"] == m1["shards"]
    with pytest.raises(DatasetError, match="different value dataset"):
        generate_values(tmp_path / "a", ["6x6:5:12"], seed=3, shard_games=4)
    with pytest.raises(DatasetError, match="record must be"):
        generate_values(tmp_path / "c", ["6x6:5:12"], record="some")
    with pytest.raises(DatasetError, match="start must be"):
        generate_values(tmp_path / "c", ["6x6:5:12"], start="middle")
    with pytest.raises(DatasetError, match="not an nnsweeper value dataset"):
        (tmp_path / "d").mkdir()
        (tmp_path / "d" / "manifest.json").write_text('{"format": "other"}')
        load_value_manifest(tmp_path / "d")


# ----------------------------------------------------------------- the network's inputs
def test_value_inputs_carry_the_exact_probabilities_and_absolute_sizes():
    for seed in range(100):  # the first game whose first click opens an area
        game = Game(Rules(5, 5, 4), seed=seed)
        if game.reveal(0, 0)[3]["revealed"] > 3:
            break
    grid = game.observe()
    a = ns.analyze(grid, 4)
    data = value_inputs(grid[None], np.array([4]), np.zeros((1, 5, 5), bool), a.probabilities[None],
                        np.array([a.log_layouts]))
    x = data["cell"].x.numpy()
    assert x.shape[1] == len(VALUE_CELL_FEATURES)
    pos = data["cell"].pos.numpy()
    np.testing.assert_allclose(x[:, -2], a.probabilities[pos[:, 0], pos[:, 1]], rtol=1e-6)
    np.testing.assert_array_equal(x[:, -1], a.probabilities[pos[:, 0], pos[:, 1]] == 0)
    glob = dict(zip(VALUE_GLOBAL_FEATURES, data.globals.numpy()[0].tolist(), strict=True))
    unknown = int(((grid < 0) & (a.probabilities < 1)).sum())
    assert glob["unknown_cells_per_100"] == pytest.approx(unknown / 100)
    assert glob["mines_left_per_100"] == pytest.approx((4 - int(a.mines.sum())) / 100)
    assert glob["log_layouts_per_100"] == pytest.approx(a.log_layouts / 100)
    best = 1 - a.probabilities[(grid < 0)].min()
    assert glob["best_safety"] == pytest.approx(best)


def test_value_model_round_trips_and_refuses_damage(tmp_path):
    torch.manual_seed(0)
    model = ValueGNN({"hidden": 8, "layers": 1})
    path = save_value_model(tmp_path / "v.pt", model)
    again = load_value_model(path)
    for k, v in model.state_dict().items():
        torch.testing.assert_close(again.state_dict()[k], v)
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(CheckpointError, match="damaged"):
        load_value_model(path)
    with pytest.raises(CheckpointError, match="no value model"):
        load_value_model(tmp_path / "none.pt")


def _positions(n=3, seed=0):
    """A few positions of a 6x6 game with their exact analyses."""
    rng = np.random.default_rng(seed)
    out = []
    env = ns.MinesweeperEnv(6, 6, 6, seed=seed)
    get_solver("search", start="corner").play(env, rng, on_decision=lambda d: out.append(d))
    boards = [ns.Observation.of(d.grid, 6, d.flags) for d in out[:n]]
    return [(b, ns.analyze(b)) for b in boards]


@pytest.mark.parametrize("arch", ["value-gnn", "value-cnn"])
def test_value_models_go_through_the_one_checkpoint_module(tmp_path, arch):
    from nnsweeper.models import load_checkpoint, load_model, save_checkpoint
    from nnsweeper.models.value import predict_values

    torch.manual_seed(0)
    model = ns.models.MineModel.from_config({"arch": arch, "hidden": 8, "layers": 2}).eval()
    path = save_checkpoint(tmp_path / "v.pt", model, extra={"note": 1})
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["format"] == "nnsweeper-checkpoint" and meta["arch"] == arch
    assert meta["features"]["global_features"] == list(VALUE_GLOBAL_FEATURES)
    boards = _positions()
    for again in (load_checkpoint(path, expected={"arch": arch}), load_model(path), load_value_model(path)):
        assert type(again) is type(model) and again.checkpoint_meta["extra"] == {"note": 1}
        np.testing.assert_array_equal(predict_values(again, boards), predict_values(model, boards))
    with pytest.raises(CheckpointError, match="expected arch 'gnn'"):
        load_checkpoint(path, expected={"arch": "gnn"})
    meta["features"]["cell_features"] = meta["features"]["cell_features"][:-1]
    path.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="was trained on cell_features"):
        load_checkpoint(path)


def test_value_checkpoints_of_the_older_format_still_load(tmp_path):
    from nnsweeper.fileio import file_sha256
    from nnsweeper.models import load_model
    from nnsweeper.models.value import VALUE_FORMAT, VALUE_GRID_CHANNELS, predict_values

    # The bundled weights are in the older format: they load as a registered value-gnn.
    bundled = load_model("value-gnn")
    assert isinstance(bundled, ValueGNN) and bundled.checkpoint_meta["legacy_format"] == VALUE_FORMAT
    assert bundled.config == {"arch": "value-gnn", "hidden": 64, "layers": 6, "conv": "sage"}
    assert bundled.checkpoint_meta["extra"]["data_seed_streams"]  # what evaluations refuse to replay
    # A file written as the older save_value_model did.
    torch.manual_seed(1)
    model = ValueGNN({"hidden": 8, "layers": 1}).eval()
    pt = tmp_path / "old.pt"
    torch.save(model.state_dict(), pt)
    old = {"format": VALUE_FORMAT, "config": {"arch": "gnn", "hidden": 8, "layers": 1, "conv": "sage"},
           "cell_features": list(VALUE_CELL_FEATURES), "grid_channels": list(VALUE_GRID_CHANNELS),
           "global_features": list(VALUE_GLOBAL_FEATURES), "parameters": model.n_parameters,
           "sha256": file_sha256(pt), "extra": {}}
    pt.with_suffix(".json").write_text(json.dumps(old))
    boards = _positions(seed=1)
    np.testing.assert_array_equal(predict_values(load_value_model(pt), boards), predict_values(model, boards))
    with pytest.raises(CheckpointError, match="not a value model"):
        load_value_model(ns.models.checkpoint.WEIGHTS_DIR / "gnn.pt")


# ----------------------------------------------------------------- training and the solver
@pytest.fixture(scope="module")
def tiny_value_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("values")
    generate_values(root / "data", ["6x6:6:30", "5x5:5:30"], seed=1, shard_games=10, n_jobs=1)
    # A config as train-value took it before the one loop: arch "gnn", n_jobs.
    cfg = {"data": {"path": str(root / "data")}, "model": {"arch": "gnn", "hidden": 8, "layers": 1},
           "train": {"epochs": 2, "batch_size": 16, "threads": 1, "n_jobs": 1},
           "output": {"dir": str(root / "run")}}
    result = train_value(cfg, progress=False)
    return root / "run" / "best.pt", result


def test_training_writes_a_model_and_its_history(tiny_value_model):
    path, result = tiny_value_model
    run = path.parent
    assert result.best == path and result.last == run / "last.pt" and (run / "resume.pt").is_file()
    assert json.loads(path.with_suffix(".json").read_text())["format"] == "nnsweeper-checkpoint"
    recorded = json.loads((run / "config.json").read_text())
    assert recorded["model"]["arch"] == "value-gnn" and recorded["train"]["num_workers"] == 1
    assert recorded["train"]["warmup"] == 0.1  # the value defaults
    history = json.loads((run / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2] and history == result.history
    best = min(history, key=lambda h: h["val_loss"])
    meta = json.loads(path.with_suffix(".json").read_text())["extra"]
    assert meta["epoch"] == best["epoch"] and set(meta["val"]["boards"]) <= {"6x6", "5x5"}
    # The history's validation loss is value_metrics' cross-entropy of the saved weights.
    model = load_value_model(path)
    val = prepare_positions(run.parent / "data", "val")
    m = value_metrics(model, val)
    assert m["bce"] == pytest.approx(best["val_loss"], rel=1e-5) and 0 < m["bce"] < 2
    assert best["val_mse"] == pytest.approx(m["mse"], rel=1e-5)
    with pytest.raises(TrainingError, match=r"unknown key\(s\) \['epoch'\] in \[train\]"):
        load_value_config({"data": {"path": "x"}, "train": {"epoch": 3}, "output": {"dir": "y"}})
    with pytest.raises(TrainingError, match="\\[data\\] path is required"):
        load_value_config({"model": {}})
    with pytest.raises(TrainingError, match="must be one of 'value-gnn', 'value-cnn'"):
        load_value_config({"data": {"path": "x"}, "model": {"arch": "cnn-big"}})


def test_the_one_training_entry_point_trains_a_value_cnn(tiny_value_model, tmp_path):
    # train() takes a value config by its [model] arch.
    from nnsweeper.training import is_value_config, train

    path, _ = tiny_value_model
    cfg = {"data": {"path": str(path.parent.parent / "data")},
           "model": {"arch": "value-cnn", "hidden": 4, "layers": 1},
           "train": {"epochs": 1, "batch_size": 32, "threads": 1},
           "output": {"dir": str(tmp_path / "run")}}
    assert is_value_config(cfg) and not is_value_config({"model": {"arch": "gnn"}})
    result = train(cfg, progress=False)
    assert [h["epoch"] for h in result.history] == [1]
    assert isinstance(load_value_model(result.best), ns.models.ValueCNN)
    with pytest.raises(DatasetError, match="not augmented"):
        train({**cfg, "train": {**cfg["train"], "augment": True}, "output": {"dir": str(tmp_path / "r2")}},
              progress=False)


def test_a_value_run_stopped_and_resumed_ends_with_the_weights_of_one_never_stopped(
        tiny_value_model, tmp_path, ctrl_c_at_step, capsys):
    # Ctrl-C in epoch 2 through the command line, then --resume: the same batches in the
    # same order, so the same weights and validation losses (on the CPU).
    from nnsweeper.cli import main

    path, _ = tiny_value_model
    data = path.parent.parent / "data"
    whole = train_value({"data": {"path": str(data)}, "model": {"hidden": 8, "layers": 1},
                         "train": {"epochs": 2, "batch_size": 16, "threads": 1},
                         "output": {"dir": str(tmp_path / "whole")}}, progress=False)
    per_epoch = len(PositionBatches(data, "train", batch_size=16))
    toml = tmp_path / "v.toml"
    toml.write_text(f'[data]\npath = "{data.as_posix()}"\n[model]\narch = "gnn"\nhidden = 8\nlayers = 1\n'
                    f'[train]\nepochs = 2\nbatch_size = 16\nthreads = 1\nsave_every = 2\n'
                    f'[output]\ndir = "{(tmp_path / "parts").as_posix()}"\n')
    ctrl_c_at_step(per_epoch + 4)
    assert main(["train-value", "--config", str(toml), "--quiet"]) == 130
    assert "resume.pt holds epoch 2 up to batch " in capsys.readouterr().err
    assert main(["train-value", "--config", str(toml), "--quiet", "--resume"]) == 0
    a = torch.load(whole.last, weights_only=True)
    b = torch.load(tmp_path / "parts" / "last.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    history = json.loads((tmp_path / "parts" / "history.json").read_text())
    assert [h["val_loss"] for h in history] == [h["val_loss"] for h in whole.history]


def test_value_solver_scores_candidates_by_the_models_values(tiny_value_model):
    path, _ = tiny_value_model
    solver = get_solver("value-gnn", model=str(path), start="corner", trust=None)
    assert isinstance(solver, ValueSolver) and get_solver("value-gnn").trust == 0.02
    obs = ns.Observation.of(np.array([[1, -1, -1], [-1, -1, -1], [-1, -1, -1]]), 2)
    a = ns.analyze(obs)
    choice = solver.look_ahead(obs, a, np.random.default_rng(0))
    for cand in choice.candidates:
        boards = list(ns.engine.each_outcome(obs, cand.cell))
        values = solver.values([(b, a2) for _, b, a2 in boards])
        q = sum(a2.layouts / a.layouts * v for (_, _, a2), v in zip(boards, values, strict=True))
        assert cand.score == pytest.approx(round(q, solver.decimals), abs=1e-12)
    scores = [c.score for c in choice.candidates]
    assert scores[1:] == sorted(scores[1:], reverse=True) and choice.cell == choice.candidates[0].cell
    # A position with every safe cell revealed is worth 1 exactly.
    done = ns.Observation.of(np.array([[1, -1], [1, 1]]), 1)
    assert solver.values([(done, ns.analyze(done))])[0] == 1.0
    # It plays whole games and pickles without its network.
    records = [solver.play(ns.MinesweeperEnv(6, 6, 6, seed=s), np.random.default_rng(s)) for s in range(6)]
    assert all(r.won or r.moves[-1].kind in ns.solvers.GUESS_KINDS for r in records)
    assert pickle.loads(pickle.dumps(solver))._net is None
    # Each look-ahead guess keeps the network's Q of the chosen cell in the record; no other move has one.
    moves = [m for r in records for m in r.moves]
    ahead = [m for m in moves if m.kind == "look-ahead"]
    assert ahead and all(0 <= m.value <= 1 for m in ahead)
    assert all(m.value is None for m in moves if m.kind != "look-ahead")
    rows = [m for r in records for m in r.to_dict()["moves"]]
    assert all(len(m) == (5 if m[2] == "look-ahead" else 4) for m in rows)
    with pytest.raises(ValueError, match="depth 1"):
        ValueSolver(depth=2)


@pytest.mark.parametrize("options", [{}, {"next_value": "blend", "influence": True}])
def test_a_value_solver_that_never_overrides_plays_the_search_solvers_games(tiny_value_model, options):
    """With a trust no Q can pass, the guess is the search solver's own, with its guessing options."""
    path, _ = tiny_value_model
    value = get_solver("value-gnn", model=str(path), start="corner", trust=1.0, **options)
    search = get_solver("search", start="corner", **options)
    guesses = 0
    for seed in range(5):
        mine = value.play(ns.MinesweeperEnv(9, 9, 12, seed=60 + seed), np.random.default_rng(seed))
        theirs = search.play(ns.MinesweeperEnv(9, 9, 12, seed=60 + seed), np.random.default_rng(seed))
        assert [(m.cell, m.kind) for m in mine.moves] == [(m.cell, m.kind) for m in theirs.moves]
        guesses += sum(m.kind == "look-ahead" for m in mine.moves)
    assert guesses > 0


# ----------------------------------------------------------------- Monte Carlo values
def test_play_from_a_position_and_monte_carlo_value():
    from nnsweeper.evaluation.rollouts import monte_carlo_value, play_from

    grid = np.full((4, 4), -1)
    grid[0, 0] = 1
    obs = ns.Observation.of(grid, 3)
    every = (np.isin(np.arange(16), c).reshape(4, 4) for c in itertools.combinations(range(1, 16), 3))
    layouts = [m for m in every if ns.grid.neighbour_sum(m)[0, 0] == 1]
    solver = get_solver("csp")
    exact = np.mean([play_from(solver, obs, m, np.random.default_rng(k)) for k, m in enumerate(layouts)])
    est = monte_carlo_value(obs, "csp", n=400, seed=3)
    assert est.games == 400 and est.low <= est.rate <= est.high
    assert abs(est.rate - exact) < 4 * np.sqrt(exact * (1 - exact) / 400), (est.rate, exact)
    done = ns.Observation.of(np.array([[1, -1], [1, 1]]), 1)
    assert play_from(solver, done, np.array([[False, True], [False, False]]), 0)
    with pytest.raises(ns.errors.InvalidBoardError, match="does not fit"):
        play_from(solver, obs, np.isin(np.arange(16), [1, 4, 5]).reshape(4, 4), 0)


def test_analyze_prints_the_chance_to_win(tmp_path, capsys, tiny_value_model, monkeypatch):
    from nnsweeper import cli

    board = tmp_path / "b.txt"
    board.write_text("1...\n....\n....\n....\n")
    path, _ = tiny_value_model
    monkeypatch.setattr("nnsweeper.models.value.WEIGHTS_DIR", path.parent)
    assert cli.main(["analyze", str(board), "--mines", "3", "--solvers", "csp", "--value", "50"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("chance that search wins from here: value network ") and "50 games" in line
    assert cli.main(["analyze", str(board), "--mines", "3", "--value", "0"]) == 2


def test_full_trust_in_the_exact_heuristic_plays_the_search_solvers_games(tiny_value_model):
    # trust=1: the network can never override the search solver's look-ahead choice, which
    # the value solver recomputes exactly from the same outcome boards.
    path, _ = tiny_value_model
    search = get_solver("search", start="corner")
    value = get_solver("value-gnn", model=str(path), start="corner", trust=1.0)
    for rows, cols, mines in ((9, 9, 10), (16, 16, 40)):
        for seed in range(6):
            a = search.play(ns.MinesweeperEnv(rows, cols, mines, seed=seed), np.random.default_rng(seed))
            b = value.play(ns.MinesweeperEnv(rows, cols, mines, seed=seed), np.random.default_rng(seed))
            assert [(m.cell, m.kind) for m in a.moves] == [(m.cell, m.kind) for m in b.moves]
    with pytest.raises(ValueError, match="trust must be"):
        ValueSolver(trust=2)


def test_the_value_solver_carries_its_training_seeds(tiny_value_model):
    # The model records its dataset's seed streams: evaluations refuse those games.
    from nnsweeper.seeds import check_seed_overlap, manifest_seeds

    path, _ = tiny_value_model
    solver = get_solver("value-gnn", model=str(path), start="corner")
    learned = manifest_seeds(path.parents[1] / "data")
    assert sorted(learned) == ["test", "train", "val"]
    with pytest.raises(ns.errors.SeedOverlapError, match="'train' split"):
        check_seed_overlap(solver.training_seeds, learned["train"][:3])
    table = ns.evaluate({"value-gnn": solver}, rows=5, cols=5, mines_list=[5], trials=2, base_seed=0)
    assert table.metadata["arguments"]["held_out_from"] == ["value-gnn: training data"]
