"""Scaling curves: how far the CNN and the GNN get as a function of training compute.

Each run of :data:`RUNS` is one architecture at one size, trained on ``data/broad``
(the bundled models' dataset) by the one training loop with ``train.keep_every = 1``,
so that every epoch's weights stay in ``runs/scaling/NAME/checkpoints/``. Every kept
checkpoint is then scored on data it never saw:

- the frontier log-loss ratio to the exact engine, pooled and for its worst kind
  (board, behaviour policy, flag mode, policy with flag mode), with the shares of
  proven-safe cells given P < 0.02 and of proven mines given P > 0.98, on
  ``data/broad_test`` (the trained boards, other seeds) and ``data/unseen_test`` (8x8
  with 20 mines and 24x30 with 200, boards kept out of training);
- its pure solver against ``csp`` on the same expert games (first click in the corner,
  base seed :data:`GAMES_SEED`), with the paired gap and its 95% interval.

Each checkpoint's figures go to ``eval/results/scaling/NAME/epoch-NNNN.json`` (small,
committed), with the compute that made it: training states seen, optimiser steps, the
seconds of training and the hardware. ``table`` gathers them into
``eval/results/scaling.{csv,md,png}``. Every step continues where it stopped::

    python train/scaling.py data              # the four datasets (once; about 12 min on 2 cores)
    python train/scaling.py train gnn-s       # train (continues an unfinished run; all runs without NAME)
    python train/scaling.py score             # score every kept checkpoint not scored yet
    python train/scaling.py table             # the table and the figure
    python train/scaling.py status            # where each run stands

``--device cuda`` trains on a GPU (bf16 autocast; ``--workers N`` loader processes);
``--epochs N`` sets a run's epochs (the schedule spans them: a run extended later
continues with the schedule of its new length, see ``nnsweeper train --help``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS_DIR = ROOT / "runs" / "scaling"
SCORES = ROOT / "eval" / "results" / "scaling"
TABLE = ROOT / "eval" / "results" / "scaling"
#: The datasets: training, and the two held-out test sets, with the commands that make them.
DATA = {
    "data/broad": "nnsweeper generate data/broad --mix broad --games 50 --seed 0 --jobs 2",
    "data/broad_test": "nnsweeper generate data/broad_test --mix broad --games 12 --splits 0,0,1 --seed 1 "
    "--jobs 2",
    # States the networks have not seen: the broad mix again on other seeds (training runs that
    # go on from weights trained on data/broad, against more epochs of it).
    "data/broad_more": "nnsweeper generate data/broad_more --mix broad --games 50 --seed 3 --jobs 2",
    "data/unseen_test": "nnsweeper generate data/unseen_test --mix unseen --games 100 --splits 0,0,1 "
    "--seed 2 --jobs 2",
}
#: The held-out test sets by the name the scores use: the trained boards on other seeds, and
#: boards kept out of training.
TESTS = {"broad_test": "data/broad_test", "unseen_test": "data/unseen_test"}
#: Base seed of the paired expert games each checkpoint's pure solver plays with csp.
GAMES_SEED = 33
#: The target of issue "both models at the limit": frontier log-loss ratio on every kind.
TARGETS = {"cnn": 1.08, "gnn": 1.02}


@dataclass(frozen=True)
class Run:
    """One architecture at one size: its model keys and training overrides over the base config."""

    name: str
    base: str  # the bundled model's training config it starts from
    model: dict
    epochs: int
    train: dict = field(default_factory=dict)
    #: Fine-tuning: the run and epoch whose kept weights this run starts from (``train.init``);
    #: its compute counts from theirs.
    parent: tuple[str, int] | None = None
    #: The training dataset, where it is not the base config's (a folder of :data:`DATA`).
    data: str | None = None

    @property
    def arch(self) -> str:
        return self.name.split("-")[0]

    @property
    def run_dir(self) -> Path:
        return RUNS_DIR / self.name

    @property
    def init(self) -> Path | None:
        """The kept checkpoint of :attr:`parent` this run starts from."""
        if self.parent is None:
            return None
        name, epoch = self.parent
        return RUNS_DIR / name / "checkpoints" / f"epoch-{epoch:04d}.pt"

    def overrides(self, epochs: int | None, device: str, workers: int) -> list[str]:
        out = [f"model.{k}={json.dumps(v)}" for k, v in self.model.items()]
        out += [f"train.{k}={json.dumps(v)}" for k, v in self.train.items()]
        if self.init is not None:
            out.append(f"train.init={json.dumps(os.fspath(self.init))}")
        if self.data is not None:
            out.append(f"data.path={json.dumps(self.data)}")
        out += [
            f"train.epochs={epochs or self.epochs}",
            "train.keep_every=1",
            f"train.device={device}",
            f"train.num_workers={workers}",
            f"output.dir={json.dumps(os.fspath(self.run_dir))}",
        ]
        return out


#: cnn-l's model: twice the bundled CNN's channels, more blocks, a wider reach.
CNN_L = {"channels": 64, "blocks": 10, "dilations": [1, 2, 4, 8, 16]}
#: Three sizes of each architecture; the middle ones are the bundled models' configs.
RUNS = (
    Run("cnn-s", "train/cnn_broad.toml", {"channels": 16, "blocks": 4}, 8),
    Run("cnn-m", "train/cnn_broad.toml", {}, 8),
    Run("cnn-l", "train/cnn_broad.toml", CNN_L, 8),
    Run("gnn-s", "train/gnn_broad.toml", {"hidden": 32, "layers": 8}, 8),
    Run("gnn-m", "train/gnn_broad.toml", {}, 8),
    # gnn-l was started with --epochs 6 (its schedule spans 6): resuming it with another count
    # would stretch the schedule under the epochs it has done.
    Run("gnn-l", "train/gnn_broad.toml", {"hidden": 128, "layers": 16}, 6),
    # gnn-m's 8 epochs trained further at a tenth of the learning rate (no warm restart to the
    # peak): with cells the engine proves safe or mined weighed 20 times instead of 5 (ft), and
    # with the same loss (lr).
    Run("gnn-m-ft", "train/gnn_broad.toml", {}, 2,
        {"lr": 2e-4, "certain_weight": 20.0}, parent=("gnn-m", 8)),
    Run("gnn-m-lr", "train/gnn_broad.toml", {}, 2, {"lr": 2e-4}, parent=("gnn-m", 8)),
    # Where a GPU is lent: gnn-m-lr's 10 epochs trained on in batches of 256 (a GNN step is bound
    # by the host, so a GPU trains four times the states per step at about the same step time),
    # with the proven cells weighed 5 (b256) or 10 times (b256c10); and cnn-l's epoch trained on
    # in batches of 128 with a warm restart. Their epochs are fitted to the time (--minutes).
    Run("gnn-m-b256", "train/gnn_broad.toml", {}, 2, {"batch_size": 256, "lr": 4e-4},
        parent=("gnn-m-lr", 2)),
    Run("gnn-m-b256c10", "train/gnn_broad.toml", {}, 2,
        {"batch_size": 256, "lr": 4e-4, "certain_weight": 10.0}, parent=("gnn-m-lr", 2)),
    Run("cnn-l-ft", "train/cnn_broad.toml", CNN_L, 3,
        {"batch_size": 128, "lr": 1.5e-3}, parent=("cnn-l", 1)),
    # Each of them trained on again, with another warm restart (a GPU lent for minutes at a time).
    Run("gnn-m-b256-2", "train/gnn_broad.toml", {}, 2, {"batch_size": 256, "lr": 2e-4},
        parent=("gnn-m-b256", 2)),
    Run("gnn-m-b256c10-2", "train/gnn_broad.toml", {}, 2,
        {"batch_size": 256, "lr": 2e-4, "certain_weight": 10.0}, parent=("gnn-m-b256c10", 2)),
    Run("cnn-l-ft-2", "train/cnn_broad.toml", CNN_L, 3,
        {"batch_size": 128, "lr": 1e-3}, parent=("cnn-l-ft", 3)),
    # gnn-m-b256-2's last weights, one epoch more on states it has not seen (data/broad_more, other
    # seeds of the same mix), against one more of data/broad (gnn-m-same), on the CPU.
    Run("gnn-m-more", "train/gnn_broad.toml", {}, 1, {"lr": 2e-4}, parent=("gnn-m-b256-2", 2),
        data="data/broad_more"),
    Run("gnn-m-same", "train/gnn_broad.toml", {}, 1, {"lr": 2e-4}, parent=("gnn-m-b256-2", 2)),
    Run("cnn-l-ft-3", "train/cnn_broad.toml", CNN_L, 2,
        {"batch_size": 128, "lr": 5e-4}, parent=("cnn-l-ft-2", 3)),
    # gnn-m-more's weights, two epochs more of data/broad_more on the CPU: does the play gap go on
    # closing with compute as it did from 10 to 15 epochs?
    Run("gnn-m-more-2", "train/gnn_broad.toml", {}, 2, {"lr": 2e-4}, parent=("gnn-m-more", 1),
        data="data/broad_more"),
    # The same two epochs with a penalty on the proven cells predicted on the wrong side of 0.01 /
    # 0.99 (train.certain_margin): a loss aimed at the proven-safe share without weighing every
    # proven cell more (b256c10 bought 99.38% safe with a worst kind of 1.030).
    Run("gnn-m-margin", "train/gnn_broad.toml", {}, 2, {"lr": 2e-4, "certain_margin": 1.0},
        parent=("gnn-m-more", 1), data="data/broad_more"),
    # cnn-m (the bundled CNN's size) had one H100 epoch: two more on the CPU, a warm restart at
    # its config's learning rate, for the middle CNN's curve.
    Run("cnn-m-ft", "train/cnn_broad.toml", {}, 2, parent=("cnn-m", 1)),
    Run("cnn-m-ft-2", "train/cnn_broad.toml", {}, 4, {"lr": 1e-3}, parent=("cnn-m-ft", 2)),
)


def _chosen(names: list[str]) -> list[Run]:
    known = {r.name: r for r in RUNS}
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit(f"unknown run(s) {', '.join(bad)}; the runs: {', '.join(known)}")
    return [known[n] for n in names] if names else list(RUNS)


# ------------------------------------------------------------------ data and training
def make_data() -> None:
    from nnsweeper.cli import main as nnsweeper

    for folder, command in DATA.items():
        if (ROOT / folder / "manifest.json").exists():
            print(f"{folder}: made already")
            continue
        print(f"$ {command}", flush=True)
        if nnsweeper(shlex.split(command)[1:]):
            raise SystemExit(f"{command} failed")


#: Training states of the speed probe that fits a new run's epochs to ``--minutes`` (300
#: batches of 64; fewer, larger batches where a run's batches are larger).
PROBE_STATES = 19_200


def fit_epochs(run: Run, minutes: float, *, device: str, workers: int, threads: int) -> tuple[int, str]:
    """The epochs of ``run`` that fit in ``minutes``, from a probe of its speed here.

    The probe trains the run's model on :data:`PROBE_STATES` states with one
    validation, in a throwaway folder, on the same device with the same loader
    processes; an epoch takes the training split's states at the probe's speed, plus
    its validation. Nine tenths of the time left are planned, at least one epoch.
    Returns the epochs and a line that says how they were found.
    """
    import tempfile
    import time

    from nnsweeper.datasets import load_manifest
    from nnsweeper.training import load_config, train

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"probe-{run.name}-") as tmp:
        overrides = run.overrides(1, device, workers) + [
            f"train.threads={threads}", "train.keep_every=0",
            "train.tensorboard=false", f"output.dir={json.dumps(tmp)}",
        ]
        config = load_config(ROOT / run.base, overrides)
        batches = max(1, PROBE_STATES // config.train.batch_size)
        config = load_config(ROOT / run.base, overrides + [f"train.max_batches={batches}"])
        line = train(config, notify=lambda *_: None, progress=False).history[-1]
    states = int(load_manifest(ROOT / config.data.path)["splits"][config.data.train_split]["states"])
    left = minutes * 60 - (time.perf_counter() - started)
    epochs, epoch = plan_epochs(line, states, left)
    return epochs, (
        f"{run.name}: {line['examples_per_second']:,.0f} states/s on {line['hardware']}, an epoch of "
        f"{states:,} states about {epoch:.0f} s: {epochs} epoch(s) in the {left / 60:.1f} min left"
    )


def plan_epochs(probe: dict, states: int, seconds: float) -> tuple[int, float]:
    """The epochs that fit in ``seconds`` (nine tenths of them, at least one) and an epoch's
    estimated seconds: ``states`` at the probe's training speed plus the probe's validation
    (its ``seconds`` less its training time), from the probe's line of ``history.json``."""
    speed = probe["examples_per_second"]
    epoch = states / speed + max(0.0, probe["seconds"] - probe["examples"] / speed)
    return max(1, int(0.9 * seconds // epoch)), epoch


def train_runs(runs: list[Run], *, epochs: int | None, device: str, workers: int, threads: int,
               minutes: float | None = None) -> None:
    import torch

    from nnsweeper.training import load_config, run_states, train

    torch.set_num_threads(threads)
    for run in runs:
        state = next(iter(run_states(run.run_dir)), None) if run.run_dir.is_dir() else None
        if state is not None and not state.saved and (state.finished or state.stuck):
            # Trained elsewhere, its files copied here without resume.pt: nothing to go on from.
            print(f"== {run.name}: {state}", flush=True)
            continue
        resume = state is not None and state.saved
        planned = epochs
        if minutes and epochs is None:
            planned, note = fit_epochs(run, minutes, device=device, workers=workers, threads=threads)
            if resume:  # a started run goes on for the epochs that fit, after those it has done
                done = state.epoch
                planned += done
                note += f", after the {done} it has done"
            print(note, flush=True)
        overrides = run.overrides(planned, device, workers) + [f"train.threads={threads}"]
        config = load_config(ROOT / run.base, overrides)
        print(
            f"== {run.name}: nnsweeper train --config {run.base} "
            f"{shlex.join(overrides)}" + (" --resume" if resume else ""),
            flush=True,
        )
        result = train(config, resume=resume, notify=print)
        if result.already_finished:
            print(result.already_finished)


# ------------------------------------------------------------------ scoring
def _frontier(result: dict) -> dict:
    """Pooled frontier figures and the worst kind's ratio of an evaluate_model result."""
    f = result["frontier"]
    worst, where = -math.inf, None
    for kind, labels in result.get("kinds", {}).items():
        for label, figures in labels.items():
            ratio = figures["frontier"]["log_loss_ratio"]
            if ratio is not None and math.isfinite(ratio) and ratio > worst:
                worst, where = ratio, f"{kind} {label}"
    return {
        "log_loss_ratio": f["log_loss_ratio"],
        "worst_kind_ratio": worst,
        "worst_kind": where,
        "safe_below": f["safe_below_threshold"],
        "mine_above": f["mine_above_threshold"],
        "cells": f["cells"],
        # The decisions on the set's positions with no proven-safe cell (nnsweeper.decisions); scores
        # made before these figures existed have none.
        "decision": {k: result["decision"][k] for k in DECISION_FIGURES} if "decision" in result else None,
        "kinds": {
            kind: {label: figures["frontier"]["log_loss_ratio"] for label, figures in labels.items()}
            for kind, labels in result.get("kinds", {}).items()
        },
    }


def _play(solvers: list[str], games: int, out: Path) -> None:
    """``nnsweeper eval`` of ``solvers`` (its options) on the scaling games, the table to ``out``."""
    from nnsweeper.cli import main as nnsweeper

    common = ["--preset", "expert", "--start", "corner", "--trials", str(games),
              "--base-seed", str(GAMES_SEED)]
    # Relative to the working directory: the table records its command, to be run again from there.
    if nnsweeper(["eval", *solvers, *common, "--jobs", "1", "--quiet", "--out", os.path.relpath(out)]):
        raise SystemExit(f"nnsweeper eval {' '.join(solvers)} failed")


def _csp_table(games: int, out: Path):
    """csp's table on the scaling games (played once, kept beside the scores)."""
    from nnsweeper.evaluation import EvalTable

    path = out / f"csp-{games}.json"
    if not path.exists():
        _play(["--solvers", "csp"], games, path.with_suffix(""))
    return EvalTable.from_json(path)


def score_checkpoint(run: Run, checkpoint: Path, games: int, batch: int) -> dict:
    """The figures of one kept checkpoint (see the module's docstring)."""
    import tempfile

    from nnsweeper.evaluation import EvalTable
    from nnsweeper.metrics import to_json
    from nnsweeper.models import load_checkpoint
    from nnsweeper.training import evaluate_model

    model = load_checkpoint(checkpoint)
    extra = model.checkpoint_meta["extra"]
    epoch = int(extra["epoch"])
    history = json.loads((run.run_dir / "history.json").read_text(encoding="utf-8"))
    line = next(h for h in history if h["epoch"] == epoch)
    row = {
        "run": run.name,
        "arch": run.arch,
        "parameters": model.n_parameters,
        "epoch": epoch,
        "steps": line["step"],
        "examples": line.get("examples"),
        "train_seconds": sum(h["seconds"] for h in history if h["epoch"] <= epoch),
        "hardware": line.get("hardware"),
        "model": model.config,
    }
    if run.parent is not None:  # a fine-tuning run's compute counts from its parent's
        before = parent_score(run)
        row["parent"] = {"run": run.parent[0], "epoch": run.parent[1]}
        for key in ("steps", "examples", "train_seconds"):
            row[key] += before[key]
    for name, folder in TESTS.items():
        result, _ = evaluate_model(model, ROOT / folder, "test", batch_size=batch)
        row[name] = _frontier(json.loads(to_json(result)))
    csp = _csp_table(games, SCORES)
    name = f"{run.name}-e{epoch}"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "play"
        _play(["--solvers", name, "--model", f"{name}={run.arch}:{checkpoint}"], games, out)
        played = EvalTable.from_json(out.with_suffix(".json"))
    gap = played.merge(csp).difference(name, "csp")[0]
    row["play"] = {
        "board": "expert",
        "start": "corner",
        "games": games,
        "base_seed": GAMES_SEED,
        "win_rate": gap["win_rate"],
        "csp_win_rate": gap["reference_win_rate"],
        "gap": gap["difference"],
        "gap_low": gap["ci_low"],
        "gap_high": gap["ci_high"],
        "paired": gap["paired"],
    }
    return row


def parent_score(run: Run) -> dict:
    """The committed scores of the checkpoint ``run`` starts from (its compute, its figures)."""
    name, epoch = run.parent
    path = SCORES / name / f"epoch-{epoch:04d}.json"
    if not path.is_file():
        raise SystemExit(f"{run.name} starts from {name} epoch {epoch}, which has no scores yet: "
                         f"python train/scaling.py score {name}")
    return json.loads(path.read_text(encoding="utf-8"))


def coarse_first(items: list) -> list:
    """``items`` reordered so that any prefix spans them evenly: the last, then the middle, then
    the quarters...; scoring stopped part-way still gives the whole curve, coarser."""
    out, seen, step = [], set(), len(items)
    while step >= 1:
        for k in range(len(items) - 1, -1, -step):
            if k not in seen:
                seen.add(k)
                out.append(items[k])
        step //= 2
    return out + [x for k, x in enumerate(items) if k not in seen]


def score_runs(runs: list[Run], *, games: int, batch: int, threads: int) -> None:
    import torch

    from nnsweeper.fileio import write_text_atomic

    torch.set_num_threads(threads)
    for run in runs:
        for checkpoint in coarse_first(sorted((run.run_dir / "checkpoints").glob("epoch-*.pt"))):
            target = SCORES / run.name / f"{checkpoint.stem}.json"
            if target.exists():
                continue
            print(f"== scoring {run.name} {checkpoint.stem}", flush=True)
            row = score_checkpoint(run, checkpoint, games, batch)
            write_text_atomic(target, json.dumps(row, indent=1) + "\n")
            print(_line(row), flush=True)


# ------------------------------------------------------------------ the table and the figure
def _rows() -> list[dict]:
    rows = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SCORES.glob("*/epoch-*.json"))]
    order = {r.name: k for k, r in enumerate(RUNS)}
    return sorted(rows, key=lambda r: (order.get(r["run"], len(order)), r["epoch"]))


def _line(r: dict) -> str:
    b, u, p = r["broad_test"], r["unseen_test"], r["play"]
    return (
        f"{r['run']} epoch {r['epoch']}: {r['examples']:,} states seen, {r['train_seconds'] / 60:.1f} min; "
        f"frontier ratio {b['log_loss_ratio']:.3f} / {u['log_loss_ratio']:.3f} (worst kind "
        f"{max(b['worst_kind_ratio'], u['worst_kind_ratio']):.3f}); "
        f"safe {min(b['safe_below'], u['safe_below']):.2%}, "
        f"mines {min(b['mine_above'], u['mine_above']):.2%}; "
        f"expert {p['win_rate']:.2%} vs csp {p['csp_win_rate']:.2%}: {100 * p['gap']:+.2f} "
        f"({100 * p['gap_low']:+.2f} to {100 * p['gap_high']:+.2f})"
    )


COLUMNS = (
    "run",
    "parameters",
    "epoch",
    "steps",
    "examples",
    "train_seconds",
    "hardware",
    "broad_test_ratio",
    "unseen_ratio",
    "worst_kind_ratio",
    "worst_kind",
    "safe_below",
    "mine_above",
    "lowest_risk",
    "regret_mean",
    "overconfident",
    "games",
    "win_rate",
    "csp_win_rate",
    "gap",
    "gap_low",
    "gap_high",
    "parent",
)


def _flat(r: dict) -> dict:
    b, u, p = r["broad_test"], r["unseen_test"], r["play"]
    worst = max((b, u), key=lambda x: x["worst_kind_ratio"])
    return {
        "run": r["run"],
        "parameters": r["parameters"],
        "epoch": r["epoch"],
        "steps": r["steps"],
        "examples": r["examples"],
        "train_seconds": round(r["train_seconds"], 1),
        "hardware": r["hardware"],
        "broad_test_ratio": b["log_loss_ratio"],
        "unseen_ratio": u["log_loss_ratio"],
        "worst_kind_ratio": worst["worst_kind_ratio"],
        "worst_kind": f"{'unseen' if worst is u else 'broad_test'}: {worst['worst_kind']}",
        "safe_below": min(b["safe_below"], u["safe_below"]),
        "mine_above": min(b["mine_above"], u["mine_above"]),
        **{k: (b.get("decision") or {}).get(k, "") for k in ("lowest_risk", "regret_mean", "overconfident")},
        "games": p["games"],
        "win_rate": p["win_rate"],
        "csp_win_rate": p["csp_win_rate"],
        "gap": p["gap"],
        "gap_low": p["gap_low"],
        "gap_high": p["gap_high"],
        "parent": f"{r['parent']['run']} epoch {r['parent']['epoch']}" if r.get("parent") else "",
    }


#: The decision figures a score keeps (nnsweeper.decisions), and the table shows for data/broad_test.
DECISION_FIGURES = ("positions", "lowest_risk", "regret_mean", "regret_p90", "overconfident", "safest5_mae",
                    "safest5_bias")

#: The shares of proven-safe cells (P < 0.02) and proven mines (P > 0.98) the targets ask for.
SHARE_TARGET = 0.995


def project(examples, excess, target: float) -> tuple[float, float | None]:
    """A power law ``excess = a * examples**slope`` fitted (least squares in log-log) to a run's
    checkpoints, and the training states at which it reaches ``target`` (None when the fitted
    curve does not fall). ``excess`` is what the target bounds: the ratio less 1, or the share
    of proven cells missed."""
    import numpy as np

    x, y = np.log(np.asarray(examples, float)), np.log(np.asarray(excess, float))
    slope, intercept = np.polyfit(x, y, 1)
    if slope >= 0:
        return float(slope), None
    return float(slope), float(np.exp((np.log(target) - intercept) / slope))


def lineage(name: str, rows: list[dict]) -> list[dict]:
    """A run's checkpoints after those of the runs behind its starting weights (each up to the
    epoch the next one started from), in order of training states: its whole training curve."""
    mine = [r for r in rows if r["run"] == name]
    start = _parent_row(mine[0], rows) if mine else None
    if start is None:
        return mine
    before = lineage(start["run"], rows)
    return [r for r in before if r["run"] != start["run"] or r["epoch"] <= start["epoch"]] + mine


def projection_lines(rows: list[dict]) -> list[str]:
    """Where each curve is heading: for every run of three or more checkpoints from fresh weights,
    and every chain of fine-tuning runs that no later run goes on from (its :func:`lineage`), the
    power laws of :func:`project` for the worst-kind ratio and the proven-safe share, with the
    training states at which each would meet its target."""
    lines = []
    started_from = {p[0] for p in map(_parent, rows) if p is not None}
    for name in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == name]
        chained = bool(mine[0]["parent"])
        if chained:
            if name in started_from:
                continue  # a later run goes on from it: the longer chain is fitted
            mine = lineage(name, rows)
        if len(mine) < 3:
            continue
        target = TARGETS[name.split("-")[0]]
        x = [r["examples"] for r in mine]
        cells = []
        for what, excess, goal in (
            ("worst-kind ratio", [r["worst_kind_ratio"] - 1 for r in mine], target - 1),
            ("proven safe < 0.02", [1 - r["safe_below"] for r in mine], 1 - SHARE_TARGET),
        ):
            slope, reach = project(x, excess, goal)
            where = (f"{reach:,.0f} states ({reach / x[-1]:.1f}x its last)" if reach is not None
                     else "not falling")
            cells.append(f"{what}: slope {slope:+.2f}, target at {where}")
        label = " > ".join(dict.fromkeys(r["run"] for r in mine)) if chained else name
        lines.append(f"| {label} | {len(mine)} | {'; '.join(cells)} |")
    if not lines:
        return []
    return [
        "",
        "Where the curves head: a power law in the training states seen, fitted (least squares, "
        "log-log) to each run's checkpoints, for what each target bounds (the worst-kind ratio less 1; "
        "the share of proven-safe cells at P >= 0.02), and the states at which the fitted line meets "
        "the target; for a chain of fine-tuning runs (a > b: b went on from a's weights), the whole "
        "chain's checkpoints. A rough guide: the points scatter from epoch to epoch, and a run's curve "
        "bends with its learning-rate schedule.",
        "",
        "| run | checkpoints | fitted |",
        "| --- | ---: | --- |",
        *lines,
    ]


def _parent(f: dict) -> tuple[str, int] | None:
    """A table row's parent run and epoch (its ``parent`` column, ``"gnn-m epoch 8"``), if any."""
    if not f["parent"]:
        return None
    name, _, epoch = f["parent"].split()
    return name, int(epoch)


def _parent_row(f: dict, rows: list[dict]) -> dict | None:
    """The row of a row's parent checkpoint among ``rows`` (None without a parent, or unscored)."""
    parent = _parent(f)
    return next((r for r in rows if (r["run"], r["epoch"]) == parent), None) if parent else None


def _epochs_before(f: dict, rows: list[dict]) -> int:
    """The epochs behind a row's starting weights: its parent's, and theirs if the parent is a
    fine-tuning run too (0 for a run from fresh weights)."""
    parent = _parent(f)
    if parent is None:
        return 0
    row = _parent_row(f, rows)
    return parent[1] + (_epochs_before(row, rows) if row is not None else 0)


def _epoch(f: dict, rows: list[dict]) -> str:
    """A row's epoch; a fine-tuning run's after all its parents' (``8+1``; ``10+1`` for a run
    from the second epoch of a run from epoch 8)."""
    before = _epochs_before(f, rows)
    return f"{before}+{f['epoch']}" if before else str(f["epoch"])


def _seconds_by_hardware(f: dict, rows: list[dict]) -> dict[str, float]:
    """A row's training seconds by where they ran (``""`` for the CPU, ``" on H100"`` for a GPU):
    a fine-tuning run's own, and its parents' where they trained."""
    row = _parent_row(f, rows)
    out = _seconds_by_hardware(row, rows) if row is not None else {}
    own = f["train_seconds"] - (row["train_seconds"] if row is not None else 0.0)
    where = _where(f["hardware"])
    out[where] = out.get(where, 0.0) + own
    return out


def _training(f: dict, rows: list[dict]) -> str:
    """A row's training time: ``9.6 min``, ``2.6 min on H100``, ``108.0 min + 3.8 min on H100``."""
    return " + ".join(f"{s / 60:.1f} min{where}" for where, s in _seconds_by_hardware(f, rows).items())


def _where(hardware: str | None) -> str:
    """`` on H100`` for a GPU's name (the CPU, the default, unnamed)."""
    if hardware and hardware.startswith("NVIDIA "):
        return f" on {hardware.split()[1]}"
    return ""


def _decisions(f: dict) -> str:
    """A row's decision figures on data/broad_test's guess positions; a dash for scores made before them."""
    if f["lowest_risk"] == "":
        return "—"
    return f"{f['lowest_risk']:.2%}, {f['regret_mean']:.4f}, {f['overconfident']:.2%}"


def write_table() -> list[dict]:
    from nnsweeper.fileio import write_text_atomic

    rows = [_flat(r) for r in _rows()]
    if not rows:
        raise SystemExit("no scores yet: run python train/scaling.py score")
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(TABLE.with_suffix(".csv"), text.getvalue())
    lines = [
        "| run | parameters | epoch | states seen | training | frontier LL ratio: broad_test / unseen "
        "| worst kind | proven safe at P < 0.02 | proven mines at P > 0.98 | guesses: lowest-risk pick, mean "
        "regret, overconfident | expert: win rate | gap to csp (95% interval) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for f in rows:
        lines.append(
            f"| {f['run']} | {f['parameters']:,} | {_epoch(f, rows)} | {f['examples']:,} "
            f"| {_training(f, rows)} "
            f"| {f['broad_test_ratio']:.3f} / {f['unseen_ratio']:.3f} | {f['worst_kind_ratio']:.3f} "
            f"({f['worst_kind']}) | {f['safe_below']:.2%} | {f['mine_above']:.2%} | {_decisions(f)} "
            f"| {f['win_rate']:.2%} "
            f"| {100 * f['gap']:+.2f} ({100 * f['gap_low']:+.2f} to {100 * f['gap_high']:+.2f}) |"
        )
    hardware = sorted({f["hardware"] for f in rows if f["hardware"]})
    games = sorted({f["games"] for f in rows})
    lines += [
        "",
        f"Trained on {', '.join(hardware)}. Expert games: {', '.join(f'{g:,}' for g in games)} per "
        f"checkpoint, first click in the corner, base seed {GAMES_SEED}, the same games for every checkpoint "
        f"and for csp (paired interval). Made by `python train/scaling.py train`, `score` and `table`.",
    ]
    lines += projection_lines(rows)
    write_text_atomic(TABLE.with_suffix(".md"), "\n".join(lines) + "\n")
    draw(rows, TABLE.with_suffix(".png"))
    return rows


def draw(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    from nnsweeper.fileio import atomic_path
    from nnsweeper.plots.palette import solver_color as color_of

    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8), layout="constrained")
    runs = list(dict.fromkeys(r["run"] for r in rows))
    for name in runs:
        mine = [r for r in rows if r["run"] == name]
        start = _parent_row(mine[0], rows)
        if start is not None:  # a fine-tuning run's line starts at its parent's point
            mine = [start, *mine]
        x = [r["examples"] for r in mine]
        arch, size = name.split("-")[0], name.split("-")[1]
        style = {
            "color": color_of(arch),
            "marker": {"s": "o", "m": "s", "l": "D", "ft": "^", "lr": "v"}.get(name.split("-")[-1], "o"),
            "ms": 4,
            "alpha": {"s": 0.45, "m": 0.7, "l": 1.0}.get(size, 1.0),
            "ls": ":" if mine[-1]["parent"] else "-",
            "label": f"{name} ({mine[0]['parameters'] / 1000:.0f}k)",
        }
        # The distances to the limit on log scales: the power laws of projection_lines are lines here.
        axes[0].plot(x, [r["worst_kind_ratio"] - 1 for r in mine], **style)
        axes[1].plot(x, [100 * (1 - r["safe_below"]) for r in mine], **style)
        gap = [100 * r["gap"] for r in mine]
        low = [100 * (r["gap"] - r["gap_low"]) for r in mine]
        high = [100 * (r["gap_high"] - r["gap"]) for r in mine]
        axes[2].errorbar(x, gap, yerr=[low, high], capsize=2, **style)
    for arch, target in TARGETS.items():
        axes[0].axhline(target - 1, color=color_of(arch), ls="--", lw=1, label=f"{arch} target {target}")
    axes[1].axhline(100 * (1 - SHARE_TARGET), color="grey", ls="--", lw=1,
                    label=f"target: {100 * SHARE_TARGET:g}% called safe")
    axes[2].axhline(0, color="grey", lw=1)
    axes[2].axhline(-1, color="grey", ls="--", lw=1, label="1 point below csp")
    titles = (
        "worst kind: frontier log-loss / exact engine's, less 1",
        "proven-safe cells given P >= 0.02 (%, worst set)",
        "pure solver minus csp, expert (points, 95% interval)",
    )
    states = ticker.FuncFormatter(lambda v, _: f"{v / 1e6:g}M" if v >= 1e6 else f"{v / 1e3:g}k")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
        ax.xaxis.set_major_formatter(states)
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("training states seen")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    for ax in axes[:2]:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    # One legend for the three panels, beside them: the runs, then each panel's reference lines.
    legend = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    fig.legend(legend.values(), legend.keys(), loc="outside right upper", fontsize=7)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def status(runs: list[Run]) -> None:
    from nnsweeper.training import run_states

    for run in runs:
        scored = len(list((SCORES / run.name).glob("epoch-*.json")))
        if not run.run_dir.is_dir():
            print(f"{run.name}: not started; {scored} checkpoint(s) scored")
            continue
        for state in run_states(run.run_dir):
            print(f"{run.name}: {state}; {scored} checkpoint(s) scored")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("data", "train", "score", "table", "status"))
    parser.add_argument(
        "runs", nargs="*", help="run names (default: all): " + ", ".join(r.name for r in RUNS)
    )
    parser.add_argument(
        "--epochs", type=int, default=None, help="train: the runs' epochs (default: each run's)"
    )
    parser.add_argument("--device", default="cpu", help="train: cpu, cuda or auto (default: cpu)")
    parser.add_argument("--workers", type=int, default=0, help="train: loader processes (default: 0)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument(
        "--minutes", type=float, default=None,
        help="train: the epochs that fit in this many minutes, from a probe of the run's speed "
        "(a started run goes on for that many more; --epochs overrides)",
    )
    parser.add_argument(
        "--games", type=int, default=2000, help="score: expert games per checkpoint (default: 2000)"
    )
    parser.add_argument("--batch", type=int, default=64, help="score: states per batch (default: 64)")
    args = parser.parse_args(argv)
    runs = _chosen(args.runs)
    if args.step == "data":
        make_data()
    elif args.step == "train":
        from nnsweeper.training import TrainingInterrupted

        try:
            train_runs(runs, epochs=args.epochs, device=args.device, workers=args.workers,
                       threads=args.threads, minutes=args.minutes)
        except TrainingInterrupted as stopped:  # Ctrl-C or SIGTERM: where the run stands
            again = shlex.join(["python", "train/scaling.py", *(argv if argv is not None else sys.argv[1:])])
            print(f"{stopped} (this script resumes by itself: {again})", file=sys.stderr)
            return 130
    elif args.step == "score":
        score_runs(runs, games=args.games, batch=args.batch, threads=args.threads)
    elif args.step == "table":
        for row in write_table():
            print(row["run"], row["epoch"], f"{row['worst_kind_ratio']:.3f}", f"{100 * row['gap']:+.2f}")
    else:
        status(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
