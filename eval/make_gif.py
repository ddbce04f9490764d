"""One game as an animated GIF: the board before each move, coloured by the solver's P(mine).

Made ``eval/results/game_hybrid-gnn_10x10_20.gif`` with::

    python eval/make_gif.py --solver hybrid-gnn --board 10x10:20 \
        --out eval/results/game_hybrid-gnn_10x10_20.gif

Without ``--seed`` the game is the first evaluation game (``game_seeds(0, 1000)``, the
seeds of ``nnsweeper eval``) in which the solver guesses at least ``--min-guesses``
times; the seed used is printed. Neural solvers colour the board with their model's
probabilities, the others with the exact engine's (``--exact`` forces the latter).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from nnsweeper import MinesweeperEnv, get_solver
from nnsweeper.cli import one_board
from nnsweeper.evaluation import game_seeds
from nnsweeper.plots import animate_game
from nnsweeper.solvers.replay import game_frames

_SCAN = 1000  # evaluation games searched for one with enough guesses


def _pick_seed(solver, rows: int, cols: int, mines: int, min_guesses: int) -> tuple[int, int]:
    """The first evaluation game (index, seed) in which the solver guesses at least ``min_guesses`` times."""
    for index, seed in enumerate(game_seeds(0, _SCAN)):
        seed = int(seed)
        record = solver.play(MinesweeperEnv(rows, cols, mines, seed=seed), np.random.default_rng(seed))
        if record.guesses >= min_guesses:
            return index, seed
    raise ValueError(f"none of the first {_SCAN} evaluation games has {min_guesses} guesses")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--solver", default="hybrid-gnn", help="a registry solver name (default: hybrid-gnn)")
    parser.add_argument("--board", type=one_board, default=(10, 10, 20), metavar="BOARD",
                        help="ROWSxCOLS:MINES or a preset name (default: 10x10:20)")
    parser.add_argument("--seed", type=int, default=None,
                        help="the game seed (default: the first evaluation game with enough guesses)")
    parser.add_argument("--min-guesses", type=int, default=2,
                        help="guesses the chosen game must have, without --seed (default: 2)")
    parser.add_argument("--exact", action="store_true", help="colour by the exact engine's P(mine)")
    parser.add_argument("--fps", type=float, default=1.5, help="frames per second (default: 1.5)")
    parser.add_argument("--out", required=True, help="the GIF to write")
    args = parser.parse_args(argv)

    rows, cols, mines = args.board
    try:
        solver = get_solver(args.solver)
        if args.seed is None:
            index, seed = _pick_seed(solver, rows, cols, mines, args.min_guesses)
            print(f"game {index} of game_seeds(0, {_SCAN}): seed {seed}")
        else:
            seed = args.seed
        env = MinesweeperEnv(rows, cols, mines, seed=seed)
        frames = game_frames(solver, env, np.random.default_rng(seed),
                             probabilities="exact" if args.exact else None)
        model = getattr(solver, "arch", None) if not args.exact else None
        colours = f"{model} P(mine)" if model else "exact P(mine)"
        title = f"{args.solver}, {rows}x{cols}, {mines} mines, seed {seed}\ncolour: {colours}"
        if model and getattr(solver, "hybrid", False):
            title += "; P in the label: exact risk"
        path = animate_game(frames, args.out, fps=args.fps, title=title)
    except ValueError as e:
        print(f"make_gif: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({len(frames)} frames)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
