"""One recipe from scratch for the bundled networks: the data, the training, the gate.

The data (:data:`DATA`, one ``nnsweeper generate`` command) covers where the solvers use
the networks: the 10x10 board at every mine count from 5 to 30, the classic boards and
two other shapes; every logic policy with every flag mode; the networks' own pure play
(``gnn`` and ``cnn`` policies: the positions where they go wrong); every decision of most
games and only the guesses of others (dense boards, where games are lost). A network is
trained once on it with the probability loss and the decision term from the first step
(``train/gnn_recipe.toml``, ``train/cnn_recipe.toml``), and ships only through the gate (``train/gate.py``)::

    python train/recipe.py data              # data/recipe (continues an unfinished one)
    python train/recipe.py train gnn         # runs/recipe/gnn (continues an unfinished run)
    python train/recipe.py gate gnn --jobs 2 # eval/results/gate/recipe-gnn.{json,md}; exit 1 if it fails
    python train/recipe.py train cnn         # the same for the CNN (runs/recipe/cnn)

Every step continues where it stopped.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_LOGIC = ("csp", "search", "explore", "reveal")
# 10x10 at the counts the broad mixture (every fifth) leaves out.
_BETWEEN = "6-9,11-14,16-19,21-24,26-29"
_PARTS = (
    # The counts between, with and without flags.
    *(f"10x10:{_BETWEEN}:12:{p}:{f}" for p in _LOGIC for f in ("all", "none")),
    # The networks' own pure play: where they go wrong.
    *(f"10x10:5-30:16:{net}" for net in ("gnn", "cnn")),
    *(f"{board}:{n}:{net}" for net in ("gnn", "cnn") for board, n in (("beginner", 40), ("intermediate", 25),
                                                                     ("expert", 12))),
    # Only the guesses of games on dense boards, where games are lost.
    "expert:600:search:all:guess", "expert:600:csp:none:guess", "16x16:40:300:search:some:guess",
    "10x10:20-30/5:200:csp:none:guess", "12x12:40:200:reveal:all:guess",
)
#: The recipe's dataset: seed 21, no other dataset's. ``--mix broad`` adds every logic policy with
#: every flag mode on the broad boards (the 10x10 sweep's densities in steps of five, the presets,
#: 12x12 and 16x20), 30 games each.
DATA = ("nnsweeper generate data/recipe " + " ".join(_PARTS)
        + " --mix broad --games 30 --splits 0.9,0.1,0 --seed 21 --jobs 2")
CONFIGS = {"gnn": "train/gnn_recipe.toml", "cnn": "train/cnn_recipe.toml"}


def make_data() -> int:
    from nnsweeper.cli import main as nnsweeper

    if (ROOT / "data" / "recipe" / "manifest.json").exists():
        print("data/recipe: made")
        return 0
    print(f"== {DATA}", flush=True)
    return nnsweeper(shlex.split(DATA)[1:])


def train(arch: str) -> int:
    from nnsweeper.cli import main as nnsweeper
    from nnsweeper.training_config import load_config

    config = load_config(ROOT / CONFIGS[arch])
    argv = ["train", "--config", str(ROOT / CONFIGS[arch])]
    if (ROOT / config.output.dir / "resume.pt").exists():
        argv.append("--resume")
    print(f"== nnsweeper {shlex.join(argv)}", flush=True)
    return nnsweeper(argv)


def gate(arch: str, extra: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "train"))
    from gate import main as run_gate  # train/gate.py

    from nnsweeper.training_config import load_config

    best = ROOT / load_config(ROOT / CONFIGS[arch]).output.dir / "best.pt"
    return run_gate([arch, str(best), "--out", str(ROOT / "eval" / "results" / "gate" / f"recipe-{arch}"),
                     *extra])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("step", choices=("data", "train", "gate"))
    p.add_argument("arch", nargs="?", choices=tuple(CONFIGS), default="gnn")
    args, extra = p.parse_known_args(argv)
    if args.step == "data":
        return make_data()
    if args.step == "train":
        return train(args.arch)
    return gate(args.arch, extra)


if __name__ == "__main__":
    sys.exit(main())
