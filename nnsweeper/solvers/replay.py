"""The frames of a solver's game: play it, then replay its moves to see each board the player saw.

:func:`game_frames` plays one game with a solver, replays the recorded moves on the
same env and returns one frame per move (the visible board, the proven mines, a
P(mine) map, the move and a label), for :func:`nnsweeper.plots.animate_game` to draw.
"""

from __future__ import annotations

import numpy as np

from nnsweeper.engine import analyze

__all__ = ["game_frames"]

#: Move kinds that open cells proven safe; consecutive ones can share a frame.
_CERTAIN_KINDS = ("local", "engine")
_KIND_WORDS = {"first": "first click", "local": "local rule", "engine": "engine",
               "guess": "guess", "model": "model", "forced": "forced guess",
               "look-ahead": "look-ahead guess", "endgame": "endgame search"}


def game_frames(solver, env, rng, probabilities=None, *, group_certain=True, final=True):
    """Play one game with a solver and return its frames for :func:`nnsweeper.plots.animate_game`.

    The solver plays the game (``solver.play(env, rng)``); the recorded moves are then
    replayed on the same env after ``env.reset()`` (a seeded env replays its game), so
    every frame shows what the player saw: the visible board before the move, never
    the hidden layout.

    One frame per move, showing the board before it with the next cell outlined and a
    label such as ``"move 7: guess (3, 4), P=0.21"`` (the move's kind and the
    probability the solver recorded with it; for the hybrid solvers' guesses that is
    the exact risk of the cell the model chose). With ``group_certain``, consecutive
    certain moves of one kind (``"local"`` or ``"engine"``) whose cells were all proven
    safe on the board shown share one frame (``"moves 8-15: engine opens 8 safe
    cells"``), which is roughly one frame per solver turn and keeps GIFs short; the
    outline is then on the first of those cells. With ``final``, a last frame shows the
    finished board.

    Parameters
    ----------
    solver : Solver
        Anything with ``play(env, rng)`` returning a
        :class:`~nnsweeper.solvers.GameRecord`.
    env : MinesweeperEnv
        A seeded game; the solver resets it, and so does the replay.
    rng : numpy.random.Generator
        The solver's randomness.
    probabilities : None, "exact" or MineModel, optional
        The P(mine) map of every frame: the exact engine's
        (:func:`nnsweeper.analyze`) for ``"exact"``, a model's
        (``model.predict_proba``, one batch for the whole game) for a
        :class:`~nnsweeper.models.MineModel`. The default (None) is the solver's own
        model for a neural solver (``solver.model``) and the exact engine otherwise.
        A solver that pools interior cells (``pool_interior``) sees one mean
        probability on them, and so does the map.
    group_certain : bool, default=True
        Put consecutive proven-safe moves of one kind into one frame.
    final : bool, default=True
        Add a frame with the board at the end (no map; the cell that lost the game
        outlined), labelled ``"won after 27 moves (3 guesses)"``, ``"lost at move 9:
        (3, 4) was a mine"`` or, when the solver stopped, ``"stopped after ..."``.

    Returns
    -------
    list of dict
        The frames: ``grid`` (the visible board), ``flags`` (the covered cells the
        exact engine proves to be mines on it: what a solver can know; the pure
        neural solvers flag from their model instead, so their own flags may
        differ), ``probabilities`` (the map, None in the final frame), ``move`` (the
        cell revealed next, or the cell that exploded, or None), ``label``, and
        ``moves`` (the :class:`~nnsweeper.solvers.base.Move` records the frame
        covers; empty in the final frame).

    Raises
    ------
    ValueError
        ``probabilities`` of another kind; a game without moves; a replay that does
        not reproduce the recorded game (an env that does not replay its game after
        ``reset()``).
    """
    if probabilities is None:
        candidate = getattr(solver, "model", None)
        model = candidate if callable(getattr(candidate, "predict_proba", None)) else None
    elif isinstance(probabilities, str) and probabilities == "exact":
        model = None
    elif callable(getattr(probabilities, "predict_proba", None)):
        model = probabilities
    else:
        raise ValueError(
            f"probabilities must be None, 'exact' or a MineModel; got {type(probabilities).__name__}"
        )
    record = solver.play(env, rng)
    moves = list(record.moves)
    if not moves:
        raise ValueError("the solver made no move in this game; there is nothing to show")

    env.reset()
    total = int(env.mines)
    steps = []  # (first move number, grid, engine's analysis, moves)
    k = 0
    while k < len(moves):
        grid = env.observe()
        analysis = analyze(grid, total)
        group = [moves[k]]
        if group_certain and moves[k].kind in _CERTAIN_KINDS:
            while (k + len(group) < len(moves) and moves[k + len(group)].kind == moves[k].kind
                   and analysis.safe[moves[k + len(group)].cell]):
                group.append(moves[k + len(group)])
        for n, move in enumerate(group, start=k + 1):
            _replay(env, n, move)
        steps.append((k + 1, grid, analysis, group))
        k += len(group)
    won = getattr(env, "result", None) == "win"
    if won != bool(record.won):
        raise ValueError(
            f"the replay of the recorded moves {'won' if won else 'did not win'} a game the solver "
            f"{'won' if record.won else 'lost'}; the env must replay its game after reset()"
        )

    if model is None:
        maps = [analysis.probabilities for _, _, analysis, _ in steps]
    else:
        maps = _model_maps(model, solver, [(g, a.mines) for _, g, a, _ in steps], total)
    frames = [
        {"grid": grid, "flags": analysis.mines, "probabilities": p, "move": group[0].cell,
         "label": _frame_label(first, group), "moves": group}
        for (first, grid, analysis, group), p in zip(steps, maps, strict=True)
    ]
    if final:
        grid = env.observe()
        last = moves[-1]
        lost = getattr(env, "result", None) == "lose"
        if won:
            label = f"won after {len(moves)} moves ({record.guesses} guesses)"
        elif lost:
            label = f"lost at move {len(moves)}: {last.cell} was a mine"
        else:
            label = f"stopped after {len(moves)} moves, the game unfinished"
        frames.append({"grid": grid, "flags": analyze(grid, total).mines, "probabilities": None,
                       "move": last.cell if lost else None, "label": label, "moves": []})
    return frames


def _replay(env, number: int, move) -> None:
    """Reveal a recorded move's cell on ``env``, or fail if the replay has drifted."""
    i, j = move.cell
    if getattr(env, "done", False) or env.mask[i, j] != 1:
        raise ValueError(
            f"the replay cannot make move {number} at {move.cell}: the cell is not covered or "
            "the game is over; the env must replay its game after reset()"
        )
    env.reveal(i, j)


def _model_maps(model, solver, boards, total: int) -> list[np.ndarray]:
    """A model's P(mine) for every (grid, flags), in one batch, its interior as ``solver`` plays it."""
    maps = model.predict_proba([g for g, _ in boards], total, flags=[f for _, f in boards])
    shaped = getattr(solver, "interior_values", None)
    if shaped is None:
        return [np.array(p, dtype=float) for p in maps]
    return [shaped(np.array(p, dtype=float), grid, flags, total)
            for (grid, flags), p in zip(boards, maps, strict=True)]


def _frame_label(first: int, group) -> str:
    move = group[0]
    if len(group) == 1:
        return f"move {first}: {_KIND_WORDS.get(move.kind, move.kind)} {move.cell}, P={move.probability:.2f}"
    word = _KIND_WORDS.get(move.kind, move.kind)
    return f"moves {first}-{first + len(group) - 1}: {word} opens {len(group)} safe cells"
