"""What buys better decisions at equal compute: loss, data, size, hardware.

Each run of :data:`RUNS` fine-tunes or trains a network with the one training loop and
one change against its baseline (the decision objectives of
:mod:`nnsweeper.training.objectives`, guess-position data, ...), the compute held equal
within a comparison (same starting weights, data, epochs, batch size and learning
rate). Every run's last checkpoint, and the bundled ``gnn`` and ``cnn`` as they ship,
are scored on what decides games:

- the decision figures (:mod:`nnsweeper.decisions`) and the frontier log-loss ratio on
  ``data/guess_test``: positions where a behaviour policy had to guess, on seeds no
  training set uses (expert and other dense boards; csp, search, explore and reveal);
- paired play on the *selection* games: 10,000 expert games, first click in the corner,
  base seed :data:`SELECT_SEED` (kept apart from the record's 2026, on which the shipped
  weights are finally evaluated), the pure and the hybrid solver against ``csp``.

A checkpoint is chosen by that play, not by its log-loss. Every step continues where
it stopped::

    python train/decisions.py data            # data/guess_train and data/guess_test
    python train/decisions.py train NAME      # train one run (continues an unfinished one)
    python train/decisions.py score [NAME]    # score what is not scored yet (and the bundled models)
    python train/decisions.py pair            # each model paired with the bundled one
    python train/decisions.py table           # eval/results/decisions.md
    python train/decisions.py cards           # the bundled models' cards: their decision figures
    python train/decisions.py ship NAME       # ship a run as the bundled model of its architecture
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS_DIR = ROOT / "runs" / "decisions"
SCORES = ROOT / "eval" / "results" / "decisions"
#: The gate's grids (train/gate.py --out): a run ships only through its own.
GATES = ROOT / "eval" / "results" / "gate"
#: Base seed of the selection games (expert, corner start): not the record's (2026).
SELECT_SEED = 4242
SELECT_GAMES = 10_000

_PARTS = ("expert:{big}:csp expert:{big}:search expert:{big}:explore expert:{big}:reveal "
          "16x16:40:{small}:csp 16x16:40:{small}:search 16x16:40:{small}:reveal 16x20:70:{small}:csp "
          "16x20:70:{small}:search 12x12:40:{small}:csp 12x12:40:{small}:reveal 10x10:25:{small}:csp "
          "10x10:25:{small}:search")
#: The guess-position datasets: where play is lost (expert and other dense boards), from four
#: behaviour policies, only the states where the policy guessed; training and test on other seeds.
DATA = {
    "data/guess_train": f"nnsweeper generate data/guess_train {_PARTS.format(big=6000, small=2000)} "
                        "--record guess --splits 0.9,0.1,0 --seed 12 --jobs 2",
    "data/guess_test": f"nnsweeper generate data/guess_test {_PARTS.format(big=1500, small=500)} "
                       "--record guess --splits 0,0,1 --seed 11 --jobs 2",
    # Every decision of the bundled models' mixture on seeds they were not trained on: the data
    # a guess-position dataset is compared with.
    "data/broad_more": "nnsweeper generate data/broad_more --mix broad --games 50 --seed 3 --jobs 2",
}
TEST = "data/guess_test"
#: The datasets a shipped model is scored on (train/bundle.py): the data the bundled models were
#: first trained on (its test split) and the held-out ones of their cards.
BUNDLE_DATA = {
    "data/broad": "nnsweeper generate data/broad --mix broad --games 50 --seed 0 --jobs 2",
    "data/broad_test": "nnsweeper generate data/broad_test --mix broad --games 12 --splits 0,0,1 --seed 1 "
                       "--jobs 2",
    "data/unseen_test": "nnsweeper generate data/unseen_test --mix unseen --games 100 --splits 0,0,1 "
                        "--seed 2 --jobs 2",
}


@dataclass(frozen=True)
class Run:
    """One training run: its config file, its changes to ``[train]``, and what it is compared with."""

    name: str
    config: str
    train: dict = field(default_factory=dict)
    data: str = "data/guess_train"
    note: str = ""
    arch: str = "gnn"
    #: Changes to ``[model]`` (a size other than the config's).
    model: dict = field(default_factory=dict)
    #: Where it was trained (``train --device``, ``--workers``; the command line may say otherwise).
    device: str = "cpu"
    workers: int = 0
    #: Settings the run that made the shipped weights had beyond :meth:`overrides` (a run on a
    #: lent machine, in a checkout whose run folders lay elsewhere), as ``section.key``: value.
    ran_as: dict = field(default_factory=dict)

    @property
    def train_command(self) -> str:
        flags = f" --device {self.device} --workers {self.workers}" if self.device != "cpu" else ""
        return f"python train/decisions.py train {self.name}{flags}"

    @property
    def run_dir(self) -> Path:
        return RUNS_DIR / self.name

    def overrides(self, device: str = "cpu", workers: int = 0) -> list[str]:
        sets = {"data.path": self.data, "output.dir": os.path.relpath(self.run_dir, ROOT),
                "train.device": device, "train.num_workers": workers, "train.tensorboard": False,
                **{f"model.{k}": v for k, v in self.model.items()},
                **{f"train.{k}": v for k, v in self.train.items()}}
        return [f"{k}={json.dumps(v)}" for k, v in sets.items()]

    def recorded_overrides(self) -> list[str]:
        """The overrides of the run that made its weights (:meth:`overrides` and :attr:`ran_as`), but
        for where it ran: ``train.device`` and ``train.num_workers`` are this machine's defaults
        (the loader processes of a larger machine are refused on a smaller one)."""
        return self.overrides() + [f"{k}={json.dumps(v)}" for k, v in self.ran_as.items()]


#: cnn-l's model (train/scaling.py): twice the bundled CNN's channels, more blocks, a wider reach.
CNN_L = {"channels": 64, "blocks": 10, "dilations": [1, 2, 4, 8, 16]}

#: Fine-tunings of the bundled GNN on guess positions, one epoch each at the same learning rate:
#: the probability loss alone (the baseline), then with each decision objective.
_FT = {"init": "gnn", "epochs": 1, "lr": 2e-4, "warmup": 0.05, "threads": 1, "in_memory": False}
RUNS = (
    Run("gnn-guess", "train/gnn_broad.toml", _FT, note="probability loss only (the baseline)"),
    # Weights that put each term's gradient near the probability loss's on the bundled GNN and a batch
    # of guess positions (norms 0.015 for the loss, 0.24 for risk, 7.0 for listwise at T 0.02).
    Run("gnn-guess-risk", "train/gnn_broad.toml", {**_FT, "decision_weight": 0.1, "decision_loss": "risk"},
        note="+ 0.1 x exact risk of the soft choice (T 0.02)"),
    Run("gnn-guess-listwise", "train/gnn_broad.toml",
        {**_FT, "decision_weight": 0.005, "decision_loss": "listwise"},
        note="+ 0.005 x cross-entropy toward the lowest-risk cells (T 0.02)"),
    Run("gnn-guess-calibrated", "train/gnn_broad.toml",
        {**_FT, "decision_weight": 0.1, "decision_loss": "risk", "calibration_margin": 1.0},
        note="+ 0.1 x risk, + calibration penalty on unproven cells"),
    # The same compute on every decision of the broad mixture (other seeds): 2,296 batches of 64,
    # the batches of one epoch of data/guess_train.
    Run("gnn-broad", "train/gnn_broad.toml", {**_FT, "max_batches": 2296}, data="data/broad_more",
        note="broad data (every decision), probability loss only"),
    Run("gnn-broad-risk", "train/gnn_broad.toml",
        {**_FT, "max_batches": 2296, "decision_weight": 0.1, "decision_loss": "risk"}, data="data/broad_more",
        note="broad data (every decision), + 0.1 x risk"),
    # Compute: three epochs of the risk objective on guess positions (three times the others').
    Run("gnn-guess-risk-3", "train/gnn_broad.toml",
        {**_FT, "epochs": 3, "decision_weight": 0.1, "decision_loss": "risk"},
        note="+ 0.1 x risk, three epochs (3x the compute)"),
    Run("gnn-guess-listwise-3", "train/gnn_broad.toml",
        {**_FT, "epochs": 3, "decision_weight": 0.005, "decision_loss": "listwise"},
        note="+ 0.005 x listwise, three epochs (3x the compute)"),
    # Compute again: eight epochs of each (the step from one epoch to three bought 2-3 points of
    # lowest-risk picks).
    Run("gnn-guess-risk-8", "train/gnn_broad.toml",
        {**_FT, "epochs": 8, "decision_weight": 0.1, "decision_loss": "risk"},
        note="+ 0.1 x risk, eight epochs (8x the compute)"),
    Run("gnn-guess-listwise-8", "train/gnn_broad.toml",
        {**_FT, "epochs": 8, "decision_weight": 0.005, "decision_loss": "listwise"},
        note="+ 0.005 x listwise, eight epochs (8x the compute)"),
    # The bundled CNN on guess positions: the same fine-tuning as gnn-guess-risk-3 (augmented as the
    # CNN was trained).
    Run("cnn-guess-risk-3", "train/cnn_broad.toml",
        {**_FT, "init": "cnn", "epochs": 3, "decision_weight": 0.1, "decision_loss": "risk"},
        note="the bundled CNN, + 0.1 x risk, three epochs", arch="cnn"),
    # Size and hardware: the CNN at cnn-l's size (train/scaling.py), trained from scratch on the
    # bundled models' data on a GPU (``--device cuda --workers 14``; ten epochs in batches of 256),
    # then the same three epochs on guess positions as cnn-guess-risk-3 in batches of 128.
    Run("cnn-l-gpu", "train/cnn_broad.toml",
        {"epochs": 10, "batch_size": 256, "lr": 2e-3, "threads": 0, "in_memory": True, "save_every": 100},
        data="data/broad", model=CNN_L, arch="cnn", device="cuda", workers=14,
        note="cnn-l's size (6.5x the parameters), 10 epochs of data/broad on a GPU"),
    Run("cnn-l-gpu-guess", "train/cnn_broad.toml",
        {**_FT, "init": "runs/decisions/cnn-l-gpu/best.pt", "epochs": 3, "batch_size": 128, "threads": 0,
         "in_memory": True, "decision_weight": 0.1, "decision_loss": "risk", "save_every": 100},
        model=CNN_L, arch="cnn", device="cuda", workers=14,
        # Trained where cnn-l-gpu's folder was runs/cnn-l-gpu (the same best.pt, sha256 4e9c58df739b).
        ran_as={"output.dir": "runs/cnn-l-gpu-guess", "train.init": "runs/cnn-l-gpu/best.pt"},
        note="cnn-l-gpu, + 0.1 x risk, three epochs on a GPU"),
)
#: The shipped models, scored as they are.
BUNDLED = ("gnn", "cnn")


def run_named(name: str) -> Run:
    for r in RUNS:
        if r.name == name:
            return r
    raise SystemExit(f"no run named {name!r}; the runs: {', '.join(r.name for r in RUNS)}")


def make_data() -> None:
    for folder, command in DATA.items():
        if (ROOT / folder / "manifest.json").exists():
            print(f"{folder}: made")
            continue
        print(f"== {command}", flush=True)
        from nnsweeper.cli import main as nnsweeper

        if nnsweeper(shlex.split(command)[1:] + ["--quiet"]):
            raise SystemExit(f"{command} failed")


def train_run(run: Run, device: str, workers: int) -> None:
    from nnsweeper.cli import main as nnsweeper

    argv = ["train", "--config", str(ROOT / run.config), *run.overrides(device, workers)]
    resume = (run.run_dir / "resume.pt").exists()
    if resume:
        argv.append("--resume")
    print(f"== nnsweeper {shlex.join(argv)}", flush=True)
    code = nnsweeper(argv)
    if code:
        raise SystemExit(code)


def _play(name: str, model_arg: list[str], out: Path) -> dict:
    """The pure and hybrid solvers of a model against csp on the selection games: paired gaps."""
    from nnsweeper.cli import main as nnsweeper
    from nnsweeper.evaluation import EvalTable

    solvers = f"csp,{name},hybrid-{name}"
    argv = ["eval", "--solvers", solvers, *model_arg, "--preset", "expert", "--start", "corner",
            "--trials", str(SELECT_GAMES), "--base-seed", str(SELECT_SEED), "--jobs", "1", "--quiet",
            "--out", os.path.relpath(out)]
    if nnsweeper(argv):
        raise SystemExit(f"nnsweeper {shlex.join(argv)} failed")
    table = EvalTable.from_json(out.with_suffix(".json"))
    play = {"board": "expert", "start": "corner", "games": SELECT_GAMES, "base_seed": SELECT_SEED}
    for solver, key in ((name, "pure"), (f"hybrid-{name}", "hybrid")):
        gap = table.difference(solver, "csp")[0]
        play[key] = {"win_rate": gap["win_rate"], "csp_win_rate": gap["reference_win_rate"],
                     "gap": gap["difference"], "gap_low": gap["ci_low"], "gap_high": gap["ci_high"]}
    return play


def _gaps(table, solver: str, reference: str) -> dict:
    gap = table.difference(solver, reference)[0]
    return {"win_rate": gap["win_rate"], "reference_win_rate": gap["reference_win_rate"],
            "gap": gap["difference"], "gap_low": gap["ci_low"], "gap_high": gap["ci_high"],
            "paired": gap["paired"]}


def paired_with_bundled(key: str, arch: str) -> dict | None:
    """A model's pure and hybrid solvers against the bundled model's, paired on the selection games
    (both tables kept under ``runs/decisions/play``); None where either is missing."""
    from nnsweeper.evaluation import EvalTable

    base, mine = RUNS_DIR / "play" / f"{arch}.json", RUNS_DIR / "play" / f"{key}.json"
    if (RUNS_DIR / "play" / f"{arch}-before.json").is_file():  # the bundled model each run started from
        base = RUNS_DIR / "play" / f"{arch}-before.json"
    if key in (arch, f"{arch}-before") or not base.is_file() or not mine.is_file():
        return None
    other = EvalTable.from_json(mine)
    both = EvalTable.from_json(base).merge(EvalTable([r for r in other if r["solver"] != "csp"],
                                                     other.metadata))
    return {"pure": _gaps(both, key, arch), "hybrid": _gaps(both, f"hybrid-{key}", f"hybrid-{arch}")}


def run_hardware(source: str) -> str | None:
    """What a checkpoint was trained on (its run's last epoch in ``history.json``), or None."""
    history = Path(source).parent / "history.json"
    if not history.is_file():
        return None
    epochs = json.loads(history.read_text(encoding="utf-8"))
    return epochs[-1].get("hardware") if epochs else None


def score(name: str, source: str, arch: str, *, batch: int) -> dict:
    """The figures of one model (a bundled name or a checkpoint path)."""
    from nnsweeper.metrics import to_json
    from nnsweeper.models import load_model
    from nnsweeper.training import evaluate_model

    model = load_model(source)
    extra = (model.checkpoint_meta or {}).get("extra") or {}
    result, _ = evaluate_model(model, ROOT / TEST, "test", batch_size=batch)
    result = json.loads(to_json(result))
    row = {"name": name, "arch": arch, "parameters": model.n_parameters, "source": source,
           "held_out": result["held_out"], "decision": result["decision"],
           "frontier_log_loss_ratio": result["frontier"]["log_loss_ratio"],
           "train_seconds": extra.get("seconds"), "examples": extra.get("examples"),
           "epoch": extra.get("epoch"), "hardware": run_hardware(source)}
    key = name if name in BUNDLED else f"{name}-e{row['epoch']}"
    model_arg = [] if name in BUNDLED else ["--model", f"{key}={arch}:{source}"]
    row["play"] = _play(key, model_arg, RUNS_DIR / "play" / key)
    row["play_key"] = key
    row["vs_bundled"] = paired_with_bundled(key, arch)
    return row


def score_all(batch: int, threads: int, only: str | None = None) -> None:
    import torch

    from nnsweeper.fileio import write_text_atomic

    torch.set_num_threads(threads)
    todo = [(name, name, name) for name in BUNDLED]
    todo += [(r.name, os.path.relpath(r.run_dir / "last.pt", ROOT), r.arch) for r in RUNS
             if (r.run_dir / "last.pt").exists()]
    if only is not None:
        todo = [t for t in todo if t[0] == only]
        if not todo:
            raise SystemExit(f"nothing to score named {only!r} (a bundled model or a trained run)")
    for name, source, arch in todo:
        target = SCORES / f"{name}.json"
        if target.exists():
            continue
        print(f"== scoring {name}", flush=True)
        row = score(name, source, arch, batch=batch)
        write_text_atomic(target, json.dumps(row, indent=1) + "\n")
        print(_line(row), flush=True)


def pair_scores() -> None:
    """Add to every score without it the paired gaps to the bundled model (:func:`paired_with_bundled`)."""
    from nnsweeper.fileio import write_text_atomic

    for path in sorted(SCORES.glob("*.json")):
        row = json.loads(path.read_text(encoding="utf-8"))
        if row["name"] in BUNDLED or row.get("vs_bundled"):
            continue
        key = row.get("play_key") or f"{row['name']}-e{row['epoch']}"
        row["vs_bundled"] = paired_with_bundled(key, row["arch"])
        if row["vs_bundled"] is not None:
            write_text_atomic(path, json.dumps(row, indent=1) + "\n")
            print(f"{row['name']}: pure {_pp(row['vs_bundled']['pure'])}, hybrid "
                  f"{_pp(row['vs_bundled']['hybrid'])} against the bundled {row['arch']}")


CARD_BEGIN = "<!-- decisions: begin (written by python train/decisions.py cards) -->"
CARD_END = "<!-- decisions: end -->"


def card_section(row: dict) -> str:
    """The decision figures of a bundled model for its model card (between :data:`CARD_BEGIN` and
    :data:`CARD_END`)."""
    from nnsweeper.decisions import format_decisions

    play = row["play"]
    return "\n".join([
        CARD_BEGIN,
        "## Decisions on guess positions",
        "",
        f"`{TEST}`, made by `{DATA[TEST]}`: positions where a behaviour policy had to guess, on seeds no",
        "training set uses. The model's safest cell (interior pooled, as its solver plays) against the",
        "exact risks (`nnsweeper.decisions`):",
        "",
        "```",
        format_decisions(row["decision"]),
        "```",
        "",
        f"Its solvers against csp on {play['games']:,} expert games (first click in the corner, base seed "
        f"{play['base_seed']}, paired 95% intervals): pure {_pp(play['pure'])} points, hybrid "
        f"{_pp(play['hybrid'])}.",
        CARD_END,
    ])


def write_cards() -> None:
    """Put each bundled model's decision figures into its model card (replacing an older section)."""
    from nnsweeper.fileio import write_text_atomic

    weights = ROOT / "nnsweeper" / "models" / "weights"
    for name in BUNDLED:
        path = SCORES / f"{name}.json"
        if not path.is_file():
            raise SystemExit(f"{name} has no scores yet: python train/decisions.py score {name}")
        row = json.loads(path.read_text(encoding="utf-8"))
        card = weights / f"{name}.md"
        text = card.read_text(encoding="utf-8")
        if CARD_BEGIN in text and CARD_END in text:
            head, rest = text.split(CARD_BEGIN, 1)
            text = head.rstrip("\n") + "\n\n" + card_section(row) + rest.split(CARD_END, 1)[1]
        else:
            text = text.rstrip("\n") + "\n\n" + card_section(row) + "\n"
        write_text_atomic(card, text)
        print(f"wrote {card.relative_to(ROOT)}")


def ship(run: Run) -> None:
    """Ship a run's last checkpoint as the bundled model of its architecture (train/bundle.py, scored on
    :data:`BUNDLE_DATA` and :data:`TEST`).

    The old bundled model's scores and selection games become ``ARCH-before`` (what every run is
    paired with), and the run's scores, the same weights, become the bundled model's.
    """
    import shutil
    import subprocess

    missing = [f for f in (*BUNDLE_DATA, TEST, run.data) if not (ROOT / f / "manifest.json").exists()]
    if missing:
        raise SystemExit(f"make {missing[0]} first (its command: {({**BUNDLE_DATA, **DATA})[missing[0]]})")
    scored = SCORES / f"{run.name}.json"
    if not scored.exists():
        raise SystemExit(f"{run.name} is not scored yet: python train/decisions.py score {run.name}")
    if not (GATES / f"{run.name}.json").exists():
        raise SystemExit(f"{run.name} has not been through the gate: python train/gate.py {run.arch} "
                         f"{os.path.relpath(run.run_dir / 'last.pt', ROOT)} --jobs 2 --out "
                         f"{os.path.relpath(GATES / run.name, ROOT)}")
    before = f"{run.arch}-before"
    if not (SCORES / f"{before}.json").exists():
        row = json.loads((SCORES / f"{run.arch}.json").read_text(encoding="utf-8"))
        row.update(name=before, play_key=before)
        (SCORES / f"{before}.json").write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
        for path in (RUNS_DIR / "play").glob(f"{run.arch}.*"):
            shutil.move(path, path.with_name(before + path.name[len(run.arch):]))
    command = [sys.executable, str(ROOT / "train" / "bundle.py"), run.arch,
               os.path.relpath(run.run_dir, ROOT), "--checkpoint", "last.pt", "--config", run.config,
               "--train-command", run.train_command, "--data-command", {**BUNDLE_DATA, **DATA}[run.data]]
    if run.data != "data/broad":  # fine-tuned: scored on the data its first weights learned from too
        command += ["--scored-on", "data/broad", BUNDLE_DATA["data/broad"]]
    for folder in ("data/broad_test", "data/unseen_test"):
        command += ["--test", folder, BUNDLE_DATA[folder]]
    command += ["--test", TEST, DATA[TEST], "--gate", os.path.relpath(GATES / run.name, ROOT)]
    print(f"== {shlex.join(command)}", flush=True)
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    row = json.loads(scored.read_text(encoding="utf-8"))
    row.update(name=run.arch, source=run.arch, shipped_from=run.name)
    (SCORES / f"{run.arch}.json").write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
    print(f"shipped {run.name} as {run.arch}; its card: python train/decisions.py cards")


def _pp(gap: dict | None) -> str:
    if gap is None:
        return "—"
    return f"{100 * gap['gap']:+.2f} ({100 * gap['gap_low']:+.2f} to {100 * gap['gap_high']:+.2f})"


def _line(row: dict) -> str:
    d = row["decision"]
    return (f"{row['name']}: lowest-risk {d['lowest_risk']:.2%}, regret {d['regret_mean']:.4f} "
            f"(p90 {d['regret_p90']:.4f}), overconfident {d['overconfident']:.2%}, safest-5 MAE "
            f"{d['safest5_mae']:.4f} bias {d['safest5_bias']:+.4f}, "
            f"LL ratio {row['frontier_log_loss_ratio']:.3f}; "
            f"pure - csp {_pp(row['play']['pure'])}, hybrid - csp {_pp(row['play']['hybrid'])}")


def table() -> str:
    notes = {r.name: r.note for r in RUNS}
    rows = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SCORES.glob("*.json"))]
    names = [*BUNDLED, *(f"{b}-before" for b in BUNDLED), *(r.name for r in RUNS)]
    order = {n: k for k, n in enumerate(names)}
    rows.sort(key=lambda r: order.get(r["name"], len(order)))
    out = [f"Decision figures on `{TEST}` (guess positions, held out) and paired play on {SELECT_GAMES:,} "
           f"expert games (corner start, base seed {SELECT_SEED}); made by `python train/decisions.py "
           "score`, `pair` and `table`. Training: states seen (the compute compared) and wall time on a "
           "2-core AMD EPYC CPU, 1 torch thread, shared with one to three other jobs (the times vary "
           "with that load), or on the GPU named. Play: differences in percentage points with paired 95% "
           "intervals.", "",
           "| model | what changed | training | lowest-risk pick | mean regret | regret p90 | overconfident "
           "| safest-5 error / bias | frontier LL ratio | pure - csp | hybrid - csp | pure - bundled before "
           "| hybrid - bundled before |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        d = r["decision"]
        before = r["name"].endswith("-before")
        what = ("as shipped before" if before else
                f"as shipped ({r['shipped_from']})" if r.get("shipped_from") else
                "as shipped" if r["name"] in BUNDLED else notes.get(r["name"], ""))
        on_gpu = "NVIDIA" in (r.get("hardware") or "")
        spent = ("—" if r["name"] in BUNDLED or before else
                 f"{r['examples'] or 0:,} states, {(r['train_seconds'] or 0) / 60:.1f} min"
                 + (f" on an {r['hardware']}" if on_gpu else ""))
        out.append(f"| {r['name']} | {what} | {spent} | {d['lowest_risk']:.2%} | {d['regret_mean']:.4f} | "
                   f"{d['regret_p90']:.4f} | {d['overconfident']:.2%} | {d['safest5_mae']:.4f} / "
                   f"{d['safest5_bias']:+.4f} | {r['frontier_log_loss_ratio']:.3f} | "
                   f"{_pp(r['play']['pure'])} | {_pp(r['play']['hybrid'])} | "
                   f"{_pp((r.get('vs_bundled') or {}).get('pure'))} | "
                   f"{_pp((r.get('vs_bundled') or {}).get('hybrid'))} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step",
                        choices=("data", "train", "score", "pair", "table", "cards", "ship", "status"))
    parser.add_argument("name", nargs="?", default=None,
                        help="train: the run; score: only this run or bundled model (default: all)")
    parser.add_argument("--device", default=None, help="train: cpu or cuda (default: the run's, mostly cpu)")
    parser.add_argument("--workers", type=int, default=None,
                        help="train: loader processes (default: the run's, mostly 0)")
    parser.add_argument("--batch", type=int, default=128, help="score: states per batch (default: 128)")
    parser.add_argument("--threads", type=int, default=1, help="score: torch threads (default: 1)")
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # the paths it passes and records are relative to the project
    if args.step == "data":
        make_data()
    elif args.step == "train":
        for run in [run_named(args.name)] if args.name else RUNS:
            train_run(run, args.device or run.device, run.workers if args.workers is None else args.workers)
    elif args.step == "score":
        score_all(args.batch, args.threads, args.name)
    elif args.step == "pair":
        pair_scores()
    elif args.step == "cards":
        write_cards()
    elif args.step == "ship":
        if not args.name:
            parser.error("ship needs the run to ship")
        ship(run_named(args.name))
    elif args.step == "table":
        from nnsweeper.fileio import write_text_atomic

        text = table()
        write_text_atomic(ROOT / "eval" / "results" / "decisions.md", text)
        print(text)
    else:
        for r in RUNS:
            state = "trained" if (r.run_dir / "last.pt").exists() else "not trained"
            scored = "scored" if (SCORES / f"{r.name}.json").exists() else "not scored"
            print(f"{r.name}: {state}, {scored}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
