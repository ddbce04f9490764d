"""Every committed figure and every timing the README quotes, made again: ``make figures``.

1. Redraws the figure of each table in ``eval/results/`` (the PNG beside its JSON,
   through ``nnsweeper plot``) and the gap tables of the comparisons
   (``compare_*.md``, through ``eval/gap_table.py``).
2. Draws the gallery of every figure kind into ``docs/gallery/`` (``eval/gallery.py``),
   and writes the record runs' leaderboards, ``docs/results.md``, with the README's
   headline block from the same tables (``eval/results_page.py``).
3. Unless ``--no-timings``: runs ``make test``, ``make compare``, each command of the README's
   quick-start block, both notebooks (``jupyter execute``) and
   ``benchmarks/bench_solvers.py`` at full size in a temporary folder (a copy of the
   files they read, so nothing committed is overwritten), timing each; writes
   ``eval/timings.json`` with the machine they ran on, and the README's
   timings block from it.

::

    python eval/figures.py                 # all three (several minutes on 2 cores)
    python eval/figures.py --no-timings    # figures only (about a minute)

The README parsing used here (:func:`bash_blocks`, :func:`readme_commands`) is the
one ``tests/test_readme.py`` uses, so the commands timed are the commands tested.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "eval" / "results"
TIMINGS = ROOT / "eval" / "timings.json"
BEGIN = "<!-- timings: begin (written by make figures) -->"
END = "<!-- timings: end -->"
#: The README heading whose first bash block is the quick start's commands.
QUICK_HEADING = "## Quick start"
#: What the commands read, copied into the temporary folder they run in.
INPUTS = ("eval/results", "examples", "notebooks", "train")


# ------------------------------------------------------------------ README parsing
def bash_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Every ```bash block of a Markdown text: (the heading it sits under, its commands).

    A command is one logical line: continuation lines (ending in ``\\``) are joined,
    and comments (``# ...``) and blank lines dropped.
    """
    blocks, heading = [], ""
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("#"):
            heading = line.strip()
        elif line.startswith("```"):  # a fenced block: skipped to its end, kept when bash
            body = []
            k += 1
            while not lines[k].startswith("```"):
                body.append(lines[k])
                k += 1
            if line.strip() == "```bash":
                blocks.append((heading, _logical_lines(body)))
        k += 1
    return blocks


def _logical_lines(body: list[str]) -> list[str]:
    out, current = [], ""
    for raw in body:
        current += raw.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        words = shlex.split(current, comments=True)
        if words:
            out.append(shlex.join(words))
        current = ""
    return out


def readme_commands(heading: str = QUICK_HEADING, path: Path = README) -> list[str]:
    """The commands of the first bash block under ``heading`` in the README."""
    for where, commands in bash_blocks(path.read_text(encoding="utf-8")):
        if where == heading:
            return commands
    raise ValueError(f"{path.name} has no bash block under {heading!r}")


# ------------------------------------------------------------------ figures
def redraw_results() -> list[Path]:
    """The figure of each committed table, and the gap tables of the comparisons."""
    from nnsweeper.cli import main as nnsweeper

    sys.path.insert(0, str(ROOT / "eval"))
    import gap_table

    written = []
    for table in sorted(RESULTS.glob("*.json")):
        png = table.with_suffix(".png")
        if png.exists():
            if nnsweeper(["plot", str(table), "--out", str(png)]) != 0:
                raise SystemExit(f"could not redraw {png}")
            written.append(png)
        if table.name.startswith("compare_"):
            if gap_table.main([str(table)]) != 0:
                raise SystemExit(f"could not write the gap table of {table}")
            written.append(table.with_suffix(".md"))
    return written


def draw_gallery() -> None:
    subprocess.run([sys.executable, str(ROOT / "eval" / "gallery.py")], check=True, cwd=ROOT)


# ------------------------------------------------------------------ timings
def machine() -> dict:
    """The machine the timings were taken on: CPU model, cores, memory, software."""
    import numpy
    import torch

    from nnsweeper.parallel import machine as processor

    cpu = processor()
    memory = None
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(),
        "memory_gib": None if memory is None else round(memory, 1),
        "system": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(), "numpy": numpy.__version__,
        "torch": torch.__version__, "gpu": torch.cuda.is_available(),
    }


def _workspace(tmp: Path) -> None:
    for name in INPUTS:
        shutil.copytree(ROOT / name, tmp / name)


def _run(command: str, cwd: Path, env: dict) -> float:
    print(f"$ {command}", flush=True)
    t0 = time.perf_counter()
    subprocess.run(command, shell=True, check=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def measure() -> dict:
    """Run and time the README's commands at full size in a temporary folder."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    entries = []
    # What else the machine was doing: timings on a busy machine are longer, and say so.
    load = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory(prefix="nnsweeper-figures-") as name:
        tmp = Path(name)
        _workspace(tmp)
        # make compare itself, writing into the temporary folder.
        out = shlex.quote(str(tmp / "compare"))
        seconds = _run(f"make -C {shlex.quote(str(ROOT))} compare COMPARE_OUT={out}", tmp, env)
        entries.append({"command": "make compare", "seconds": seconds})
        for command in readme_commands():
            entries.append({"command": command, "seconds": _run(command, tmp, env)})
        for nb in ("solver_comparison", "model_inspection"):
            command = f"jupyter execute --inplace notebooks/{nb}.ipynb"
            entries.append({"command": command, "seconds": _run(command, tmp, env)})
        bench = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_solvers.py")], check=True,
                               capture_output=True, text=True, cwd=tmp, env=env).stdout
    # The README's second set-up command, in the checkout itself (it writes only caches).
    seconds = _run(f"make -C {shlex.quote(str(ROOT))} test", ROOT, env)
    entries.insert(0, {"command": "make test", "seconds": seconds})
    return {
        "measured": _dt.date.today().isoformat(),
        "machine": {**machine(), "load_at_start": load},
        "commands": entries,
        "bench_solvers": bench.rstrip(),
    }


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s"


def timings_markdown(doc: dict) -> str:
    """The README's timings block, from ``eval/timings.json``."""
    m = doc["machine"]
    memory = f", {m['memory_gib']:g} GiB" if m.get("memory_gib") else ""
    gpu = "a GPU" if m["gpu"] else "no GPU"
    load = m.get("load_at_start")
    busy = "" if load is None else f"; load average {load:g} when they started"
    lines = [
        f"Measured {doc['measured']} on {m['cpu']} ({m['cores']} cores{memory}, {m['system']}, {gpu}), "
        f"Python {m['python']}, numpy {m['numpy']}, torch {m['torch']}{busy}:",
        "",
        "| command | wall time |",
        "| --- | ---: |",
    ]
    lines += [f"| `{e['command']}` | {_duration(e['seconds'])} |" for e in doc["commands"]]
    lines += ["", "`python benchmarks/bench_solvers.py`:", "", "```text", doc["bench_solvers"], "```"]
    return "\n".join(lines)


def write_readme_block(doc: dict, path: Path = README) -> None:
    from nnsweeper.fileio import write_text_atomic

    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path.name} has no timings block ({BEGIN} ... {END})")
    block = f"{BEGIN}\n{timings_markdown(doc)}\n{END}"
    write_text_atomic(path, pattern.sub(lambda _: block, text))


def readme_block(path: Path = README) -> str:
    """The text between the README's timings markers."""
    text = path.read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-timings", action="store_true",
                        help="redraw the figures and the gallery only; keep the timings as they are")
    args = parser.parse_args(argv)
    from nnsweeper.fileio import write_text_atomic

    for path in redraw_results():
        print(f"redrew {path.relative_to(ROOT)}")
    draw_gallery()
    sys.path.insert(0, str(ROOT / "eval"))
    import results_page

    for path in results_page.write():
        print(f"wrote {path.relative_to(ROOT)}")
    if not args.no_timings:
        doc = measure()
        write_text_atomic(TIMINGS, json.dumps(doc, indent=2) + "\n")
        write_readme_block(doc)
        print(f"wrote {TIMINGS.relative_to(ROOT)} and the README's timings block")
    return 0


if __name__ == "__main__":
    sys.exit(main())
