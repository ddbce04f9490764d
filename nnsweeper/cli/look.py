"""``nnsweeper analyze``, ``play`` and ``watch``: look at one position or one game.

``analyze`` prints the exact mine probability of every cell of a board typed as text,
its number of consistent layouts and the move each solver would make there; ``play``
is the terminal game (:mod:`nnsweeper.players.play`) with the engine's hints; ``watch`` plays
one seeded game with a solver and writes it as an animation.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nnsweeper.cli.core import (
    add_no_guess,
    add_one_board,
    first_click_rule,
    int_in,
    name_list,
    start_cell,
)

#: The largest board ``analyze --png`` draws (one text per cell: 100x100 takes seconds).
MAX_PICTURE_CELLS = 10_000
#: Evaluation games ``watch`` searches for one with enough guesses, without --seed.
WATCH_SCAN = 1000


# --------------------------------------------------------------------- analyze
def add_analyze(sub):
    from nnsweeper.engine import MAX_STATES

    an = sub.add_parser(
        "analyze",
        help="print the exact mine probability of every cell of a board, and each solver's next move",
        description="Read a board typed as text and print P(mine) for every covered cell, marking "
        "revealed numbers as [n], flags as F and the cells the exact engine proves safe or mined as "
        "'safe' and 'mine'; then the mines left, the interior probability, the number of consistent "
        "mine layouts, and the cell each solver would reveal next, with its reason. Cells are "
        "(row, col), both from 0. Board text: one row per line, '.' covered, 'F' flag, digits 0-8 "
        "revealed numbers; spaces between cells are allowed. MineSweeperProb's format is read too: a "
        "first line WIDTHxHEIGHTxMINES, then H covered, M flagged mine, m covered, digits.",
        epilog="example: nnsweeper analyze examples/board.txt --mines 10 --solvers single_point,csp",
    )
    an.add_argument("file", metavar="FILE", help="board text file, or - to read stdin")
    an.add_argument(
        "--mines", type=int_in(0), default=None,
        help="total mines on the board, flagged ones included (may be left out for a board text "
        "whose header gives it)",
    )
    an.add_argument(
        "--max-states", type=int_in(1), default=MAX_STATES, metavar="N",
        help="most partial solutions the exact engine may hold at one box of a frontier component "
        f"(default: {MAX_STATES}); a wider frontier is refused",
    )
    an.add_argument(
        "--solvers", type=name_list, default=None, metavar="NAMES",
        help="comma-separated solvers whose next move to show (default: single_point, csp and the "
        "neural solvers whose models load)",
    )
    an.add_argument(
        "--seed", type=int_in(0), default=0,
        help="seed of the solvers' randomness (ties, random guesses; default: 0)",
    )
    an.add_argument(
        "--value", nargs="?", const=200, type=int_in(1, 100_000, "Monte Carlo games"), default=None,
        metavar="GAMES",
        help="also print the chance that the search solver wins from here: the value network's estimate "
        "and a Monte Carlo estimate from GAMES games on layouts drawn from the position (default: 200)",
    )
    an.add_argument(
        "--png", default=None, metavar="OUT",
        help="also draw the position as a picture: exact P(mine) of every covered cell, the proven safe "
        "cells and mines, and each solver's next move (any matplotlib format by OUT's suffix)",
    )
    an.set_defaults(handler=_cmd_analyze)
    return an


def _cmd_analyze(args, argv) -> int:
    import os

    from nnsweeper.boardtext import format_analysis, parse_observation
    from nnsweeper.engine import analyze
    from nnsweeper.solvers.suggest import format_suggestions, load_solvers, suggest_move

    if args.png is not None:
        _check_figure_path(args.png)
    board = parse_observation(_read_board_text(args.file), args.mines)
    if args.png is not None and board.grid.size > MAX_PICTURE_CELLS:
        rows, cols = board.grid.shape
        raise ValueError(f"--png draws boards of at most {MAX_PICTURE_CELLS} cells; got {rows}x{cols}")
    result = analyze(board, max_states=args.max_states)
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    solvers, skipped = load_solvers(args.solvers)
    moves = [(s.name, suggest_move(s, board, args.seed, analysis=result, max_states=args.max_states))
             for s in solvers]
    print(format_analysis(board, result, color=color))
    print()
    print(f"next move of each solver (row, col from 0; solver seed {args.seed}):")
    if moves:
        print(format_suggestions(moves))
    for note in skipped:
        print(f"  {note}")
    if args.value:
        print()
        print(_value_line(board, args.value, args.seed))
    if args.png is not None:
        from nnsweeper.plots import agg_figure, plot_position, save_figure

        save_figure(plot_position(board, result, moves, fig=agg_figure()), args.png, dpi=120)
        print(f"\nwrote {args.png}")
    return 0


def _check_outputs(args, inputs, options=("json", "png")) -> None:
    """Refuse outputs that are folders or special files (:func:`nnsweeper.fileio.output_target`)
    or one of the command's ``inputs``, before any work."""
    from nnsweeper.fileio import check_not_input, output_target

    for option in options:
        out = getattr(args, option, None)
        if out is not None:
            output_target(out)
            check_not_input(out, inputs, f"--{option}")


def _check_figure_path(path: str) -> None:
    """Refuse a figure path whose suffix matplotlib cannot write, before any work."""
    from matplotlib.figure import Figure

    suffix = Path(path).suffix.lower().lstrip(".")
    formats = Figure().canvas.get_supported_filetypes()
    if suffix not in formats:
        raise ValueError(f"--png {path!r}: the suffix must name an image format "
                         f"({', '.join(sorted(formats))})")


def _value_line(board, games: int, seed: int) -> str:
    """The chance that search wins from ``board``: the value network's and a Monte Carlo estimate."""
    from nnsweeper.evaluation.rollouts import monte_carlo_value
    from nnsweeper.models.checkpoint import CheckpointError
    from nnsweeper.models.value import position_value

    mc = monte_carlo_value(board, "search", n=games, seed=seed)
    try:
        net = f"value network {position_value(board):.1%}"
    except CheckpointError as exc:
        net = f"value network unavailable ({exc})"
    return (f"chance that search wins from here: {net}; Monte Carlo {mc.rate:.1%} "
            f"(95% interval {mc.low:.1%}-{mc.high:.1%}, {mc.games} games, seed {seed})")


def _read_board_text(name: str) -> str:
    """The text of a board file (``-``: stdin), read no further than the longest board text."""
    from nnsweeper.boardtext import MAX_TEXT_CHARS

    where = "stdin" if name == "-" else f"board file {name!r}"
    if name == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)  # bytes where there are any
        data = stream.read(MAX_TEXT_CHARS + 1)
    else:
        try:
            with open(name, "rb") as f:
                data = f.read(MAX_TEXT_CHARS + 1)
        except OSError as e:
            raise ValueError(f"cannot read {where}: {e.strerror or e}") from None
    if len(data) > MAX_TEXT_CHARS:
        raise ValueError(f"{where} holds more than {MAX_TEXT_CHARS} bytes, more than any board's text "
                         f"(a {_largest_board()} board takes about 2 million); not read further")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{where} is not UTF-8 text") from None
    return data


def _largest_board() -> str:
    from nnsweeper.game import MAX_COLS, MAX_ROWS

    return f"{MAX_ROWS}x{MAX_COLS}"


# ------------------------------------------------------------------------ play
def add_play(sub):
    from nnsweeper.game import FIRST_CLICK_RULES

    pa = sub.add_parser(
        "play",
        help="play Minesweeper in the terminal, with the exact engine's hints and a solver's advice",
        description="Play a seeded game in the terminal (needs the play extra: pip install "
        "'nnsweeper[play]'). Arrows move, space or enter reveals, f flags, c chords, h shows every covered "
        "cell's exact P(mine), s asks a solver for its move and its reason, n starts a new game, q quits; "
        "left click reveals, right click flags.",
        epilog="example: nnsweeper play --preset beginner --seed 7 --save game.json; "
        "then nnsweeper play --replay game.json",
    )
    add_one_board(pa, "beginner", any_rule=True)
    pa.add_argument("--seed", type=int_in(0), default=None, help="the game seed (default: a new one)")
    pa.add_argument("--first-click", choices=FIRST_CLICK_RULES, default=None,
                    help="first-click rule (default: safe)")
    add_no_guess(pa)
    pa.add_argument("--solver", default="search", help="the solver the s key asks (default: search)")
    pa.add_argument("--save", default=None, metavar="FILE", help="save the game (JSON) when it ends")
    pa.add_argument("--replay", default=None, metavar="FILE", help="play back a game saved with --save")
    pa.set_defaults(handler=_cmd_play)
    return pa


def _cmd_play(args, argv) -> int:
    from nnsweeper.game import Rules
    from nnsweeper.players.play import MAX_PLAY_SIDE, load_game
    from nnsweeper.solvers import get_solver

    get_solver(args.solver)  # an unknown name is refused before the screen changes
    if args.replay is not None:
        if args.board or args.preset or args.seed is not None or args.first_click or args.no_guess:
            raise ValueError("--replay plays the saved game's own board, seed and rule: give no --board, "
                             "--preset, --seed, --first-click or --no-guess with it")
        log = load_game(args.replay)
        rules, seed = log.rules, log.seed
    else:
        log = None
        rows, cols, mines = args.preset or args.board or (9, 9, 10)
        # --board was read before the rule was known
        rules = Rules(rows, cols, mines, first_click_rule(args))
        seed = args.seed  # None: the game draws a new one (shown on the status line)
    if max(rules.rows, rules.cols) > MAX_PLAY_SIDE:
        raise ValueError(f"play takes boards of at most {MAX_PLAY_SIDE} rows and columns; "
                         f"got {rules.rows}x{rules.cols}")
    if args.save is not None:
        from nnsweeper.fileio import check_not_input, output_target

        output_target(args.save)  # a folder, a device or a FIFO is refused before the screen changes
        check_not_input(args.save, [args.replay] if args.replay else [], "--save")
    try:
        from nnsweeper.players.play import run_app

        app = run_app(rules, seed, solver=args.solver, save=args.save, replay=log)
    except ImportError:
        raise ValueError("nnsweeper play needs Textual: pip install 'nnsweeper[play]'") from None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ValueError("nnsweeper play needs a terminal (standard input and output are not one)")
    app.run()
    if app.error is not None:
        raise ValueError(app.error)
    if app.saved is not None:
        print(f"saved to {app.saved}")
    return 0


# ----------------------------------------------------------------------- grade
def add_grade(sub):
    gr = sub.add_parser(
        "grade",
        help="grade a finished game move by move: each click's exact risk and its cost in chance of winning",
        description="Replay a game and grade every move on the board the player saw (its numbers; flags are "
        "not trusted): the exact P(mine) of the click against the lowest on the board, whether a proved-safe "
        "cell existed (a needless guess), the chance of winning before and after the move (exact when at "
        "most 5,000 layouts fit, else search's look-ahead chance of surviving the move and the next "
        "decision) and the move's loss; then a summary: mistakes, the biggest loss, accuracy, luck and "
        "the replay's speed (time, 3BV, 3BV/s).",
        epilog="example: nnsweeper play --preset beginner --seed 7 --save game.json; then nnsweeper grade "
        "game.json --png game_grade.png. Replays (.avf, .rmv, .mvf, .evf) need the replays extra: pip "
        "install 'nnsweeper[replays]'",
    )
    gr.add_argument("game", metavar="GAME",
                    help="a game saved by nnsweeper play --save (.json) or a replay file (.avf, .rmv, .mvf, "
                    ".evf)")
    gr.add_argument("--json", default=None, metavar="FILE",
                    help="also write the graded moves and summary as JSON")
    gr.add_argument("--png", default=None, metavar="FILE",
                    help="also draw the chance along the game and the board at the worst move")
    gr.add_argument("--all", action="store_true", help="list every move, not only the guesses")
    gr.set_defaults(handler=_cmd_grade)
    return gr


def _cmd_grade(args, argv) -> int:
    import json

    from nnsweeper.fileio import write_text_atomic
    from nnsweeper.players.grading import format_grade, grade, plot_grade
    from nnsweeper.players.replays import FORMATS, read_replay

    # Every output is checked before the work: a folder, a device, a FIFO, the game itself, or a
    # figure name without an image format's suffix is refused while nothing is done yet.
    _check_outputs(args, inputs=[args.game])
    if args.png is not None:
        _check_figure_path(args.png)
    path = Path(args.game)
    graded = grade(read_replay(path) if path.suffix.lower() in FORMATS else path)
    print(format_grade(graded, every_move=args.all))
    if args.json is not None:
        write_text_atomic(args.json, json.dumps(graded.to_dict(), indent=1) + "\n")
    if args.png is not None:
        plot_grade(graded, args.png)
    return 0


# ----------------------------------------------------------------------- watch
def add_watch(sub):
    wa = sub.add_parser(
        "watch",
        help="play one seeded game with a solver and write it as a GIF (or MP4) of its moves",
        description="Play one game with a solver and write an animation: one frame per move (runs "
        "of proven-safe moves share one), the board before it coloured by the solver's P(mine) (its "
        "model's for a neural solver, the exact engine's otherwise), the next cell outlined and "
        "labelled with the move's kind and risk, and a last frame with the finished board. Without "
        "--seed the game is the first evaluation game (the seeds of nnsweeper eval) in which the "
        "solver guesses at least --min-guesses times.",
        epilog="example: nnsweeper watch csp --preset expert --seed 3 --out game.gif",
    )
    wa.add_argument("solver", metavar="SOLVER", help="a registered solver name (csp, search, gnn, ...)")
    add_one_board(wa, "10x10:20")
    wa.add_argument("--seed", type=int_in(0), default=None,
                    help="the game seed (default: the first evaluation game with enough guesses)")
    wa.add_argument("--min-guesses", type=int_in(0, 10_000), default=2, metavar="N",
                    help="guesses the chosen game must have, without --seed (default: 2)")
    wa.add_argument("--start", type=start_cell, default=None,
                    help="first click: center, corner or ROW,COL (default: the solver's)")
    wa.add_argument("--exact", action="store_true", help="colour by the exact engine's P(mine)")
    wa.add_argument("--fps", type=float, default=1.5, help="frames per second (default: 1.5)")
    wa.add_argument("--out", required=True, help="the animation to write: .gif, or .mp4 with ffmpeg")
    wa.add_argument("--quiet", action="store_true", help="no progress bar of the frames drawn")
    wa.set_defaults(handler=_cmd_watch)
    return wa


def _cmd_watch(args, argv) -> int:
    import numpy as np

    from nnsweeper import MinesweeperEnv, get_solver
    from nnsweeper.evaluation import game_seeds
    from nnsweeper.plots import animate_game
    from nnsweeper.solvers.replay import game_frames

    rows, cols, mines = args.preset or args.board or (10, 10, 20)
    if Path(args.out).suffix.lower() not in (".gif", ".mp4"):
        raise ValueError(f"--out must end in .gif or .mp4; got {args.out!r}")
    solver = get_solver(args.solver, **({} if args.start is None else {"start": args.start}))
    if args.seed is None:
        def guesses(seed: int) -> int:
            env = MinesweeperEnv(rows, cols, mines, seed=seed)
            return solver.play(env, np.random.default_rng(seed)).guesses

        seeds = [int(s) for s in game_seeds(0, WATCH_SCAN)]
        index = next((k for k, s in enumerate(seeds) if guesses(s) >= args.min_guesses), None)
        if index is None:
            raise ValueError(f"none of the first {WATCH_SCAN} evaluation games on {rows}x{cols} with "
                             f"{mines} mines has {args.min_guesses} guesses by {args.solver}; give --seed")
        seed = seeds[index]
        print(f"game {index} of the evaluation games (game_seeds(0, {WATCH_SCAN})): seed {seed}")
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
    path = animate_game(frames, args.out, fps=args.fps, title=title, progress=not args.quiet)
    record = solver.last_record
    result = "won" if record.won else "lost"
    print(f"wrote {path}: {len(frames)} frames; {result} after {len(record.moves)} moves "
          f"({record.guesses} guesses)")
    return 0


# ----------------------------------------------------------------------- serve
def add_serve(sub):
    se = sub.add_parser(
        "serve",
        help="the game, the exact engine and the networks in the browser",
        description="Serve a page to play on, with each covered cell's exact P(mine) beside the networks' "
        "and the solvers' next moves (needs the serve extra: pip install 'nnsweeper[serve]'). It binds to "
        "127.0.0.1 unless --host says otherwise, and opens the page in the browser unless --no-browser.",
        epilog="example: nnsweeper serve --port 8765; the endpoints: docs/serve.md",
    )
    se.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default: 127.0.0.1; any other exposes the page and its endpoints)")
    se.add_argument("--port", type=int_in(0, 65535), default=8000,
                    help="port (default: 8000; 0: any free one)")
    se.add_argument("--no-browser", action="store_true", help="do not open the page in the browser")
    se.set_defaults(handler=_cmd_serve)
    return se


def _cmd_serve(args, argv) -> int:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ValueError("nnsweeper serve needs Starlette and uvicorn: "
                         "pip install 'nnsweeper[serve]'") from None
    from nnsweeper.players.serve import serve

    try:
        serve(args.host, args.port, open_browser=not args.no_browser)
    except OSError as e:
        raise ValueError(f"cannot serve on {args.host}:{args.port}: {e.strerror or e}") from None
    except KeyboardInterrupt:
        pass
    return 0
