"""The gate before new weights ship: a candidate checkpoint against the bundled weights.

Runs :func:`nnsweeper.gate.run_gate` (the 10x10 sweep at every mine count and the classic
boards, pure and hybrid, paired on the selection seeds; the openings; calibration,
decisions and log-loss on ``csp``'s positions with and without flags) and prints the
grid; exits 0 when no cell is worse than the bundled weights' beyond its noise, 1 when
one is, and 2 on bad input::

    python train/gate.py gnn runs/gnn-scratch/best.pt --jobs 2 --out eval/results/gate/gnn-scratch
    python train/gate.py cnn runs/cnn-scratch/best.pt --bundled path/to/other.pt --trials 2000

``--out PREFIX`` writes ``PREFIX.json`` (every cell) and ``PREFIX.md`` (the grid, for the
model card), and keeps the games in ``PREFIX.games-TRIALS`` so that a killed gate resumes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nnsweeper.errors import NnsweeperError


def main(argv=None) -> int:
    from nnsweeper.gate import FAMILIES, SWEEP_MINES

    p = argparse.ArgumentParser(prog="train/gate.py", description=__doc__.split("\n\n")[0])
    p.add_argument("arch", choices=("cnn", "gnn"), help="the architecture of both models")
    p.add_argument("candidate", help="the candidate checkpoint (or a bundled name)")
    p.add_argument("--bundled", default=None,
                   help="what it must not be worse than (default: the bundled ARCH)")
    p.add_argument("--trials", type=int, default=1000,
                   help="games per solver on each 10x10 board (default: 1000)")
    p.add_argument("--classic-trials", type=int, default=300,
                   help="games per solver on each classic board (default: 300)")
    p.add_argument("--positions", type=int, default=60,
                   help="csp games per board whose positions are read (default: 60)")
    p.add_argument("--mines", default=f"{SWEEP_MINES[0]}-{SWEEP_MINES[-1]}",
                   help="mine counts of the 10x10 sweep, A-B or a comma list (default: 5-30)")
    p.add_argument("--families", default=",".join(FAMILIES),
                   help=f"some of {','.join(FAMILIES)} (default: all)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for the games (default: 1)")
    p.add_argument("--out", default=None, help="write PREFIX.json and PREFIX.md, keep the games beside them")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--judge", metavar="PREFIX", default=None,
                   help="play nothing: read PREFIX.json (a grid written by --out), judge it by today's "
                   "margins, and write PREFIX.json and PREFIX.md again")
    args = p.parse_args(argv)
    if args.judge is not None:
        from nnsweeper.gate import GateReport

        try:
            report = GateReport.from_json(Path(f"{args.judge}.json").read_text()).judged()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"train/gate.py: error: cannot read the grid {args.judge}.json: {exc}", file=sys.stderr)
            return 2
        return _written(report, args.judge)
    try:
        mines = _mines(args.mines)
        families = [f for f in args.families.split(",") if f]
        from nnsweeper.gate import run_gate

        report = run_gate(args.candidate, args.bundled or args.arch, args.arch, sweep_mines=mines,
                          trials=args.trials, classic_trials=args.classic_trials, positions=args.positions,
                          n_jobs=args.jobs, families=families, progress=not args.quiet,
                          store=None if args.out is None else f"{args.out}.games",
                          notify=None if args.quiet else lambda line: print(line, file=sys.stderr))
    except (NnsweeperError, ValueError, OSError) as exc:
        print(f"train/gate.py: error: {exc}", file=sys.stderr)
        return 2
    return _written(report, args.out)


def _written(report, out) -> int:
    """Print the grid, write it to OUT.json and OUT.md when given; 0 if it passed, 1 if not."""
    text = report.format()
    print(text)
    if out is not None:
        from nnsweeper.fileio import write_text_atomic

        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(f"{out}.json", report.to_json() + "\n")
        title = f"# Gate: {report.candidate} against {report.bundled}"
        write_text_atomic(f"{out}.md", f"{title}\n\n```\n{text}```\n")
    return 0 if report.passed else 1


def _mines(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise ValueError(f"--mines must be counts A-B or a comma list; got {text!r}") from None
        out += range(lo, hi + 1)
    if not out:
        raise ValueError(f"--mines names no mine count; got {text!r}")
    return out


if __name__ == "__main__":
    sys.exit(main())
