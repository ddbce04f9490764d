"""Frames of a played game: the solver's game replayed move by move, with its P(mine) maps."""

import numpy as np
import pytest
from PIL import Image

from nnsweeper import MinesweeperEnv, analyze, get_solver
from nnsweeper.evaluation import game_seeds
from nnsweeper.plots import animate_game
from nnsweeper.solvers.replay import game_frames


def seeded_game(rows=6, cols=6, mines=7, index=6):
    """Game ``index`` of the evaluation seeds (6: csp wins with 3 guesses; 9: csp loses)."""
    seed = int(game_seeds(0, index + 1)[index])
    return MinesweeperEnv(rows, cols, mines, seed=seed), np.random.default_rng(seed), seed


def test_game_frames_one_per_move_with_the_exact_engine():
    env, rng, seed = seeded_game()
    frames = game_frames(get_solver("csp"), env, rng, group_certain=False)
    record = get_solver("csp").play(MinesweeperEnv(6, 6, 7, seed=seed), np.random.default_rng(seed))
    assert len(frames) == len(record.moves) + 1  # and the finished board
    assert [f["moves"] for f in frames[:-1]] == [[m] for m in record.moves]
    assert [f["move"] for f in frames[:-1]] == [m.cell for m in record.moves]
    assert (frames[0]["grid"] == -1).all()  # nothing revealed before the first click
    assert frames[0]["label"] == f"move 1: first click (3, 3), P={7 / 36:.2f}"
    for f in frames[:-1]:
        exact = analyze(f["grid"], 7)
        np.testing.assert_array_equal(f["probabilities"], exact.probabilities)
        np.testing.assert_array_equal(f["flags"], exact.mines)
        assert f["grid"][f["move"]] == -1
    # Each grid is the one before plus what the move opened.
    for before, after in zip(frames, frames[1:], strict=False):
        assert ((before["grid"] >= 0) <= (after["grid"] >= 0)).all()
        assert after["grid"][before["move"]] >= 0
    guesses = [(n, f) for n, f in enumerate(frames, start=1) if f["moves"] and f["moves"][0].kind == "guess"]
    assert record.won and len(guesses) == record.guesses == 3
    n, f = guesses[0]
    m = f["moves"][0]
    assert f["label"] == f"move {n}: guess {m.cell}, P={m.probability:.2f}"
    assert 0 < m.probability < 1
    last = frames[-1]
    assert last["probabilities"] is None and last["moves"] == [] and last["move"] is None
    assert last["label"] == f"won after {len(record.moves)} moves (3 guesses)"
    assert (last["flags"] == (last["grid"] == -1)).all()  # every mine left is proven


def test_game_frames_end_on_the_cell_that_lost():
    env, rng, seed = seeded_game(index=9)
    frames = game_frames(get_solver("csp"), env, rng)
    last_move = frames[-2]["moves"][-1]
    assert last_move.kind == "guess"
    assert frames[-1]["move"] == last_move.cell and frames[-1]["grid"][last_move.cell] == -1
    n = sum(len(f["moves"]) for f in frames)
    assert frames[-1]["label"] == f"lost at move {n}: {last_move.cell} was a mine"


def test_game_frames_group_certain_moves_of_a_turn():
    env, rng, seed = seeded_game()
    grouped = game_frames(get_solver("csp"), env, rng)
    single = game_frames(get_solver("csp"), *seeded_game()[:2], group_certain=False, final=False)
    moves = [m for f in grouped for m in f["moves"]]
    assert moves == [f["moves"][0] for f in single]  # every move once, in order
    assert len(grouped) - 1 < len(single)
    for f in grouped[:-1]:
        kinds = {m.kind for m in f["moves"]}
        assert len(kinds) == 1
        if len(f["moves"]) > 1:  # certain moves, all proven safe on the board shown
            assert kinds <= {"local", "engine"}
            assert all(analyze(f["grid"], 7).safe[m.cell] for m in f["moves"])
            n = moves.index(f["moves"][0]) + 1
            assert f["label"].startswith(f"moves {n}-{n + len(f['moves']) - 1}: ")


def test_game_frames_with_the_solvers_model():
    import torch

    from nnsweeper.grid import dilate
    from nnsweeper.models import MineModel
    from nnsweeper.solvers import HybridGNNSolver

    torch.manual_seed(0)
    model = MineModel.from_config({"arch": "gnn", "hidden": 8, "layers": 1})
    env, rng, seed = seeded_game(index=0)
    frames = game_frames(HybridGNNSolver(model), env, rng, final=False)
    for f in frames:
        p = model.predict_proba(f["grid"], 7, flags=f["flags"])
        interior = (f["grid"] < 0) & ~f["flags"] & ~dilate(f["grid"] >= 0)
        if interior.any():  # the solver pools the interior cells
            p[interior] = p[interior].mean()
        np.testing.assert_allclose(f["probabilities"], p, atol=1e-6)
    exact = game_frames(HybridGNNSolver(model), *seeded_game(index=0)[:2], "exact", final=False)
    np.testing.assert_array_equal(exact[1]["probabilities"], analyze(exact[1]["grid"], 7).probabilities)
    other = game_frames(get_solver("csp"), *seeded_game(index=0)[:2], model, final=False)
    assert not np.array_equal(other[0]["probabilities"], analyze(other[0]["grid"], 7).probabilities)


def test_game_frames_make_a_gif(tmp_path):
    frames = game_frames(get_solver("csp"), *seeded_game()[:2])
    path = animate_game(frames, tmp_path / "game.gif", title="csp, 6x6, 7 mines\nexact P(mine)")
    with Image.open(path) as gif:
        assert gif.n_frames == len(frames)


def test_game_frames_bad_input():
    with pytest.raises(ValueError, match="probabilities must be None, 'exact' or a MineModel; got str"):
        game_frames(get_solver("csp"), *seeded_game()[:2], "model")

    class Drifting(MinesweeperEnv):
        def reset(self, seed=None):  # from the third reset on (the replay's), another game
            self.resets = getattr(self, "resets", 0) + 1
            return super().reset(self.seed + 1 if self.resets > 2 else seed)

    env = Drifting(6, 6, 7, seed=5)
    with pytest.raises(ValueError, match="the env must replay its game after reset"):
        game_frames(get_solver("csp"), env, np.random.default_rng(5))
