"""One example of every figure nnsweeper draws, as small PNG files in ``docs/gallery``.

Draws the evaluation figure (win rates, and their differences from a reference) of
saved tables in ``eval/results``, a reliability diagram and P(mine) boards of the
bundled models, and one frame of a game animation, then writes
``docs/gallery/README.md`` listing them::

    python eval/gallery.py

Every figure is deterministic: the tables are read from files and the games are
played on fixed seeds (the evaluation seeds of :func:`nnsweeper.game_seeds`).
Figures are drawn on bare Agg figures (no display needed) and written atomically.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "eval" / "results"
OUT = ROOT / "docs" / "gallery"
DPI = 100
COMMAND = "python eval/gallery.py"

BASE_SEED = 0  # the seeds of `nnsweeper eval`, none of them trained on
MODEL_MINES = (10, 15, 20, 25)  # 10x10 mine counts of the positions the models are scored on
MODEL_GAMES = 6  # games per mine count
GAME = (10, 10, 20)  # the animated game's board and mine count
GAME_SOLVER = "hybrid-gnn"


def _table(name: str):
    from nnsweeper.evaluation import EvalTable

    return EvalTable.from_json(RESULTS / f"{name}.json")


def _subset(table, solvers):
    """The rows of ``solvers``, as a table of their own (in ``solvers`` order)."""
    from nnsweeper.evaluation import EvalTable

    rows = [r for s in solvers for r in table if r["solver"] == s]
    described = table.metadata.get("solvers") or {}
    return EvalTable(rows, {**table.metadata, "solvers": {s: described.get(s, s) for s in solvers}})


def _counts(name: str) -> str:
    """``"7 solvers over 26 mine counts"``: what a table holds, read from it, so the text stays true."""
    table = _table(name)
    return f"{len(table.solvers)} solvers over {len({r['mines'] for r in table})} mine counts"


def _evaluation(name: str, *, x: str, reference: str = "csp", solvers=None, note: str = ""):
    from nnsweeper.plots import agg_figure, evaluation_title, plot_evaluation

    table = _table(name)
    if solvers is not None:
        table = _subset(table, solvers)
    title = evaluation_title(table, x) + (f"\n{note}" if note else "")
    return plot_evaluation(table, agg_figure(), x=x, reference=reference, title=title)


def _positions():
    """Positions of csp games on 10x10 boards with the exact engine's analysis of each."""
    from nnsweeper import Rules, analyze, game_seeds
    from nnsweeper.datasets import record_game

    positions = []
    for mines in MODEL_MINES:
        for seed in game_seeds(BASE_SEED, MODEL_GAMES):
            states, _ = record_game(Rules(10, 10, mines), int(seed), policy="csp", start="center")
            for k in range(len(states["grid"])):
                grid, flags = states["grid"][k], states["flags"][k]
                positions.append({"mines": mines, "grid": grid, "flags": flags,
                                  "truth": states["mines"][k], "guess": bool(states["guess"][k]),
                                  "analysis": analyze(grid, mines, flags)})
    return positions


def _model_figures(out: Path) -> list[tuple[Path, str]]:
    """The reliability diagram and the P(mine) boards of the bundled cnn and gnn models."""
    from nnsweeper.metrics import PredictionAccumulator
    from nnsweeper.models import load_model
    from nnsweeper.plots import agg_figure, plot_probability_boards, plot_reliability, save_figure

    positions = _positions()
    grids = np.stack([p["grid"] for p in positions])
    flags = np.stack([p["flags"] for p in positions])
    exact = np.stack([p["analysis"].probabilities for p in positions])
    unknown = np.stack([p["analysis"].unknown for p in positions])
    frontier = np.stack([p["analysis"].frontier for p in positions])
    truth = np.stack([p["truth"] for p in positions]).astype(float)
    totals = [p["mines"] for p in positions]
    predicted = {}
    for name in ("cnn", "gnn"):
        predicted[name] = load_model(name).predict_proba(grids, totals, flags=flags)

    written = []
    fig = agg_figure()
    fig.set_size_inches(9.6, 4.6)
    axes = fig.subplots(1, 2)
    cells = {}
    for name, p in predicted.items():
        acc = PredictionAccumulator()
        acc.add(p, exact, truth, frontier=frontier, mask=unknown)
        cells[name] = acc.to_set()
    for ax, (region, is_frontier) in zip(axes, (("frontier", True), ("interior", False)), strict=True):
        part = {name: rows.select(is_frontier) for name, rows in cells.items()}
        n = int(part["gnn"].cells)
        plot_reliability(part, ax, bins=10, title=f"{region} cells ({n:,}), 10x10 boards")
    fig.subplots_adjust(wspace=0.25)
    written.append((save_figure(fig, out / "reliability.png", dpi=DPI),
                    "reliability diagram of the bundled cnn and gnn models (in the colours of the "
                    "cnn and gnn solvers) on frontier and interior cells of 10x10 positions"))

    # The position at 20 mines where csp had to guess with the most frontier cells.
    candidates = [i for i, p in enumerate(positions) if p["guess"] and p["mines"] == 20]
    example = max(candidates or range(len(positions)), key=lambda i: int(frontier[i].sum()))
    pos = positions[example]
    maps = {"exact engine": exact[example], "cnn": predicted["cnn"][example],
            "gnn": predicted["gnn"][example]}
    fig = plot_probability_boards(pos["grid"], maps, flags=pos["flags"], mines=pos["truth"],
                                  fig=agg_figure(),
                                  title=f"10x10, {pos['mines']} mines: exact and predicted P(mine)")
    written.append((save_figure(fig, out / "probability_boards.png", dpi=DPI),
                    "P(mine) boards of one 10x10 position where csp had to guess: the exact "
                    "engine's and the two models' probabilities, true mines outlined in green"))
    return written


def _game_frame(out: Path) -> tuple[Path, str]:
    """One frame (a guess) of the animation of a game, drawn as animate_game draws it."""
    from nnsweeper import MinesweeperEnv, game_seeds, get_solver
    from nnsweeper.plots import agg_figure, animate_game, save_figure
    from nnsweeper.solvers.replay import game_frames

    rows, cols, mines = GAME
    solver = get_solver(GAME_SOLVER)
    # The first evaluation game with a guess on a board at least a third open.
    for seed in game_seeds(BASE_SEED, 200):
        seed = int(seed)
        frames = game_frames(solver, MinesweeperEnv(rows, cols, mines, seed=seed),
                             np.random.default_rng(seed))
        late = [f for f in frames if ": guess" in (f["label"] or "")
                and np.sum(f["grid"] >= 0) >= rows * cols // 3]
        if late:
            break
    else:
        raise ValueError(f"no game of game_seeds({BASE_SEED}, 200) has a guess on a board a third open")
    frame = late[0]
    title = (f"{GAME_SOLVER}, {rows}x{cols}, {mines} mines, seed {seed}\n"
             "colour: gnn P(mine); P in the label: exact risk")
    fig = agg_figure()
    with tempfile.TemporaryDirectory() as tmp:
        # animate_game leaves the figure holding its last (here: only) frame.
        animate_game([frame], Path(tmp) / "frame.gif", title=title, dpi=DPI, fig=fig)
    path = save_figure(fig, out / "game_frame.png", dpi=DPI)
    return path, (f"one frame of a game animation ({GAME_SOLVER} on 10x10 with 20 mines): the board "
                  "before a guess, coloured by the model's P(mine), the next cell outlined in cyan")


def draw(out: Path) -> list[tuple[Path, str]]:
    """Draw every figure into ``out``; return (path, what it shows) for each."""
    from nnsweeper.plots import save_figure

    evaluations = [
        ("evaluation_compare_10x10.png",
         _evaluation("compare_10x10", x="mines"),
         f"`eval/results/compare_10x10.json`: {_counts('compare_10x10')} on 10x10; below, "
         "each solver minus csp with its paired 95% interval as dodged bars (single_point, far "
         "weaker, is named off scale)"),
        ("evaluation_compare_classic.png",
         _evaluation("compare_classic", x="board"),
         "`eval/results/compare_classic.json`: the three classic boards side by side, every "
         "point with its 95% interval as a bar, solvers moved sideways so the bars stay apart"),
        ("evaluation_compare_classic_reference_hybrid-gnn.png",
         _evaluation("compare_classic", x="board", reference="hybrid-gnn",
                     note="reference: hybrid-gnn"),
         "the same table with hybrid-gnn as the reference: every solver keeps its colour and "
         "marker (csp stays black), the zero line takes hybrid-gnn's colour"),
        ("evaluation_three_solvers.png",
         _evaluation("compare_10x10", x="mines", solvers=("single_point", "csp", "gnn"),
                     note="single_point, csp and gnn only"),
         "three solvers of `compare_10x10.json`: the same colours as in the figure of all of them; "
         "with few lines the differences keep their bands"),
        ("evaluation_single_board.png",
         _evaluation("csp_expert_corner", x="board"),
         "`eval/results/csp_expert_corner.json`: one solver on one board, its win rate drawn "
         "with the 95% Wilson interval as an error bar"),
    ]
    written = []
    for name, fig, what in evaluations:
        written.append((save_figure(fig, out / name, dpi=DPI), what))
    written += _model_figures(out)
    written.append(_game_frame(out))
    return written


def _readme(written: list[tuple[Path, str]]) -> str:
    lines = [
        "# Figure gallery",
        "",
        "One example of every figure nnsweeper draws, made by",
        "",
        f"    {COMMAND}",
        "",
        "Each solver (and model) has one colour and marker everywhere, from its name",
        "(`nnsweeper.plots.solver_style`): fixed for the solvers that ship with nnsweeper,",
        "derived from the name for any other.",
        "",
        "| image | what it shows | made by |",
        "| --- | --- | --- |",
    ]
    lines += [f"| [{path.name}]({path.name}) | {what} | `{COMMAND}` |" for path, what in written]
    return "\n".join(lines) + "\n"


def _shown(path: Path) -> Path:
    """``path`` relative to the working folder where it lies under it."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the images (default: docs/gallery)")
    args = parser.parse_args(argv)

    from nnsweeper.fileio import write_text_atomic

    try:
        written = draw(args.out)
    except ValueError as e:
        print(f"gallery: error: {e}", file=sys.stderr)
        return 2
    written.append((write_text_atomic(args.out / "README.md", _readme(written)), ""))
    for path, _ in written:
        print(f"wrote {_shown(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
