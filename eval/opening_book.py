"""The first guess after a corner click that shows a number, valued by paired rollouts.

On expert, with the first click in the corner, half the games show a number there (1, 2 or 3)
and open nothing: the next move is a guess on a board where every cell but the corner's three
neighbours is an *interior* cell with the same P(mine). Which of them to open is the commonest
decision where ``search`` and the Java solver part (``benchmarks/peers/java_dnh.py discord``):
the peer opens the far corner (15, 0), ``search`` a cell two steps out from a 1. The exact
engine gives every interior cell the same risk, and the look-ahead sees one move ahead: the
chance of winning after each cell is a question for play to answer.

Each option is a first guess. For every game seed of :data:`SEED` (kept apart from the
records' 2026 and the ablation's 4343) whose corner shows ``n`` >= 1, every option is played
on the same layout, with ``search`` (as it ships) playing every later move. The rollout
conditions on the guess being safe, which every interior cell is with the same chance
``1 - q`` (``q``, the interior's P(mine)): when the option's cell holds a mine in the drawn
layout, that mine moves to a cell drawn uniformly among the other interior cells that are
free. Every layout with the option's cell safe is then equally likely (each arises from
itself and from the same number of layouts with a mine moved onto the cell), so the win rate
of the option, ``(1 - q) * W``, is estimated by ``W``, the share of these games won, without
the noise of the first guess's own loss; and the options are paired game by game. (A forced
first guess draws none of the tie-breaks that ``search``'s own look-ahead draws there, so later
exact ties can fall differently even where ``search`` would have chosen the same cell.)

Games go to ``eval/results/opening_book.games/`` in chunks of :data:`CHUNK` game seeds (each
written whole under a temporary name, then renamed; running the same command again plays only
the chunks missing)::

    python eval/opening_book.py play --chunks 0:300 --worker 0/2    # one of two processes
    python eval/opening_book.py table                               # W per option and n, paired
    python eval/opening_book.py table --write                       # and keep them (below)

``--write`` merges the chunks into ``eval/results/opening_book.json.gz`` (every game: its seed,
the corner's number, each option's outcome; committed) and writes the table to
``eval/results/opening_book.md``. The archive counts as played: ``play`` skips its chunks, and
``table`` reads it together with the chunks played since.

``table`` gives, per corner number ``n`` and option, the games, ``W`` with its interval, and
the paired difference from ``search``'s own choice (the option ``search``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "eval" / "results"
#: The chunks of games as they are played (a working store, not committed).
OUT = RESULTS / "opening_book.games"
#: Every game merged (committed) and the table: ``table --write``.
ARCHIVE = RESULTS / "opening_book.json.gz"
TABLE = RESULTS / "opening_book.md"
#: Base seed of the rollouts' games (not the records' 2026 nor the ablation's 4343).
SEED = 515151
CHUNK = 100  # game seeds per chunk (about half show a number in the corner)
#: The first guesses tried, (row, col) on expert (16 rows, 30 columns); ``search``: its own.
OPTIONS = {
    "search": None,
    "corner (15, 0)": (15, 0),
    "corner (0, 29)": (0, 29),
    "corner (15, 29)": (15, 29),
    "edge (0, 2)": (0, 2),
    "edge (2, 0)": (2, 0),
    "edge (0, 3)": (0, 3),
    "inside (2, 2)": (2, 2),
    "inside (2, 1)": (2, 1),
    "edge (0, 15)": (0, 15),
    "centre (8, 15)": (8, 15),
}
CORNER = (0, 0)
#: The board (a preset of :class:`~nnsweeper.game.Rules`, safe first click).
BOARD = "expert"


def rules():
    from nnsweeper.game import Rules

    return Rules.preset(BOARD)


def corner_block(shape) -> np.ndarray:
    """The first click's cell and its neighbours (bool): the cells whose mines the rollouts keep."""
    block = np.zeros(shape, dtype=bool)
    i, j = CORNER
    block[max(i - 1, 0): i + 2, max(j - 1, 0): j + 2] = True
    return block


def first_guess_solver(cell):
    """``search`` (first click in the corner) whose first guess is ``cell`` (None: its own)."""
    from nnsweeper.solvers import SearchSolver
    from nnsweeper.solvers.search import SearchChoice

    class FirstGuess(SearchSolver):
        def choose(self, obs, a, rng, *, game=None):
            if cell is not None and np.count_nonzero(obs.grid >= 0) == 1 and obs.grid[cell] < 0:
                return SearchChoice(cell, "look-ahead", float(a.probabilities[cell]), (), None, a.layouts)
            return super().choose(obs, a, rng, game=game)

    return FirstGuess(start="corner")


def moved_layout(layout: np.ndarray, cell, seed: int) -> np.ndarray:
    """``layout`` with ``cell`` safe: its mine (if any) moved to a free interior cell drawn uniformly."""
    if cell is None or not layout[cell]:
        return layout
    out = layout.copy()
    out[cell] = False
    free = ~out & ~corner_block(out.shape)  # the corner and its neighbours keep their mines
    free[cell] = False
    targets = np.flatnonzero(free.ravel())
    rng = np.random.default_rng((seed, cell[0], cell[1]))
    out.ravel()[targets[rng.integers(len(targets))]] = True
    return out


def own_guess(solver, game, seed: int):
    """The cell ``solver`` guesses first on ``game`` (after its corner click and certain moves)."""
    rng = np.random.default_rng(seed)
    turns, flags = solver.begin(game, rng)
    a = solver.certain_moves(turns, flags)
    while a is True:
        a = solver.certain_moves(turns, flags)
    return solver.choose(turns.observation(flags), a, rng, game=turns).cell


def play_chunk(k: int) -> dict:
    """Every option on the games of chunk ``k`` whose corner shows a number."""
    from nnsweeper.evaluation.harness import game_seeds
    from nnsweeper.game import Game, draw_layout

    r = rules()

    class LayoutGame(Game):
        def __init__(self, layout):
            self.fixed = layout
            super().__init__(r, 0)

        def reset(self, seed=None):
            super().reset()
            self._set_layout(self.fixed.copy())
            return self.observe()

    seeds = game_seeds(SEED, (k + 1) * CHUNK)[k * CHUNK:]
    block = corner_block((r.rows, r.cols))
    names = list(OPTIONS)
    solvers = [first_guess_solver(OPTIONS[name]) for name in names]
    kept, shown, wins, secs = [], [], [], []
    for sd in seeds.tolist():
        layout = draw_layout(r, sd, CORNER)
        n = int(layout[block].sum())
        if n == 0:
            continue
        row, t = [], []
        for name, solver in zip(names, solvers, strict=True):
            cell = OPTIONS[name] or own_guess(solver, LayoutGame(layout), sd)
            game = LayoutGame(moved_layout(layout, cell, sd))
            t0 = time.perf_counter()
            rec = solver.play(game, np.random.default_rng(sd))
            t.append(time.perf_counter() - t0)
            row.append(bool(rec.won))
        kept.append(sd)
        shown.append(n)
        wins.append(row)
        secs.append(t)
    return {"chunk": k, "board": BOARD, "seed": SEED, "options": names, "seeds": kept, "n": shown,
            "wins": wins,
            "seconds": np.round(np.array(secs).reshape(-1, len(names)), 4).tolist()}


def play(chunks: range, worker: int, workers: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    archived = {r["chunk"] for r in archived_chunks()}
    for k in chunks:
        if k % workers != worker or k in archived:
            continue
        path = OUT / f"chunk{k:05d}.json"
        if path.exists():
            continue
        data = play_chunk(k)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
        print(f"chunk {k}: {len(data['seeds'])} games", flush=True)


def archived_chunks() -> list[dict]:
    """The chunks the archive holds, as :func:`play_chunk` made them (times in whole milliseconds)."""
    if not ARCHIVE.exists():
        return []
    with gzip.open(ARCHIVE, "rt") as f:
        data = json.load(f)
    rows, at = [], 0
    for k, size in zip(data["chunks"], data["sizes"], strict=True):
        part = slice(at, at + size)
        at += size
        rows.append({"chunk": k, "board": data["board"], "seed": data["seed"], "options": data["options"],
                     "seeds": data["seeds"][part], "n": data["n"][part],
                     "wins": [[c == "1" for c in w] for w in data["wins"][part]],
                     "seconds": [[ms / 1000 for ms in t] for t in data["milliseconds"][part]]})
    return rows


def load():
    """Every game: the archive's chunks and those played since (a chunk the archive holds is not
    played again)."""
    rows = archived_chunks()
    have = {r["chunk"] for r in rows}
    rows += [r for r in (json.loads(p.read_text()) for p in sorted(OUT.glob("chunk*.json")))
             if r["chunk"] not in have]
    if not rows:
        raise SystemExit(f"no chunk in {OUT}: run `python eval/opening_book.py play` first")
    rows.sort(key=lambda r: r["chunk"])
    names = list(OPTIONS)
    if any(r["options"] != names or r["seed"] != SEED or r["board"] != BOARD for r in rows):
        raise SystemExit(f"games of another board, seed or options in {OUT} or {ARCHIVE}: give them a "
                         "folder of their own")
    n = np.concatenate([np.array(r["n"], dtype=int) for r in rows])
    wins = np.concatenate([np.array(r["wins"], dtype=bool).reshape(-1, len(names)) for r in rows])
    secs = np.concatenate([np.array(r["seconds"], dtype=float).reshape(-1, len(names)) for r in rows])
    secs = np.round(1000 * secs) / 1000  # whole milliseconds, as the archive keeps them
    seeds = [s for r in rows for s in r["seeds"]]
    return names, n, wins, secs, [r["chunk"] for r in rows], [len(r["n"]) for r in rows], seeds


def write(path: Path, text: str, *, compress: bool = False) -> None:
    """``text`` to ``path`` under a temporary name, then renamed (gzipped with ``compress``)."""
    tmp = path.with_name(path.name + ".tmp")
    with (gzip.open(tmp, "wt") if compress else open(tmp, "w")) as f:
        f.write(text)
    os.replace(tmp, path)


def table(keep: bool = False) -> str:
    from nnsweeper.evaluation.stats import newcombe_paired_interval, wilson_interval

    names, n, wins, secs, chunks, sizes, seeds = load()
    if keep:
        merged = {"board": BOARD, "seed": SEED, "corner": list(CORNER), "options": names, "chunks": chunks,
                  "sizes": sizes, "seeds": seeds, "n": n.tolist(),
                  "wins": ["".join("1" if x else "0" for x in w) for w in wins],
                  "milliseconds": np.round(1000 * secs).astype(int).tolist()}
        write(ARCHIVE, json.dumps(merged), compress=True)
    out = [f"The first guess on {BOARD} after a first click in the corner that shows a number, valued by "
           f"paired rollouts (`python eval/opening_book.py`): {len(n):,} games (those of {len(chunks)} "
           f"chunks of {CHUNK} game seeds of base seed {SEED} whose corner shows a number), every option "
           "played on each. W: the share won with the option's cell safe (its chance of winning is W "
           "times the interior's chance of being safe, the same for every option); the gap to `search`'s "
           "own choice in percentage points, paired (Newcombe's 95% interval); mean time of a game after "
           "the guess.",
           ""]
    for shown in sorted(set(n.tolist())) + [0]:
        sel = n == shown if shown else np.ones(len(n), dtype=bool)
        w = wins[sel]
        m = len(w)
        out += [f"### corner shows {shown if shown else 'any'} ({m:,} games)", "",
                "| option | W | W (95%) | - search (95%) | it only / search only | mean time |",
                "| --- | ---: | --- | --- | ---: | ---: |"]
        ref = w[:, 0]
        for j, name in enumerate(names):
            lo, hi = wilson_interval(int(w[:, j].sum()), m)
            it, other = int((w[:, j] & ~ref).sum()), int((~w[:, j] & ref).sum())
            if j == 0:
                gap, only = "reference", ""
            else:
                both = int((w[:, j] & ref).sum())
                low, high = newcombe_paired_interval(both, it, other, m - both - it - other)
                gap = f"{100 * (it - other) / m:+.2f} ({100 * low:+.2f} to {100 * high:+.2f})"
                only = f"{it} / {other}"
            out.append(f"| {name} | {100 * w[:, j].mean():.2f}% | {100 * lo:.2f}-{100 * hi:.2f} | {gap} | "
                       f"{only} | {1000 * secs[sel, j].mean():.0f} ms |")
        out.append("")
    text = "\n".join(out)
    if keep:
        write(TABLE, text + "\n")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play")
    p.add_argument("--chunks", default="0:10", help="first:last chunk ids (last excluded)")
    p.add_argument("--worker", default="0/1", help="i/n: play the chunks k with k %% n == i")
    t = sub.add_parser("table")
    t.add_argument("--write", action="store_true",
                   help="merge the chunks into the archive and keep the table")
    args = ap.parse_args(argv)
    if args.cmd == "play":
        a, b = (int(x) for x in args.chunks.split(":"))
        i, w = (int(x) for x in args.worker.split("/"))
        play(range(a, b), i, w)
    else:
        print(table(args.write))
    return 0


if __name__ == "__main__":
    sys.exit(main())
