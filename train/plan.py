"""The networks' recipe as a plan of resumable steps: data, training, gate, ship, on two CPU cores or a GPU.

The recipe of ``train/recipe.py`` at the scale the decisions need is many CPU hours, more
than one sitting. So it is cut into chunks: chunk *k* is a dataset of its own seed
(``data-KK``: one ``nnsweeper generate`` command, about 70,000 states, three in four of
them guess positions), one GNN step (``gnn-KK``: one pass over that data, starting from the
weights of step *k - 1*) and one CNN step (``cnn-KK``, the same), then the gate of each
network (``gate-gnn``, ``gate-cnn``), held-out data to score them on (``test-data``, seed
:data:`TEST_SEED`) and the shipping of each network whose gate passed (``ship-gnn``,
``ship-cnn``: ``train/bundle.py`` into the package's weights, with the model card; a network
whose gate failed is held back) and the replay of every committed row of its solvers with the
shipped weights (``replay-gnn``, ``replay-cnn``: ``eval/records.py NAME --replay SOLVERS`` for
each finished record and compare table that has them, each continuing after a stop in its
replay store). Every state is fresh: generated once, read once by
each network, then deleted (the ledger's command makes it again, byte for byte); on the
2-core machine chunk 0 took 0.16 CPU hours of data, 0.11 of GNN and 0.10 of CNN training.

Each finished step writes what a new machine must not redo into ``train/plan/`` (the
ledger, with every step's CPU seconds and weights' digest, and the latest weights of each
network, which are committed); what a step needs while it runs stays in the ignored ``data/plan`` and
``runs/plan``. A step that stops part-way continues where it stopped, the data by the
store's own skip and the training by ``--resume``::

    nice python train/plan.py run              # the next steps, in order, continuing any unfinished one
    nice python train/plan.py run --until gnn-02
    python train/plan.py status                # steps done, running and left; CPU hours spent and needed

On a machine with a GPU the same plan runs as one command (``run --device cuda --jobs
16``). ``--scale`` shrinks every chunk (games per configuration) for a test of the whole
plan on a CPU in minutes; a scaled plan keeps its ledger and weights in the run folder,
never in ``train/plan``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where finished steps leave what is committed: the ledger and the weights of each step.
STORE = ROOT / "train" / "plan"
#: Chunks of data and training steps of each network.
CHUNKS = 24
#: Seed of chunk k's data: SEED + k (no other dataset's, no evaluation's base seed).
SEED = 6100
#: Seed of the held-out data that scores the shipped networks (test split only), and its size
#: against a chunk's.
TEST_SEED = SEED + 99
TEST_SHARE = 0.1
#: What a training step keeps of its run beside the latest weights, by the run's file name: the
#: history and config (what the shipped model's card reads), the description, the weights last
#: (done() looks for the weights). Ship makes the last run folder again from them.
KEPT = {"history.json": ".history.json", "config.json": ".config.json", "last.json": ".json",
        "last.pt": ".pt"}
#: The networks in the order each chunk trains them.
NETS = ("gnn", "cnn")
CONFIGS = {"gnn": "train/plan_gnn.toml", "cnn": "train/plan_cnn.toml"}
#: The peak learning rate of chunk k is the config's times this share: a warm restart per
#: chunk, the peaks falling linearly to a quarter at the last chunk.
LAST_PEAK = 0.25

_LOGIC = ("csp", "search", "explore", "reveal")
_BETWEEN = "6-9,11-14,16-19,21-24,26-29"


def parts(scale: float = 1.0) -> list[str]:
    """The parts of one chunk's ``nnsweeper generate`` command (games scaled by ``scale``).

    Mostly guess positions (``:guess``), where games are lost: expert and the other dense
    boards from every logic policy, flags kept, none or some; every 10x10 mine count; the
    bundled networks' own pure play (``gnn``, ``cnn``). Then every decision of fewer games
    (the broad mixture and the 10x10 counts between its densities), for the certain moves
    and the calibration of sparse boards.
    """
    def g(n: int) -> int:
        return round(n * scale)

    guess = [
        f"expert:{g(1500)}:csp:none:guess", f"expert:{g(1500)}:csp:all:guess",
        f"expert:{g(1200)}:search:some:guess", f"expert:{g(900)}:explore:all:guess",
        f"expert:{g(900)}:reveal:none:guess", f"expert:{g(300)}:gnn::guess", f"expert:{g(300)}:cnn::guess",
        f"intermediate:{g(900)}:csp:none:guess", f"intermediate:{g(900)}:search:all:guess",
        f"intermediate:{g(450)}:reveal:some:guess",
        f"beginner:{g(600)}:csp:all:guess", f"beginner:{g(600)}:explore:none:guess",
        f"16x16:40:{g(600)}:csp:some:guess", f"16x20:70:{g(600)}:search:none:guess",
        f"12x12:40:{g(600)}:reveal:all:guess",
        f"10x10:5-30:{g(48)}:csp:none:guess", f"10x10:5-30:{g(48)}:search:all:guess",
        f"10x10:5-30:{g(36)}:explore:some:guess", f"10x10:5-30:{g(24)}:gnn::guess",
        f"10x10:5-30:{g(24)}:cnn::guess",
    ]
    every = [f"10x10:{_BETWEEN}:{g(1)}:{p}:{f}" for p in _LOGIC for f in ("all", "none")]
    every += [f"10x10:5-30:{g(2)}:{net}" for net in ("gnn", "cnn")]
    # A scaled-down plan leaves out the parts its scale gives no game.
    return [part for part in guess + every if not any(field == "0" for field in part.split(":")[1:3])]


def data_command(k: int, *, scale: float = 1.0, jobs: int = 2, folder: Path | None = None) -> list[str]:
    """The ``nnsweeper generate`` arguments of chunk ``k``'s data (a scaled-down chunk, with a few
    games a configuration, keeps half of them to validate on, the plan's own a twentieth)."""
    out = folder if folder is not None else ROOT / "data" / "plan" / f"chunk-{k:02d}"
    broad = round(3 * scale)
    mix = ["--mix", "broad", "--games", str(broad)] if broad else []
    return ["generate", str(out), *parts(scale), *mix,
            "--splits", "0.95,0.05,0" if scale == 1 else "0.5,0.5,0", "--seed", str(SEED + k),
            "--jobs", str(jobs), "--quiet"]


def test_command(*, scale: float = 1.0, jobs: int = 2, folder: Path | None = None) -> list[str]:
    """The ``nnsweeper generate`` arguments of the held-out data that scores the shipped networks
    (their model cards): the parts of a chunk at a tenth of its games (a scaled plan's: as many as
    a chunk's), all in the test split, from seed :data:`TEST_SEED` (games no chunk trained on)."""
    out = folder if folder is not None else ROOT / "data" / "plan" / "test"
    share = scale * TEST_SHARE if scale == 1 else scale  # a scaled plan's: a chunk's few games
    broad = round(3 * share)
    mix = ["--mix", "broad", "--games", str(broad)] if broad else []
    return ["generate", str(out), *parts(share), *mix, "--splits", "0,0,1",
            "--seed", str(TEST_SEED), "--jobs", str(jobs), "--quiet"]


def peak_share(k: int, chunks: int = CHUNKS) -> float:
    """The share of the config's learning rate at which chunk ``k``'s step peaks."""
    return 1.0 if chunks <= 1 else 1.0 - (1.0 - LAST_PEAK) * k / (chunks - 1)


@dataclass(frozen=True)
class Step:
    name: str
    kind: str  # data, gnn, cnn, gate, test (the held-out data), ship, replay
    chunk: int = -1

    @property
    def after(self) -> str | None:
        """The step whose weights this training step starts from."""
        if self.kind in NETS and self.chunk > 0:
            return f"{self.kind}-{self.chunk - 1:02d}"
        return None


def steps(chunks: int = CHUNKS) -> list[Step]:
    out = []
    for k in range(chunks):
        out.append(Step(f"data-{k:02d}", "data", k))
        out += [Step(f"{net}-{k:02d}", net, k) for net in NETS]
    out += [Step(f"gate-{net}", "gate") for net in NETS]
    out.append(Step("test-data", "test"))
    out += [Step(f"ship-{net}", "ship") for net in NETS]
    out += [Step(f"replay-{net}", "replay") for net in NETS]
    return out


#: The solvers whose games each network's weights decide (replayed once it ships).
PLAYED_BY = {"gnn": ("gnn", "hybrid-gnn", "value-gnn"), "cnn": ("cnn", "hybrid-cnn")}


def _records():
    """``eval/records.py``'s record runs and compare tables (its RECORDS + TABLES)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("records", ROOT / "eval" / "records.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("records", module)  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return (*module.RECORDS, *module.TABLES)


def replays(net: str) -> list[tuple[str, tuple[str, ...], Path]]:
    """What ``replay-NET`` plays again: (record or table name, its solvers that ``net`` decides,
    its table) for each finished one (its table committed) that has such solvers."""
    out = []
    for r in _records():
        mine = tuple(s for s in r.solvers if s in PLAYED_BY[net])
        if mine and r.table.exists():
            out.append((r.name, mine, r.table))
    return out


class Plan:
    """The plan's places and its ledger (``ledger.json``: one entry per finished step)."""

    def __init__(self, *, scale: float = 1.0, chunks: int = CHUNKS, work: Path | None = None,
                 jobs: int = 2, device: str = "auto", gate_args: tuple[str, ...] = ()):
        self.scale, self.chunks, self.jobs, self.device = scale, chunks, jobs, device
        self.gate_args = tuple(gate_args)
        self.runs = work if work is not None else ROOT / "runs" / "plan"
        self.data = self.runs / "data" if work is not None else ROOT / "data" / "plan"
        # A scaled plan (a test) keeps its ledger and weights with its runs, never in train/plan.
        self.store = self.runs / "store" if work is not None else STORE
        self.ledger_path = self.store / "ledger.json"

    # --------------------------------------------------------------- ledger
    def ledger(self) -> dict:
        if not self.ledger_path.exists():
            return {}
        return json.loads(self.ledger_path.read_text())

    def _record(self, name: str, entry: dict) -> None:
        from nnsweeper.fileio import write_text_atomic

        ledger = self.ledger()
        # The code that first made the step's result (a data step made again keeps its entry's).
        ledger[name] = {"code": _code_version(), **entry}
        self.store.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.ledger_path, json.dumps(ledger, indent=1, sort_keys=True) + "\n")
        # Counted in the ledger now: a later run of the step counts only its own CPU.
        (self.runs / f"{name}.cpu").unlink(missing_ok=True)

    def weights(self, step: str) -> Path:
        return self.store / "weights" / f"{step}.pt"

    def cpu_file(self, step: Step) -> Path:
        """Where a step's CPU seconds so far are kept while it is under way (every attempt's)."""
        return self.runs / f"{step.name}.cpu"

    def chunk_folder(self, k: int) -> Path:
        return self.data / f"chunk-{k:02d}"

    # ---------------------------------------------------------------- steps
    def done(self, step: Step) -> bool:
        """In the ledger, and for a training step its weights kept, or a later step of its
        network done (only the latest weights of each network are kept: the next step starts
        from them; the ledger keeps every step's digest)."""
        ledger = self.ledger()
        if step.name not in ledger:
            return False
        if step.kind not in NETS:
            return True
        weights = self.weights(step.name)
        if weights.exists() and weights.with_suffix(".json").exists():
            return True
        return any(s.kind == step.kind and s.chunk > step.chunk and s.name in ledger
                   and self.weights(s.name).exists() for s in steps(self.chunks))

    def needs_data(self, k: int) -> bool:
        """Whether a training step of chunk ``k`` still needs its data."""
        return any(not self.done(s) for s in steps(self.chunks) if s.kind in NETS and s.chunk == k)

    def run_step(self, step: Step) -> int:
        if step.kind == "data":
            return self._data(step)
        if step.kind in NETS:
            return self._train(step)
        if step.kind == "test":
            return self._test_data(step)
        if step.kind == "ship":
            return self._ship(step)
        if step.kind == "replay":
            return self._replay(step)
        return self._gate(step)

    def _test_data(self, step: Step) -> int:
        folder = self.data / "test"
        argv = test_command(scale=self.scale, jobs=self.jobs, folder=_rel(folder))
        rc, cpu, wall = _timed(argv, self.cpu_file(step))
        if rc == 0:
            self._record_data(step, folder, argv, cpu, wall)
        return rc

    def _record_data(self, step: Step, folder: Path, argv: list[str], cpu: float, wall: float) -> None:
        """The ledger entry of a dataset the step made: its command, CPU, manifest digest, states."""
        from nnsweeper.datasets import file_sha256

        manifest = json.loads((folder / "manifest.json").read_text())
        self._record(step.name, {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
                                 "command": "nnsweeper " + shlex.join(_portable(argv)),
                                 "manifest_sha256": file_sha256(folder / "manifest.json"),
                                 "states": {s: v["states"] for s, v in manifest["splits"].items()},
                                 "finished": _now()})

    def _ship(self, step: Step) -> int:
        """Bundle a network's last weights (``train/bundle.py``) once its gate passed: the package's
        weights for the plan itself, a folder of its own for a scaled plan. A network whose gate
        failed is held back (the step stays left). Where the last run folder is not on this
        machine it is made again from what the store keeps of it (:data:`KEPT`)."""
        net = step.name.split("-", 1)[1]
        ledger = self.ledger()
        gate = ledger.get(f"gate-{net}")
        if not gate or not gate.get("passed"):  # held back: the plan goes on, the step stays left
            print(f"train/plan.py: note: {net} does not ship: its gate "
                  + ("failed (see its grid)" if gate else "has not judged it yet"), file=sys.stderr)
            return 0
        last = f"{self.chunks - 1:02d}"
        run = self.runs / f"{net}-{last}"
        if not (run / "last.pt").exists():  # a new machine: the run folder made again from the store
            kept = self.weights(f"{net}-{last}")
            missing = [kept.stem + suffix for suffix in KEPT.values()
                       if not kept.with_name(kept.stem + suffix).exists()]
            if missing:
                print(f"train/plan.py: error: {net} cannot ship here: its last run folder {_rel(run)} is not "
                      f"on this machine and {', '.join(missing)} not in {_rel(kept.parent)}", file=sys.stderr)
                return 2
            run.mkdir(parents=True, exist_ok=True)
            for name, suffix in KEPT.items():
                shutil.copyfile(kept.with_name(kept.stem + suffix), run / name)
        if not (self.data / "test" / "manifest.json").exists():  # a new machine: made again first
            rc = self._test_data(Step("test-data", "test"))
            if rc != 0:
                return rc
        argv = [str(ROOT / "train" / "bundle.py"), net, str(_rel(run)),
                "--checkpoint", "last.pt", "--config", CONFIGS[net],
                "--data-command", ledger[f"data-{last}"]["command"],
                "--test", str(_rel(self.data / "test")), ledger["test-data"]["command"],
                "--train-command", f"python train/plan.py run (its {self.chunks} chunks; every step's "
                                   f"command in {_rel(self.ledger_path)})",
                "--gate", str(self.gate_prefix(net))]
        if self.store != STORE:
            argv += ["--weights-dir", str(self.store / "bundled")]
            (self.store / "bundled").mkdir(parents=True, exist_ok=True)
        rc, cpu, wall = _timed(argv, self.cpu_file(step), python_script=True)
        if rc == 0:
            from nnsweeper.fileio import file_sha256

            shipped = (self.store / "bundled" if self.store != STORE else
                       ROOT / "nnsweeper" / "models" / "weights") / f"{net}.pt"
            self._record(step.name, {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
                                     "command": "python " + shlex.join(_portable(argv)),
                                     "weights_sha256": file_sha256(shipped), "finished": _now()})
        return rc

    def _replay(self, step: Step) -> int:
        """Play every committed row of the network's solvers again with its shipped weights
        (:func:`replays`), one ``eval/records.py --replay`` after the other; each continues where
        it stopped (its replay store) when the step runs again. A network that did not ship is
        held back; a scaled plan ships into a folder of its own, which no record plays with,
        so it replays nothing and says so in its ledger entry."""
        net = step.name.split("-", 1)[1]
        if f"ship-{net}" not in self.ledger():
            print(f"train/plan.py: note: {net}'s rows are not replayed: it has not shipped", file=sys.stderr)
            return 0
        if self.store != STORE:
            self._record(step.name, {"cpu_s": 0.0, "wall_s": 0.0, "replayed": [], "finished": _now(),
                                     "note": "a scaled plan's weights are not the package's: no record "
                                             "plays with them"})
            return 0
        cpu = wall = 0.0
        commands = []
        for name, solvers, _ in replays(net):
            argv = [str(ROOT / "eval" / "records.py"), name, "--replay", ",".join(solvers),
                    "--jobs", str(self.jobs)]
            rc, c, w = _timed(argv, self.cpu_file(step), python_script=True)
            if rc != 0:
                return rc
            # _timed's figure holds every earlier attempt's CPU too: the last one is the total.
            cpu, wall = c, wall + w
            commands.append("python " + shlex.join(_portable(argv)))
        self._record(step.name, {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "replayed": commands,
                                 "finished": _now()})
        return 0

    def _data(self, step: Step) -> int:
        folder = self.chunk_folder(step.chunk)
        argv = data_command(step.chunk, scale=self.scale, jobs=self.jobs, folder=_rel(folder))
        rc, cpu, wall = _timed(argv, self.cpu_file(step))
        if rc == 0 and step.name in self.ledger():
            # Made again for a training step that still needs it (a new machine): its CPU counts too.
            entry = self.ledger()[step.name]
            self._record(step.name, {**entry, "again_cpu_s": round(entry.get("again_cpu_s", 0.0) + cpu, 1)})
        elif rc == 0:
            self._record_data(step, folder, argv, cpu, wall)
        return rc

    def _train(self, step: Step) -> int:
        folder = self.runs / step.name
        config = ROOT / CONFIGS[step.kind]
        from nnsweeper.training_config import load_config

        base = load_config(config)
        overrides = [f"data.path={_rel(self.chunk_folder(step.chunk))}", f"output.dir={_rel(folder)}",
                     f"train.lr={base.train.lr * peak_share(step.chunk, self.chunks)!r}",
                     f"train.device={self.device}"]
        if step.after is not None:
            overrides.append(f"train.init={_rel(self.weights(step.after))}")
        argv = ["train", "--config", str(config), *overrides, "--quiet"]
        if (folder / "resume.pt").exists():
            argv.append("--resume")
        rc, cpu, wall = _timed(argv, self.cpu_file(step))
        if rc != 0:
            return rc
        history = json.loads((folder / "history.json").read_text())
        target = self.weights(step.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        for source, suffix in KEPT.items():
            tmp = target.with_name(f"{target.stem}{suffix}.tmp")
            shutil.copyfile(folder / source, tmp)
            os.replace(tmp, target.with_name(target.stem + suffix))
        keep = ("val_frontier_log_loss_ratio", "val_decision_lowest_risk", "val_decision_regret_mean",
                "val_decision_overconfident", "val_frontier_safe_below")
        from nnsweeper.fileio import file_sha256

        self._record(step.name, {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
                                 "weights_sha256": file_sha256(target),
                                 "command": "nnsweeper " + shlex.join(_portable(argv)),
                                 "epochs": [{k: e.get(k) for k in ("epoch", "examples", *keep)}
                                            for e in history],
                                 "finished": _now()})
        # The weights before these are no longer needed (each description carries every chunk's
        # seeds, so keeping them all would grow by megabytes a chunk).
        if step.after is not None:
            before = self.weights(step.after)
            for suffix in KEPT.values():
                before.with_name(before.stem + suffix).unlink(missing_ok=True)
        # Both networks have read the chunk: its data goes (the ledger's command makes it again).
        if not self.needs_data(step.chunk):
            shutil.rmtree(self.chunk_folder(step.chunk), ignore_errors=True)
        return 0

    def gate_prefix(self, net: str) -> Path:
        """Where the gate of ``net`` writes its grid (``PREFIX.json``, ``PREFIX.md``) and keeps its
        games: ``eval/results/gate/plan-NET`` for the plan itself, relative to the checkout (the grid
        and the card that quotes it are committed), the store of a scaled plan otherwise."""
        if self.store != STORE:
            return self.store / f"gate-{net}"
        return _rel(ROOT / "eval" / "results" / "gate" / f"plan-{net}")

    def _gate(self, step: Step) -> int:
        net = step.name.split("-", 1)[1]
        last = self.weights(f"{net}-{self.chunks - 1:02d}")
        # Paths inside the checkout go to the gate relative to it: its grid and the model card
        # that quotes it are committed.
        argv = [str(ROOT / "train" / "gate.py"), net, str(_rel(last)), "--jobs", str(self.jobs),
                "--out", str(self.gate_prefix(net)), "--quiet", *self.gate_args]
        rc, cpu, wall = _timed(argv, self.cpu_file(step), python_script=True)
        if rc in (0, 1):  # judged: passed or failed; the grid says which
            self._record(step.name, {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "passed": rc == 0,
                                     "command": "python " + shlex.join(_portable(argv)), "finished": _now()})
        return 0 if rc in (0, 1) else rc

    # --------------------------------------------------------------- status
    def status(self) -> str:
        ledger = self.ledger()
        running = _running(self.runs)
        rows, spent, left = [], 0.0, 0.0
        for step in steps(self.chunks):
            entry = ledger.get(step.name)
            if entry is not None and self.done(step):
                spent += entry["cpu_s"] + entry.get("again_cpu_s", 0.0)
                extra = ""
                if step.kind in NETS and entry.get("epochs"):
                    e = entry["epochs"][-1]
                    extra = (f"  val LL ratio {e['val_frontier_log_loss_ratio']:.3f}, lowest-risk "
                             f"{100 * e['val_decision_lowest_risk']:.1f}%")
                elif step.kind == "data":
                    states = entry["states"]
                    extra = f"  {states.get('train', 0):,} + {states.get('val', 0):,} states"
                elif step.kind == "gate":
                    extra = "  PASSED" if entry["passed"] else "  FAILED (see its grid)"
                elif step.kind == "test":
                    extra = f"  {entry['states'].get('test', 0):,} held-out states"
                elif step.kind == "ship":
                    extra = f"  shipped, sha256 {entry['weights_sha256'][:12]}"
                elif step.kind == "replay":
                    extra = f"  {len(entry['replayed'])} tables replayed"
                rows.append(f"  {step.name:10s} done     {entry['cpu_s'] / 3600:6.2f} CPU h{extra}")
            else:
                estimate = self.estimate(step, ledger)
                so_far = float(self.cpu_file(step).read_text()) if self.cpu_file(step).exists() else 0.0
                left += max(estimate - so_far, 0.0)
                state = "running" if running == step.name else "left"
                extra = f", {so_far / 3600:.2f} spent so far" if so_far else ""
                rows.append(f"  {step.name:10s} {state:8s} ~{estimate / 3600:5.2f} CPU h{extra}")
        n_done = sum(1 for s in steps(self.chunks) if s.name in ledger and self.done(s))
        head = (f"plan: {n_done} of {len(steps(self.chunks))} steps done, "
                + (f"{running} running" if running else "nothing running")
                + f"; {spent / 3600:.2f} CPU hours spent, about {left / 3600:.1f} still needed")
        return "\n".join([head, *rows]) + "\n"

    def estimate(self, step: Step, ledger: dict) -> float:
        """CPU seconds a step not yet done needs: the mean of the done steps of its kind, or a prior;
        a replay's, the time its tables' rows took (games x mean time per game, one worker)."""
        if step.kind == "replay":
            if self.store != STORE:
                return 0.0
            from nnsweeper.evaluation import EvalTable

            net = step.name.split("-", 1)[1]
            return sum(r["games"] * r["mean_seconds"] for _, solvers, table in replays(net)
                       for r in EvalTable.from_json(table) if r["solver"] in solvers)
        done = [e["cpu_s"] for name, e in ledger.items() if name.split("-")[0] == step.kind]
        if done:
            return sum(done) / len(done)
        # Guesses before the first chunk, from a chunk a third the size (data: 0.05 CPU h) and the
        # recipe's training rates; replaced by the measured means as steps finish.
        return {"data": 0.2, "gnn": 1.5, "cnn": 1.5, "gate": 1.0, "test": 0.05,
                "ship": 0.1}[step.kind] * 3600 * self.scale


def _timed(argv: list[str], cpu_file: Path, python_script: bool = False) -> tuple[int, float, float]:
    """Run ``nnsweeper ARGV`` (or ``python ARGV``) in a child process: its exit code, its CPU
    seconds (its own and its workers') and its wall seconds.

    The CPU seconds add to what ``cpu_file`` holds from earlier attempts at the same step
    (stopped part-way and continued), and the running total is written there every
    :data:`POLL` seconds, so that a killed attempt's work still counts when the step continues.
    """
    cmd = [sys.executable, *argv] if python_script else [sys.executable, "-m", "nnsweeper", *argv]
    print("== " + shlex.join(_portable(cmd[1:] if python_script else ["nnsweeper", *argv])), flush=True)
    earlier = float(cpu_file.read_text()) if cpu_file.exists() else 0.0
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT)
    seen: dict[int, float] = {}  # CPU seconds of each process of the tree, as last seen
    sample = start
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() >= sample:
                seen.update(_tree_cpu(proc.pid))
                _write_cpu(cpu_file, earlier + sum(seen.values()))
                sample = time.monotonic() + POLL
            time.sleep(0.1)
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = earlier + max(usage.ru_utime + usage.ru_stime, sum(seen.values()))
    _write_cpu(cpu_file, cpu)
    return proc.returncode, cpu, time.monotonic() - start


#: Seconds between two readings of a running step's CPU time.
POLL = 10.0


def _write_cpu(path: Path, seconds: float) -> None:
    from nnsweeper.fileio import write_text_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, f"{seconds:.1f}\n")


def _tree_cpu(root: int) -> dict[int, float]:
    """CPU seconds (user and system) of process ``root`` and its descendants, read from /proc
    (empty where there is none: the wait's own figure then counts alone)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after the command's name: state, ppid, ...
        parent[int(name)] = int(fields[1])
        cpu[int(name)] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return {pid: cpu[pid] for pid in tree if pid in cpu}


def _rel(path: Path) -> Path:
    """``path`` relative to the checkout when it lies inside it (what checkpoints record is committed)."""
    try:
        return path.relative_to(ROOT)
    except ValueError:
        return path


def _portable(argv: list[str]) -> list[str]:
    """The arguments with the checkout's own path dropped (the ledger is committed)."""
    root = str(ROOT) + os.sep
    return [a.replace(root, "") for a in argv]


def _code_version() -> str:
    """The commit of the checkout the step ran from (with ``+changes`` when its tracked files differ
    from it), or the package's version outside a git checkout: a chunk's command makes the same data
    again with the same code (the policies' moves are the code's)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=30)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        head = None
    if head is None or head.returncode != 0:
        from nnsweeper import __version__

        return f"nnsweeper {__version__}"
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime())


def _running(runs: Path) -> str | None:
    """The step a live ``run`` is on (from its lock file), or None."""
    lock = runs / "RUNNING"
    try:
        pid, name = lock.read_text().split()
        os.kill(int(pid), 0)
    except (OSError, ValueError):
        return None
    return name


def run(plan: Plan, until: str | None = None) -> int:
    """Do the plan's steps in order, each continuing where it stopped; stop after ``until``."""
    import fcntl

    plan.runs.mkdir(parents=True, exist_ok=True)
    handle = open(plan.runs / "LOCK", "w")  # noqa: SIM115 (held while the plan runs)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"train/plan.py: error: another run of the plan holds {plan.runs / 'LOCK'}", file=sys.stderr)
        return 2
    names = [s.name for s in steps(plan.chunks)]
    if until is not None and until not in names:
        print(f"train/plan.py: error: --until must be a step of the plan ({names[0]} ... {names[-1]}); "
              f"got {until!r}", file=sys.stderr)
        return 2
    try:
        for step in steps(plan.chunks):
            # A chunk's data is made (or found) while a training step still needs it; any other
            # step runs unless the ledger has it.
            todo = plan.needs_data(step.chunk) if step.kind == "data" else not plan.done(step)
            if todo:
                (plan.runs / "RUNNING").write_text(f"{os.getpid()} {step.name}\n")
                rc = plan.run_step(step)
                if rc != 0:
                    print(f"train/plan.py: step {step.name} failed (exit {rc})", file=sys.stderr)
                    return rc
            if step.name == until:
                break
    finally:
        (plan.runs / "RUNNING").unlink(missing_ok=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="train/plan.py", description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=("run", "status"))
    p.add_argument("--until", default=None, help="run: stop after this step (default: all)")
    p.add_argument("--jobs", type=int, default=2,
                   help="worker processes of the data and the gate (default: 2)")
    p.add_argument("--device", default="auto", help="where to train: auto (a GPU when there is one), cpu or "
                   "cuda (default: auto)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="games per configuration times this (a test of the plan; needs --work)")
    p.add_argument("--chunks", type=int, default=CHUNKS, help=f"chunks of the plan (default: {CHUNKS})")
    p.add_argument("--work", default=None, help="a folder for a scaled plan's data, runs, ledger and weights")
    p.add_argument("--gate", default="", help="run: arguments for train/gate.py (quoted)")
    args = p.parse_args(argv)
    if not (0 < args.scale <= 1) or math.isnan(args.scale):
        p.error(f"--scale must be in (0, 1]; got {args.scale}")
    if (args.scale != 1 or args.chunks != CHUNKS) and args.work is None:
        p.error("a scaled plan (--scale, --chunks) needs its own --work folder: "
                "train/plan holds the real one")
    if args.chunks < 1:
        p.error(f"--chunks must be at least 1; got {args.chunks}")
    work = None if args.work is None else Path(args.work).resolve()
    plan = Plan(scale=args.scale, chunks=args.chunks, work=work, jobs=args.jobs, device=args.device,
                gate_args=tuple(shlex.split(args.gate)))
    if args.command == "status":
        print(plan.status(), end="")
        return 0
    return run(plan, args.until)


if __name__ == "__main__":
    sys.exit(main())
