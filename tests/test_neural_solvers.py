"""Neural and hybrid solvers: lockstep play, the hidden board, records, the harness."""

from __future__ import annotations

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.models import save_checkpoint
from nnsweeper.solvers import SOLVERS, CSPSolver, NeuralSolver, get_solver
from nnsweeper.solvers.ranking import rank_cells

TINY = {
    "cnn": {"arch": "cnn", "channels": 8, "blocks": 2, "dilations": [1, 2]},
    "gnn": {"arch": "gnn", "hidden": 16, "layers": 2},
}


@pytest.fixture(scope="module")
def models(perturbed_model):
    return {arch: perturbed_model(config) for arch, config in TINY.items()}


def _solvers(models):
    return {
        "cnn": get_solver("cnn", model=models["cnn"]),
        "gnn": get_solver("gnn", model=models["gnn"]),
        "hybrid-cnn": get_solver("hybrid-cnn", model=models["cnn"]),
        "hybrid-gnn": get_solver("hybrid-gnn", model=models["gnn"], start="corner"),
    }


def _envs(n, rows=6, cols=6, mines=6, base=500):
    return [ns.MinesweeperEnv(rows, cols, mines, seed=base + k) for k in range(n)], [
        np.random.default_rng(base + k) for k in range(n)
    ]


def _key(rec) -> tuple:
    d = rec.to_dict()
    d.pop("seconds")
    moves = [(i, j, kind, round(p, 4)) for i, j, kind, p in d.pop("moves")]
    return tuple(sorted(d.items())), tuple(moves)


def test_registry_has_the_neural_solvers(models):
    assert {"cnn", "gnn", "hybrid-cnn", "hybrid-gnn"} <= set(SOLVERS)
    s = get_solver("hybrid-cnn", model=models["cnn"])
    assert isinstance(s, NeuralSolver) and s.hybrid and s.name == "hybrid-cnn"
    assert not get_solver("gnn", model=models["gnn"]).hybrid
    assert s.options()["model"] == "<MineCNN>"


@pytest.mark.parametrize("name", ["cnn", "gnn", "hybrid-cnn", "hybrid-gnn"])
def test_batched_and_one_by_one_play_give_the_same_games(models, name):
    solver = _solvers(models)[name]
    envs, rngs = _envs(16, 7, 7, 8)
    batched = solver.play_many(envs, rngs)
    envs, rngs = _envs(16, 7, 7, 8)
    single = [solver.play(env, rng) for env, rng in zip(envs, rngs, strict=True)]
    assert [_key(r) for r in batched] == [_key(r) for r in single]
    # The games are real and differ; the model was asked whenever the game was not won outright.
    assert all(r.model_calls > 0 or r.won for r in batched)
    assert len({_key(r) for r in batched}) > len(batched) // 2


def test_pure_solver_moves_and_counts(models):
    solver = get_solver("gnn", model=models["gnn"], open_below=0.0)
    envs, rngs = _envs(12)
    for rec in solver.play_many(envs, rngs):
        kinds = [m.kind for m in rec.moves]
        # Without open_below nothing is "almost surely safe": every pick is a guess.
        assert kinds[0] == "first" and set(kinds[1:]) <= {"guess"}
        # One cell per call; every pick but a losing last one was safe.
        assert rec.model_picks == len(rec.moves) - 1 == rec.model_calls == rec.guesses
        assert rec.model_safe == rec.model_picks - (not rec.won)
        assert 0 < rec.cleared <= 1 and rec.cleared == 1.0 if rec.won else rec.cleared < 1

    solver = get_solver("gnn", model=models["gnn"], open_below=0.01)
    envs, rngs = _envs(12)
    for rec in solver.play_many(envs, rngs):
        # Cells below open_below are opened as "model" moves; the rest are guesses.
        for m in rec.moves[1:]:
            assert m.kind == ("model" if m.probability < 0.01 else "guess"), m
        assert rec.model_picks == len(rec.moves) - 1 >= rec.model_calls >= rec.guesses


def test_hybrid_asks_only_when_the_engine_is_stuck(models):
    hybrid = get_solver("hybrid-cnn", model=models["cnn"])
    csp = CSPSolver()
    envs, rngs = _envs(20, 8, 8, 12, base=40)
    for env, rng, rec in zip(*_envs(20, 8, 8, 12, base=40), hybrid.play_many(envs, rngs), strict=True):
        assert rec.model_calls == rec.guesses == rec.model_picks
        assert rec.model_safe == rec.guesses - (not rec.won)
        # Up to the first guess it plays exactly as the CSP solver.
        ref = csp.play(env, rng)
        first = next((k for k, m in enumerate(rec.moves) if m.kind == "guess"), len(rec.moves))
        assert [m.cell for m in rec.moves[:first]] == [m.cell for m in ref.moves[:first]]
        for m in rec.moves[1:]:
            if m.kind in ("local", "engine"):
                assert m.probability == 0.0


def test_hybrid_with_the_engine_as_model_plays_like_csp():
    class Exact:
        """A 'model' that returns the exact probabilities."""

        def predict_proba(self, grids, totals, flags=None, batch_size=1):
            return [ns.mine_probabilities(g, int(t), f) for g, t, f in zip(grids, totals, flags, strict=True)]

    solver = NeuralSolver("gnn", hybrid=True, tolerance=1e-9)
    solver._model = Exact()
    csp = CSPSolver()
    # The neural solvers compare prob_zero in levels (robust to a model's float noise).
    csp.rank_guesses = lambda a, grid, rng: rank_cells(a.probabilities, a.unknown, grid, rng,
                                                        "prob_zero", 1e-9, coarse_ties=True)
    for env, rng in zip(*_envs(25, 8, 8, 14, base=90), strict=True):
        rec = solver.play_many([env], [rng])[0]
        env2 = ns.MinesweeperEnv(8, 8, 14, seed=env.seed)
        ref = csp.play(env2, np.random.default_rng(env.seed))
        assert [(m.cell, m.kind) for m in rec.moves] == [(m.cell, m.kind) for m in ref.moves]
        assert rec.won == ref.won


class ScrambledEnv(ns.MinesweeperEnv):
    """An env whose hidden cells are scrambled after every move.

    The true layout is kept aside and put back only while the env itself moves, so
    the game is the same; what a solver could read of covered cells is noise.
    """

    _HIDDEN = ("_mine", "_counts", "board", "_zero_labels")

    def reset(self, seed=None):
        self._truth = None
        self._noise = np.random.default_rng(12345)
        return super().reset(seed)

    def step(self, action):
        if self._truth is not None:
            for name, value in self._truth.items():
                setattr(self, name, value)
        out = super().step(action)
        self._truth = {name: getattr(self, name).copy() for name in self._HIDDEN}
        covered = self.mask == 1
        n = int(covered.sum())
        self._mine[covered] = self._noise.permutation(self._mine[covered])
        for name in ("_counts", "board", "_zero_labels"):
            arr = getattr(self, name)
            arr[covered] = self._noise.integers(0, 9, n).astype(arr.dtype)
        return out


@pytest.mark.parametrize("name", ["single_point", "csp", "search", "search-deep", "cnn", "gnn", "hybrid-cnn",
                                  "hybrid-gnn"])
def test_a_solver_never_reads_the_hidden_board(models, name):
    solver = _solvers(models)[name] if name in TINY or name.startswith("hybrid") else get_solver(name)
    for seed in range(300, 306):
        plain = solver.play(ns.MinesweeperEnv(8, 8, 10, seed=seed), np.random.default_rng(seed))
        scrambled = solver.play(ScrambledEnv(8, 8, 10, seed=seed), np.random.default_rng(seed))
        assert repr(_key(plain)) == repr(_key(scrambled))


def test_evaluate_takes_the_batched_path_and_reports_model_columns(models, monkeypatch):
    solver = get_solver("hybrid-gnn", model=models["gnn"])
    calls = []
    original = NeuralSolver.play_many

    def spy(self, envs, rngs):
        calls.append(len(envs))
        return original(self, envs, rngs)

    monkeypatch.setattr(NeuralSolver, "play_many", spy)
    table = ns.evaluate({"hybrid-gnn": solver, "csp": CSPSolver()}, [6, 10], rows=6, cols=6, trials=30)
    # Lockstep batches run across both configurations (one board size), about eight per worker.
    assert calls == [8] * 7 + [4]
    row = table.select(solver="hybrid-gnn", mines=10)[0]
    assert row["model_calls"] == pytest.approx(row["mean_guesses"])
    assert 0 <= row["model_safe_rate"] <= 1
    assert np.isnan(table.select(solver="csp", mines=10)[0]["model_calls"])
    assert "model calls" in str(table)
    # Same games one by one (a plain callable) give the same wins.
    plain = ns.eval_solver_over_mines(lambda env, rng: solver.play(env, rng).won, [6, 10], 6, 6, trials=30)
    np.testing.assert_allclose(plain, table.win_rates("hybrid-gnn"))


def test_lockstep_batches_span_the_boards_of_one_size_and_change_no_game(models, monkeypatch):
    solver = get_solver("gnn", model=models["gnn"])
    calls = []
    original = NeuralSolver.play_many

    def spy(self, envs, rngs):
        calls.append(sorted({(e.r, e.c, e.mines) for e in envs}))
        return original(self, envs, rngs)

    monkeypatch.setattr(NeuralSolver, "play_many", spy)
    table = ns.evaluate({"gnn": solver}, boards=[(6, 6, 6), (6, 6, 10), (5, 7, 8)], trials=18)
    # About eight batches per worker: 36 games of 6x6 in batches of 5 (one spanning both mine
    # counts), then 18 of 5x7 in batches of 3; a batch never mixes board sizes.
    assert calls == [[(6, 6, 6)]] * 3 + [[(6, 6, 6), (6, 6, 10)]] + [[(6, 6, 10)]] * 4 + [[(5, 7, 8)]] * 6
    assert [(r["rows"], r["cols"], r["mines"]) for r in table] == [(6, 6, 6), (6, 6, 10), (5, 7, 8)]
    for row in table:  # every configuration alone: the same games
        alone = ns.evaluate({"gnn": solver}, boards=[(row["rows"], row["cols"], row["mines"])], trials=18)
        np.testing.assert_array_equal(table.outcomes("gnn", mines=row["mines"])[0], alone.outcomes("gnn")[0])


def test_model_from_a_checkpoint_path_and_bad_options(models, tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", models["cnn"])
    solver = get_solver("cnn", model=str(path))
    envs, rngs = _envs(3)
    by_path = solver.play_many(envs, rngs)
    envs, rngs = _envs(3)
    by_model = get_solver("cnn", model=models["cnn"]).play_many(envs, rngs)
    assert [_key(r) for r in by_path] == [_key(r) for r in by_model]
    with pytest.raises(ns.NnsweeperError, match="neither a bundled model name"):
        get_solver("gnn", model=str(tmp_path / "none.pt")).play_many(*_envs(1))
    with pytest.raises(ValueError, match="open_below must be a number in"):
        get_solver("cnn", model=models["cnn"], open_below=1.5)
    with pytest.raises(ValueError, match="flag_above .* must be above open_below"):
        get_solver("cnn", model=models["cnn"], open_below=0.3, flag_above=0.2)
    for bad in (-0.1, float("nan"), True, "0.1"):
        with pytest.raises(ValueError, match=r"batch_risk must be a number of at least 0 \(math.inf"):
            get_solver("gnn", model=models["gnn"], batch_risk=bad)
    with pytest.raises(ValueError, match="model must be a bundled model name"):
        get_solver("cnn", model=3)
    with pytest.raises(ValueError, match="bad options for solver 'hybrid-gnn'"):
        get_solver("hybrid-gnn", hybrid=False)


def _pure_batch(solver, p, grid):
    """The cells the pure rule opens in one move, by the numpy and the torch path (which must agree)."""
    import torch

    unknown, flags = grid < 0, np.zeros(grid.shape, dtype=bool)
    low = solver.pure_masks(p[None], grid[None], unknown[None], flags[None], 6)[2][0]
    low_t = solver.pure_masks(torch.tensor(p, dtype=torch.float32)[None], torch.tensor(grid)[None],
                              torch.tensor(unknown)[None], torch.tensor(flags)[None], 6)[2][0]
    np.testing.assert_array_equal(low, low_t.numpy())
    return {tuple(c) for c in np.argwhere(low).tolist()}


def test_pure_batch_opens_frontier_cells_within_its_summed_risk_and_never_the_interior():
    # One revealed 1 in the corner: its frontier is (0, 1), (1, 0), (1, 1); the other 16 cells are
    # the interior. The model rates every cell below open_below.
    grid = np.full((4, 5), -1, dtype=np.int8)
    grid[0, 0] = 1
    p = np.full((4, 5), 0.001)
    p[1, 1], p[1, 0], p[0, 1] = 0.0005, 0.0012, 0.002
    frontier = {(0, 1), (1, 0), (1, 1)}
    assert _pure_batch(NeuralSolver("gnn", open_below=0.01, batch_risk=float("inf")), p, grid) == frontier
    # Summed in increasing order: 0.0005, 0.0017, 0.0037: the first two stay within 0.0025.
    assert _pure_batch(NeuralSolver("gnn", open_below=0.01, batch_risk=0.0025), p, grid) == {(1, 1), (1, 0)}
    # The first is always taken, whatever its risk.
    assert _pure_batch(NeuralSolver("gnn", open_below=0.01, batch_risk=0.0), p, grid) == {(1, 1)}
    # The former rule opened every cell below open_below, the interior too.
    old = NeuralSolver("gnn", open_below=0.01, batch_risk=float("inf"), batch_interior=True)
    assert _pure_batch(old, p, grid) == {(i, j) for i in range(4) for j in range(5)} - {(0, 0)}
    # No frontier cell below open_below: no batch (the move is the safest cell alone).
    p[1, 1] = p[1, 0] = p[0, 1] = 0.3
    assert _pure_batch(NeuralSolver("gnn", open_below=0.01), p, grid) == set()


def test_pure_solver_opens_an_under_rated_interior_one_cell_a_move():
    from nnsweeper.grid import dilate

    class Calm:
        """Rates the interior 0.0001, 'almost surely safe', and the frontier 0.3."""

        def predict_proba(self, grids, totals, flags=None, batch_size=1):
            return [np.where(np.asarray(g) < 0, np.where(dilate(np.asarray(g) >= 0), 0.3, 1e-4), 0.0)
                    for g in grids]

    solver = NeuralSolver(Calm(), start="corner")
    interior_moves = 0
    for env, rng in zip(*_envs(6, 8, 8, 10), strict=True):
        decisions = []
        rec = solver.play(env, rng, on_decision=decisions.append)
        assert all(m.kind == ("model" if m.probability < 0.002 else "guess") for m in rec.moves[1:])
        for d in decisions:
            # Each look of the model opens one cell: the interior is never a batch.
            assert len(d.moves) == 1
            interior_moves += not dilate(d.grid >= 0)[d.moves[0].cell]
    assert interior_moves > 10


def test_symmetric_play_asks_the_model_for_its_mean_over_the_board_symmetries(models):
    from nnsweeper.observation import Observation
    from nnsweeper.solvers.neural import ModelRequest

    env, _ = _envs(1, 7, 7, 8)
    env = env[0]
    env.reset()
    env.step(24)
    grid = np.where(env.mask == 0, env._counts, -1).astype(np.int8)
    request = ModelRequest(Observation.of(grid, 8))
    for arch in ("cnn", "gnn"):
        model = models[arch]
        (plain,) = NeuralSolver(model).predict_requests([request])
        (mean,) = NeuralSolver(model, symmetric=True).predict_requests([request])
        np.testing.assert_allclose(mean, model.predict_proba(grid, 8, symmetric=True))
        if arch == "cnn":  # a CNN is not symmetric by itself; a GNN is
            assert np.abs(mean - plain).max() > 1e-3
    solver = NeuralSolver(models["cnn"], symmetric=True)
    assert solver.options()["symmetric"] is True and "symmetric" not in NeuralSolver(models["cnn"]).options()
    envs, rngs = _envs(4)
    records = solver.play_many(envs, rngs)
    envs, rngs = _envs(4)
    assert [_key(r) for r in records] == [_key(solver.play(e, r)) for e, r in zip(envs, rngs, strict=True)]

    class Grids:
        def predict_proba(self, grids, totals, flags=None, batch_size=1):
            return [np.full(np.shape(g), 0.5) for g in grids]

    with pytest.raises(ValueError, match="symmetric=True needs a MineModel, .*; got a Grids"):
        NeuralSolver(Grids(), symmetric=True).predict_requests([request])


def test_interior_count_gives_the_interior_its_share_of_the_mines_left():
    import torch

    from nnsweeper.grid import dilate
    from nnsweeper.solvers.neural import count_interior

    checked = 0
    for seed in range(30):
        env = ns.MinesweeperEnv(8, 8, 12, seed=seed)
        env.reset()
        env.step(27)
        if env.done:
            continue
        grid = np.where(env.mask == 0, env._counts, -1).astype(np.int8)
        exact = ns.mine_probabilities(grid, 12)
        flags = exact > 1 - 1e-12  # the proven mines flagged
        interior = (grid < 0) & ~flags & ~dilate(grid >= 0)
        if not interior.any():
            continue
        # A model exact on the frontier and wrong on the interior: the count makes the interior exact.
        p = np.where(interior, 0.5, exact)
        shaped = count_interior(p.copy(), grid, flags, 12)
        np.testing.assert_allclose(shaped, exact, rtol=0, atol=1e-9)
        stacked = count_interior(torch.tensor(p)[None], torch.tensor(grid)[None], torch.tensor(flags)[None],
                                 torch.tensor([12]))[0]
        np.testing.assert_allclose(stacked.numpy(), shaped, rtol=0, atol=1e-12)
        checked += 1
    assert checked > 10
    # Clipped to [0, 1]: a frontier that already expects more mines than are left leaves the interior 0.
    grid = np.full((5, 5), -1, dtype=np.int8)
    grid[0, 0] = 1
    p = np.full((5, 5), 0.9)
    assert count_interior(p, grid, np.zeros((5, 5), dtype=bool), 2)[4, 4] == 0.0
    solver = NeuralSolver("gnn", interior_count=True)
    assert solver.options()["interior_count"] is True


def test_pure_solver_survives_its_own_wrong_flags():
    from nnsweeper.features import encode_grid

    class Stubborn:
        """Exact probabilities (flags ignored), except five cells of the last column rated mines."""

        def predict_proba(self, grids, totals, flags=None, batch_size=1):
            out = []
            for g, t, f in zip(grids, totals, flags, strict=True):
                encode_grid(g, int(t), f)  # refuses flags on revealed cells, as the models do
                p = ns.mine_probabilities(g, int(t))
                p[:5, -1] = 0.999
                out.append(np.where(g < 0, p, 0.0))
            return out

    solver = NeuralSolver("gnn", flag_above=0.99, open_below=0.01)
    solver._model = Stubborn()
    envs, rngs = _envs(30, 9, 9, 6, base=7)
    records = solver.play_many(envs, rngs)
    # Some of those flags are wrong, and flood fills open them.
    assert sum((env.mask[:5, -1] == 0).any() for env in envs) > 3
    for env, rec in zip(envs, records, strict=True):
        assert rec.won == env.won and 0 < rec.cleared <= 1


@pytest.mark.parametrize("pool", [True, False])
def test_interior_cells_share_one_probability(pool):
    class Ramp:
        """Exact frontier probabilities; interior cells get the exact value plus a ramp."""

        def predict_proba(self, grids, totals, flags=None, batch_size=1):
            out = []
            for g, t, f in zip(grids, totals, flags, strict=True):
                p = ns.mine_probabilities(g, int(t), f)
                interior = (g < 0) & ~f & ~ns.grid.dilate(g >= 0)
                ramp = np.linspace(-0.05, 0.05, g.size).reshape(g.shape)
                out.append(np.where(interior, np.clip(p + ramp, 0, 1), p))
            return out

    solver = NeuralSolver("gnn", hybrid=True, pool_interior=pool)
    solver._model = Ramp()
    seen = []
    original = solver._ask

    def spy(game, flags):
        p = yield from original(game, flags)
        interior = (game.grid < 0) & ~flags & ~ns.grid.dilate(game.grid >= 0)
        seen.append(np.unique(p[interior]).size if interior.any() else 1)
        return p

    solver._ask = spy
    solver.play_many(*_envs(20, 9, 9, 12, base=3))
    assert seen and (max(seen) == 1) is pool


# --------------------------------------------------------------- timing and set-up
class FakeClock:
    """A clock that moves only when told: the times it gives are exact."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class ExactCosting:
    """Exact probabilities; each call moves the clock by ``fixed + per_board * boards``."""

    def __init__(self, clock, fixed=0.0, per_board=0.0):
        self.clock, self.fixed, self.per_board, self.calls = clock, fixed, per_board, []

    def predict_proba(self, grids, totals, flags=None, batch_size=1):
        self.calls.append(len(grids))
        self.clock.now += self.fixed + self.per_board * len(grids)
        return [ns.mine_probabilities(g, int(t), f) for g, t, f in zip(grids, totals, flags, strict=True)]


@pytest.mark.parametrize("hybrid", [False, True])
def test_lockstep_games_are_timed_one_by_one(monkeypatch, hybrid):
    from nnsweeper.solvers import neural

    clock = FakeClock()
    monkeypatch.setattr(neural, "_clock", clock)
    solver = NeuralSolver("gnn", hybrid=hybrid)
    # A model call costs 3 per board it is asked about; each decision of a game, 1.
    solver._model = model = ExactCosting(clock, per_board=3.0)
    decisions = [0] * 24

    def tick(k, decision):
        decisions[k] += 1
        clock.now += 1.0

    records = solver.play_many(*_envs(24, 8, 8, 12, base=60), on_decision=tick)
    assert max(model.calls) > 1  # batched calls
    for k, rec in enumerate(records):
        # Its own work plus 1/B of each call over B boards it was in: 3 per call.
        assert rec.seconds == pytest.approx(decisions[k] + 3.0 * rec.model_calls)
    seconds = np.array([r.seconds for r in records])
    assert seconds.sum() == pytest.approx(clock.now)  # all of the batch's time, once
    assert len(np.unique(seconds)) > 1 and np.mean(seconds) != np.median(seconds)


def test_a_model_call_is_shared_by_the_games_in_it(monkeypatch):
    from nnsweeper.solvers import neural

    clock = FakeClock()
    monkeypatch.setattr(neural, "_clock", clock)
    solver = NeuralSolver("gnn")
    # Every call costs 12 however many boards it holds: each of B boards is charged 12 / B.
    solver._model = model = ExactCosting(clock, fixed=12.0)
    records = solver.play_many(*_envs(10, 8, 8, 12, base=80))
    assert clock.now == 12.0 * len(model.calls)
    assert sum(r.seconds for r in records) == pytest.approx(clock.now)
    # The first call held every board: each was charged 12 / 10, not 12.
    assert model.calls[0] == 10 and all(12.0 / 10 <= r.seconds < 12.0 * r.model_calls for r in records
                                        if r.model_calls > 1)


@pytest.fixture
def counted_loads(monkeypatch):
    """Loads by name or path cost 5 on a fake clock, and are counted; the process's models are forgotten."""
    from collections import OrderedDict

    import nnsweeper.models
    from nnsweeper.solvers import neural

    clock, loads = FakeClock(), []
    real = nnsweeper.models.load_model

    def load_model(source, **kwargs):
        loads.append(source)
        clock.now += 5.0
        return real(source, **kwargs)

    monkeypatch.setattr(nnsweeper.models, "load_model", load_model)
    monkeypatch.setattr(neural, "_clock", clock)
    monkeypatch.setattr(neural, "_LOADED", OrderedDict())
    monkeypatch.setattr(neural, "_UNREPORTED", {})
    return clock, loads


def test_a_model_is_loaded_once_per_process_and_its_load_reported_once(models, tmp_path, counted_loads):
    import os
    import pickle

    clock, loads = counted_loads
    path = str(save_checkpoint(tmp_path / "m.pt", models["cnn"]))
    pure, hybrid = get_solver("cnn", model=path), get_solver("hybrid-cnn", model=path)
    assert pure.prepare() == 5.0 and loads == [path]
    assert pure.prepare() == 0.0 and hybrid.prepare() == 0.0  # reported once, shared
    assert hybrid.model is pure.model and loads == [path]
    # A copy sent to another process comes without its model and finds the loaded one.
    copy = pickle.loads(pickle.dumps(pure))
    assert copy._model is None and copy.prepare() == 0.0 and copy.model is pure.model
    records = copy.play_many(*_envs(6))
    assert loads == [path] and all(r.seconds == 0.0 for r in records)  # no load in any game's time
    # A checkpoint written again is loaded again.
    save_checkpoint(path, models["cnn"])
    os.utime(path, ns=(1, 1))
    fresh = get_solver("cnn", model=path)
    assert fresh.prepare() == 5.0 and loads == [path, path] and fresh.model is not pure.model
    # A model given as an object needs no set-up.
    assert get_solver("cnn", model=models["cnn"]).prepare() == 0.0


def test_evaluate_reports_the_model_load_apart_from_the_games(models, tmp_path, counted_loads):
    clock, loads = counted_loads
    path = str(save_checkpoint(tmp_path / "m.pt", models["gnn"]))
    solvers = {"csp": CSPSolver(), "gnn": get_solver("gnn", model=path),
               "hybrid-gnn": get_solver("hybrid-gnn", model=path)}
    table = ns.evaluate(solvers, [5, 8], rows=6, cols=6, trials=6)
    assert loads == [path]  # one load in this process, for both solvers
    assert table.column("setup_seconds").tolist() == [0.0, 0.0, 5.0, 0.0, 0.0, 0.0]
    # Only the fake clock's load moved it: no game's time holds any of it.
    assert all(r["mean_seconds"] == r["median_seconds"] == 0.0 for r in table.select(solver="gnn"))
    assert table.setup_by_solver() == {"gnn": 5.0}
    assert str(table).splitlines()[-1] == (
        "model load, not in ms per game (summed over the processes that played; torch's import counted "
        "with each process's first model): gnn 5.0 s")


def test_worker_processes_load_the_model_before_playing(models, tmp_path):
    import warnings

    path = str(save_checkpoint(tmp_path / "m.pt", models["cnn"]))
    solvers = {"csp": CSPSolver(), "cnn": get_solver("cnn", model=path),
               "hybrid-cnn": get_solver("hybrid-cnn", model=path)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = ns.evaluate(solvers, [4, 6, 8], rows=6, cols=6, trials=12, n_jobs=2)
    assert not [w for w in caught if "worker stopped" in str(w.message)], [str(w.message) for w in caught]
    here = ns.evaluate(solvers, [4, 6, 8], rows=6, cols=6, trials=12)
    assert [r["outcomes"] for r in table] == [r["outcomes"] for r in here]
    # The workers loaded the model and said so; the logic solver has nothing to load.
    assert set(table.setup_by_solver()) <= {"cnn", "hybrid-cnn"} and sum(table.setup_by_solver().values()) > 0
    assert table.column("setup_seconds", solver="csp").tolist() == [0.0, 0.0, 0.0]
    assert "model load, not in ms per game" in str(table).splitlines()[-1]
