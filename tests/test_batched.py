"""Batched games in torch: the same games as Game, the model inputs of features, pure neural play."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import nnsweeper as ns
from nnsweeper import features
from nnsweeper.batched import (
    BatchedGames,
    BatchedResults,
    encode_grids_tensor,
    graph_batch_tensor,
    play_batched,
    predict_tensor,
    tie_hash,
)
from nnsweeper.errors import InvalidActionError, InvalidRulesError
from nnsweeper.game import FIRST_CLICK_RULES, NO_GUESS_RULES, Game, Rules, draw_layout
from nnsweeper.solvers import NeuralSolver, get_solver
from nnsweeper.solvers.ranking import TIE_BREAKS

torch.set_num_threads(1)

BOARDS = [(5, 6, 7), (9, 9, 10), (8, 12, 30)]


def _rules(board, first_click) -> Rules:
    """The rules of ``board``; a uniform no-guess board at 31% mines takes half a second to find, so
    that rule plays the dense board at 25% (24 mines: a tenth of the time, still a dense board)."""
    rows, cols, mines = board
    if first_click == "no-guess" and mines * 4 > rows * cols:
        mines = rows * cols // 4
    return Rules(rows, cols, mines, first_click)
TINY = {
    "cnn": {"arch": "cnn", "channels": 8, "blocks": 2, "dilations": [1, 2], "global_pool": True},
    "gnn": {"arch": "gnn", "hidden": 16, "layers": 2},
}


@pytest.fixture(scope="module")
def models(perturbed_model):
    return {arch: perturbed_model(config) for arch, config in TINY.items()}


@pytest.fixture(scope="module")
def bundled():
    """The bundled weights: they play real games (flags, cells opened together, wins)."""
    return {arch: ns.load_model(arch) for arch in TINY}


def _check_same(batch: BatchedGames, games: list[Game], step: int) -> None:
    obs = batch.observe().cpu().numpy()
    for k, g in enumerate(games):
        where = f"game {k} (seed {g.seed}) after step {step}"
        assert np.array_equal(obs[k], g.observe()), where
        assert bool(batch.done[k]) == g.done, where
        assert bool(batch.won[k]) == g.won, where
        assert bool(batch.lost[k]) == (g.result == "lose"), where
        assert int(batch.moves[k]) == g.moves, where
        assert int(batch.revealed[k]) == g.revealed_safe, where
        assert np.array_equal(batch.flags[k].cpu().numpy(), g.flags), where
        if g.placed:
            assert np.array_equal(batch.mine[k].cpu().numpy(), g.mine_layout()), where


def _replay(rules: Rules, seeds, rng_seed: int, *, many: bool, device="cpu", flag_rate=0.3,
            mine_rate=0.05, max_steps=10_000) -> int:
    """Random clicks (and flags) on Games and on one BatchedGames, compared after every step.

    Clicks go to covered unflagged cells, mostly safe ones (a cell that may be a mine
    with probability ``mine_rate``), so that games run long and some are won. With
    ``many``, each step opens a random set of them per game (``reveal_many``; the
    reference opens them one by one in row-major order until the game ends);
    otherwise one cell per game, some games sitting out. Returns the steps played.
    """
    games = [Game(rules, s) for s in seeds]
    batch = BatchedGames(rules, seeds, device=device)
    rng = np.random.default_rng(rng_seed)
    n, (r, c) = len(seeds), (rules.rows, rules.cols)
    _check_same(batch, games, 0)
    step = 0
    while not all(g.done for g in games) and step < max_steps:
        step += 1
        if rng.random() < flag_rate:
            flags = batch.flags.cpu().numpy().copy()
            for k, g in enumerate(games):
                covered = np.argwhere(g.mask == 1)
                if g.done or not len(covered):
                    continue
                i, j = (int(v) for v in covered[rng.integers(len(covered))])
                flags[k, i, j] = g.toggle_flag(i, j)
            batch.set_flags(torch.from_numpy(flags).to(batch.device))
        choices = []
        for g in games:
            free = (g.mask == 1) & ~g.flags
            risky = not g.placed or rng.random() < mine_rate
            choices.append(free if risky else free & ~g.mine_layout())
        if many:
            sel = np.zeros((n, r, c), dtype=bool)
            for k, g in enumerate(games):
                if g.done:
                    continue
                sel[k] = choices[k] & (rng.random((r, c)) < rng.choice([0.02, 0.1, 0.4]))
                for i, j in np.argwhere(sel[k]).tolist():
                    if g.done:
                        break
                    if g.mask[i, j] == 1:
                        g.open_cell(i, j)
            batch.reveal_many(torch.from_numpy(sel).to(batch.device))
        else:
            cells = np.full(n, -1, dtype=np.int64)
            for k, g in enumerate(games):
                free = np.flatnonzero(choices[k].ravel())
                if g.done or not len(free) or rng.random() < 0.1:
                    continue
                cells[k] = rng.choice(free)
                g.open_cell(*divmod(int(cells[k]), c))
            batch.reveal(torch.from_numpy(cells).to(batch.device))
        _check_same(batch, games, step)
    return step


# --------------------------------------------------------------------------- layouts
@pytest.mark.parametrize("first_click", FIRST_CLICK_RULES)
def test_draw_layout_is_the_layout_game_places(first_click):
    for board in BOARDS:
        rules = _rules(board, first_click)
        rows, cols, mines = rules.rows, rules.cols, rules.mines
        for seed in range(6):
            cell = (seed % rows, (3 * seed) % cols)
            g = Game(rules, seed)
            g.open_cell(*cell)
            layout = draw_layout(rules, seed, cell)
            assert layout.dtype == bool and layout.sum() == mines
            assert np.array_equal(layout, g.mine_layout())
            if first_click == "none":  # placed at reset: the first click plays no part
                assert np.array_equal(draw_layout(rules, seed), layout)


# --------------------------------------------------------------------------- the engine against Game
@pytest.mark.parametrize("first_click", FIRST_CLICK_RULES)
@pytest.mark.parametrize("board", BOARDS, ids=lambda b: "x".join(map(str, b)))
def test_random_clicks_play_the_same_games_as_game(board, first_click):
    rules = _rules(board, first_click)
    _replay(rules, list(range(100, 124)), rng_seed=sum(board), many=False)
    _replay(rules, list(range(200, 224)), rng_seed=1 + sum(board), many=False, mine_rate=0.5)


@pytest.mark.parametrize("first_click", FIRST_CLICK_RULES)
@pytest.mark.parametrize("board", BOARDS, ids=lambda b: "x".join(map(str, b)))
def test_reveal_many_is_game_open_cell_in_row_major_order(board, first_click):
    rules = _rules(board, first_click)
    _replay(rules, list(range(300, 324)), rng_seed=7 + sum(board), many=True)


def test_reveal_many_skips_cells_an_earlier_flood_fill_opened_and_stops_at_a_mine():
    """Every cell selected at once: flood fills open cells before their turn, the first mine ends it."""
    rules = Rules(9, 9, 10, "none")
    skipped = False
    for seed in range(40):
        layout = draw_layout(rules, seed)
        g, batch = Game(rules, seed), BatchedGames(rules, [seed])
        first_mine = int(np.flatnonzero(layout.ravel())[0])
        for i, j in np.ndindex(9, 9):
            if g.done:
                break
            if g.mask[i, j] == 1:
                g.open_cell(i, j)
        batch.reveal_many(torch.ones((1, 9, 9), dtype=torch.bool))
        _check_same(batch, [g], 1)
        assert g.result == "lose" and g.exploded == divmod(first_mine, 9)
        skipped |= g.moves < first_mine + 1
    assert skipped  # some cells were opened by an earlier flood fill of the same move


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 7),
    cols=st.integers(2, 7),
    first_click=st.sampled_from([r for r in FIRST_CLICK_RULES if r not in NO_GUESS_RULES]),
    density=st.floats(0.0, 1.0),
    seed0=st.integers(0, 2**40),
    n=st.integers(1, 5),
    many=st.booleans(),
)
def test_any_board_plays_as_game(rows, cols, first_click, density, seed0, n, many):
    rules0 = Rules(rows, cols, 1, "none")
    hi = {"none": rules0.cells - 1, "safe": rules0.cells - 2,
          "zero": rules0.cells - min(3, rows) * min(3, cols) - 1}[first_click]
    if hi < 1:
        return
    rules = Rules(rows, cols, 1 + round(density * (hi - 1)), first_click)
    _replay(rules, [seed0 + k for k in range(n)], rng_seed=seed0 % 1000, many=many)


def test_refused_and_ignored_moves():
    rules = Rules(5, 6, 7)
    batch = BatchedGames(rules, [1, 2, 3])
    assert len(batch) == 3 and "3 games of 5x6" in repr(batch)
    batch.reveal([14, -1, 0])
    assert batch.moves.tolist() == [1, 0, 1] and not bool(batch.placed[1])
    with pytest.raises(InvalidActionError, match=r"game 0: cell \(2, 2\) is already revealed"):
        batch.reveal([14, -1, -1])
    flags = torch.zeros((3, 5, 6), dtype=torch.bool)
    flags[1, 0, 0] = True
    batch.set_flags(flags)
    with pytest.raises(InvalidActionError, match=r"game 1: cell \(0, 0\) is flagged"):
        batch.reveal([-1, 0, -1])
    with pytest.raises(InvalidActionError, match="flat index in"):
        batch.reveal([30, -1, -1])
    with pytest.raises(InvalidActionError, match="one integer cell index per game"):
        batch.reveal([1, 2])
    with pytest.raises(InvalidActionError, match=r"cells_mask must have shape \(3, 5, 6\)"):
        batch.reveal_many(torch.zeros((3, 6, 5), dtype=torch.bool))
    covered = batch.covered.clone()
    bad = ~covered[0].clone()
    with pytest.raises(InvalidActionError, match="is revealed and cannot be flagged"):
        batch.set_flags(torch.stack([bad, flags[1], flags[2]]))
    with pytest.raises(InvalidRulesError, match="non-negative integers"):
        BatchedGames(rules, [1, -2])
    with pytest.raises(InvalidRulesError, match="at least one game seed"):
        BatchedGames(rules, [])
    with pytest.raises(InvalidRulesError, match="Rules instance"):
        BatchedGames((5, 6, 7), [1])
    # A game that is over takes no more moves: its entries are ignored.
    lose = BatchedGames(Rules(3, 3, 8, "none"), [5])
    safe = int(np.flatnonzero(~draw_layout(lose.rules, 5))[0])
    mine = int(np.flatnonzero(draw_layout(lose.rules, 5))[0])
    lose.reveal([mine])
    assert bool(lose.lost[0]) and bool(lose.done[0]) and int(lose.moves[0]) == 1
    assert int(lose.reveal([safe])[0]) == 0 and int(lose.moves[0]) == 1


def test_take_cat_and_to_keep_the_games():
    rules = Rules(9, 9, 10, "zero")
    a = BatchedGames(rules, range(6))
    a.reveal(torch.full((6,), 40))
    part = a.take([4, 1])
    assert part.seeds.tolist() == [4, 1]
    assert torch.equal(part.observe(), a.observe()[[4, 1]])
    b = BatchedGames.cat([part, BatchedGames(rules, [9])])
    assert len(b) == 3 and b.moves.tolist() == [1, 1, 0]
    b.reveal([-1, -1, 40])
    games = [Game(rules, s) for s in (4, 1, 9)]
    for g in games:
        g.open_cell(4, 4)
    _check_same(b, games, 1)
    assert b.to("cpu") is b
    with pytest.raises(ValueError, match="same rules"):
        BatchedGames.cat([a, BatchedGames(Rules(9, 9, 11), [1])])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_games_on_the_gpu_are_the_games_on_the_cpu(models):
    for first_click in FIRST_CLICK_RULES:
        rules = _rules((8, 12, 30), first_click)
        _replay(rules, list(range(16)), rng_seed=3, many=False, device="cuda")
        _replay(rules, list(range(16)), rng_seed=4, many=True, device="cuda")
    solver = get_solver("gnn", model=models["gnn"])
    seeds = list(range(40))
    on_cpu = play_batched(solver, Rules(9, 9, 10), seeds)
    on_gpu = play_batched(solver, Rules(9, 9, 10), seeds, device="cuda")
    assert abs(on_cpu.win_rate - on_gpu.win_rate) <= 0.1


# --------------------------------------------------------------------------- model inputs
def _positions(rules: Rules, n: int, seed: int):
    """Positions of random play (some flags, a few of them wrong): grids, flags, as tensors."""
    batch = BatchedGames(rules, range(seed, seed + n))
    rng = np.random.default_rng(seed)
    r, c = rules.rows, rules.cols
    batch.reveal(torch.full((n,), (r // 2) * c + c // 2))
    for _ in range(rng.integers(0, 6)):
        free = (batch.covered & ~batch.flags).view(n, -1).numpy()
        cells = np.array([rng.choice(np.flatnonzero(f)) if f.any() else -1 for f in free])
        batch.reveal(torch.from_numpy(cells))
    grids = batch.observe()
    flags = torch.from_numpy((grids.numpy() < 0) & (rng.random(grids.shape) < 0.08))
    over = flags.sum((1, 2)) > rules.mines
    flags[over] = False
    return grids, flags


@pytest.mark.parametrize("board", [(5, 6, 7), (9, 9, 10), (8, 12, 30), (16, 30, 99)])
def test_the_grid_encoding_is_encode_grids(board):
    rules = Rules(*board)
    grids, flags = _positions(rules, 40, seed=board[2])
    want = features.encode_grids(grids.numpy(), rules.mines, flags.numpy())
    got = encode_grids_tensor(grids, rules.mines, flags)
    assert got.dtype == torch.float32 and np.array_equal(got.numpy(), want)
    totals = torch.full((40,), rules.mines)
    assert torch.equal(encode_grids_tensor(grids, totals, flags), got)


@pytest.mark.parametrize("cell_edges", [True, False])
@pytest.mark.parametrize("board", [(5, 6, 7), (9, 9, 10), (16, 30, 99)])
def test_the_graph_batch_is_build_graph_batch(board, cell_edges):
    rules = Rules(*board)
    grids, flags = _positions(rules, 40, seed=board[0])
    want = features.build_graph_batch(grids.numpy(), rules.mines, flags.numpy(), cell_edges=cell_edges)
    got = graph_batch_tensor(grids, rules.mines, flags, cell_edges=cell_edges)
    for t in ("cell", "constraint"):
        for key in ("x", "pos", "batch", "ptr"):
            a, b = want[t][key], got[t][key]
            assert a.dtype == b.dtype and torch.equal(a, b), (t, key)
    assert sorted(want.edge_types) == sorted(got.edge_types)
    for et in want.edge_types:
        assert torch.equal(want[et].edge_index, got[et].edge_index), et
    for key in ("globals", "mines_left", "n_interior", "rows", "cols"):
        assert want[key].dtype == got[key].dtype and torch.equal(want[key], got[key]), key
    # Sparse adjacencies: the same edges, each type's rows being its targets.
    sparse = graph_batch_tensor(grids, rules.mines, flags, cell_edges=cell_edges, sparse=True)
    for et in want.edge_types:
        target, source = sparse[et].edge_index.to_sparse_coo().coalesce().indices()
        edges = want[et].edge_index
        assert sorted((source * 2**32 + target).tolist()) == sorted((edges[0] * 2**32 + edges[1]).tolist())


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_torch_probabilities_are_predict_proba(models, arch):
    model = models[arch]
    for board in [(9, 9, 10), (16, 30, 99)]:
        rules = Rules(*board)
        grids, flags = _positions(rules, 30, seed=11)
        want = model.predict_proba(grids.numpy(), rules.mines, flags.numpy())
        with torch.inference_mode():
            got = predict_tensor(model, grids, rules.mines, flags)
            dense = predict_tensor(model, grids, rules.mines, flags, sparse=False)
        assert got.dtype == torch.float64
        assert np.abs(got.numpy() - want).max() < 1e-5
        assert np.abs(dense.numpy() - want).max() < 1e-5
        revealed = grids.numpy() >= 0
        assert (got.numpy()[revealed] == 0).all() and (got.numpy()[flags.numpy()] == 1).all()


def test_bundled_models_give_their_probabilities(bundled):
    rules = Rules(16, 30, 99)
    grids, flags = _positions(rules, 24, seed=5)
    for arch, model in bundled.items():
        want = model.predict_proba(grids.numpy(), rules.mines, flags.numpy())
        with torch.inference_mode():
            got = predict_tensor(model.eval(), grids, rules.mines, flags).numpy()
        assert np.abs(got - want).max() < 1e-5, arch


def test_tie_hash_is_a_fixed_function_of_seed_move_and_cell():
    seeds = torch.tensor([0, 1, 2**62 + 5, 1])
    moves = torch.tensor([3, 3, 3, 4])
    h = tie_hash(seeds, moves, 100)
    assert h.shape == (4, 100) and h.dtype == torch.int64
    assert int(h.min()) >= 0 and int(h.max()) < 2**32
    assert torch.equal(h, tie_hash(seeds, moves, 100))
    assert not torch.equal(h[1], h[3]) and not torch.equal(h[0], h[1])
    assert len(set(h[0].tolist())) == 100
    assert h[0, 17] == 2438985353  # the same on every machine and device


# --------------------------------------------------------------------------- pure neural play
def _check_results(res: BatchedResults, rules: Rules, n: int) -> None:
    assert len(res) == n
    assert not (res.won & res.lost).any() and (res.won | res.lost).all()  # every game ended
    assert (res.revealed_safe[res.won] == rules.cells - rules.mines).all()
    assert (res.revealed_safe[~res.won] < rules.cells - rules.mines).all()
    assert (res.moves >= 1).all() and (res.guesses < res.moves).all()
    assert (res.model_calls >= res.guesses).all() and (res.flags <= rules.mines).all()


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_batched_pure_play_is_deterministic_and_ends_every_game(bundled, arch):
    solver = get_solver(arch, model=bundled[arch], batch_size=16)
    for rules in (Rules(9, 9, 10), Rules(8, 12, 30, "zero"), Rules(5, 6, 7, "none")):
        seeds = np.arange(200, 260)
        first = play_batched(solver, rules, seeds)
        again = play_batched(solver, rules, seeds, batch_size=7, in_play=11)
        _check_results(first, rules, 60)
        for key in ("won", "lost", "revealed_safe", "moves", "guesses", "flags", "model_calls"):
            assert np.array_equal(getattr(first, key), getattr(again, key)), (arch, rules, key)
        assert np.array_equal(first.seeds, seeds)
        # Real games: won and lost, cells opened several to a model call, flags placed.
        assert 0 < first.win_rate < 1 and (first.moves > first.model_calls + 1).any()
    assert first.flags.sum() > 0


def test_batched_play_is_play_many_without_ties(bundled):
    """Tolerance 0 and no interior pooling leave the CNN no exact ties to break: the same games."""
    for options in ({}, {"tie_break": "fewest_covered_neighbours", "start": "random"},
                    {"tie_break": "random", "start": "corner", "open_below": 0.05, "flag_above": 0.9}):
        solver = get_solver("cnn", model=bundled["cnn"], tolerance=0.0, pool_interior=False, **options)
        for rules in (Rules(9, 9, 10), Rules(8, 12, 16, "zero")):
            seeds = np.arange(40)
            res = play_batched(solver, rules, seeds, batch_size=32)
            envs = [ns.MinesweeperEnv(rules.rows, rules.cols, rules.mines, int(s), rules.first_click)
                    for s in seeds]
            records = solver.play_many(envs, [np.random.default_rng(int(s)) for s in seeds])
            assert [r.won for r in records] == res.won.tolist()
            assert [len(r.moves) for r in records] == res.moves.tolist()
            assert [r.guesses for r in records] == res.guesses.tolist()
            assert [r.model_calls for r in records] == res.model_calls.tolist()
            assert [e.revealed_safe for e in envs] == res.revealed_safe.tolist()
            assert 0 < res.win_rate < 1


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_the_batched_guess_is_a_first_cell_of_rank_cells(bundled, tie_break):
    """The GNN gives every interior cell one value: the guess is one of the cells that
    rank_cells puts first in some order of its exact ties."""
    from nnsweeper.batched.player import _ranked_first
    from nnsweeper.solvers.neural import pool_interior
    from nnsweeper.solvers.ranking import rank_cells, tie_keys

    rules, tol = Rules(16, 30, 99), 1e-3
    grids, flags = _positions(rules, 40, seed=21)
    g, f = grids.numpy(), flags.numpy()
    model = bundled["gnn"]
    want = [pool_interior(p, *gf) for p, *gf in zip(model.predict_proba(g, 99, f), g, f, strict=True)]
    with torch.inference_mode():
        p = pool_interior(predict_tensor(model, grids, 99, flags), grids, flags)
    assert np.abs(p.numpy() - np.stack(want)).max() < 1e-5
    unknown = (grids < 0) & ~flags
    guess = _ranked_first(p, unknown, grids, tie_break, tol, torch.arange(40), torch.full((40,), 3)).numpy()
    ties = 0
    for k in range(40):
        # rank_cells' keys: the probability level, then the tie-break's; equal keys are exact ties.
        keys = np.stack([np.floor(want[k] / tol), *tie_keys(want[k], g[k], tie_break, tol)], axis=-1)
        cells = np.argwhere(unknown[k].numpy())
        best = min(tuple(keys[tuple(c)]) for c in cells)
        tied = unknown[k].numpy() & np.all(keys == np.array(best), axis=-1)
        ties += tied.sum() > 1
        assert tied.ravel()[guess[k]], k
        for s in range(4):
            first = rank_cells(want[k], unknown[k].numpy(), g[k], np.random.default_rng(s), tie_break, tol,
                               coarse_ties=True)[0]
            assert tied[tuple(first)]
    assert ties > 0


def test_batched_play_refusals(models):
    with pytest.raises(ValueError, match="hybrid=False"):
        play_batched(get_solver("hybrid-cnn", model=models["cnn"]), Rules(9, 9, 10), [1])
    with pytest.raises(ValueError, match="give a NeuralSolver with symmetric=False"):
        play_batched(get_solver("cnn", model=models["cnn"], symmetric=True), Rules(9, 9, 10), [1])
    solver = get_solver("cnn", model=models["cnn"])
    with pytest.raises(ValueError, match="batch_size"):
        play_batched(solver, Rules(9, 9, 10), [1], batch_size=0)
    with pytest.raises(ValueError, match="in_play"):
        play_batched(solver, Rules(9, 9, 10), [1], in_play=0)
    with pytest.raises(InvalidRulesError, match="Rules instance"):
        play_batched(solver, (9, 9, 10), [1])


def test_batched_play_with_a_model_of_another_kind():
    """A model without a torch forward is asked through its predict_proba."""

    class Exact:
        def predict_proba(self, grids, totals, flags=None, batch_size=1):
            return [ns.mine_probabilities(g, int(t), flags=f) for g, t, f in zip(grids, totals, flags,
                                                                                   strict=True)]

    solver = NeuralSolver(Exact(), open_below=0.001, flag_above=0.999)
    rules = Rules(6, 6, 5)
    res = play_batched(solver, rules, range(30))
    _check_results(res, rules, 30)
    assert res.win_rate > 0.5
