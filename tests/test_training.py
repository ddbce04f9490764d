"""Training: configs, a short run lowers the loss, resume after a kill, DDP, bad input."""

import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from nnsweeper.errors import DatasetError
from nnsweeper.models import MineModel, load_checkpoint
from nnsweeper.training import (
    DataSection,
    OutputSection,
    TrainingConfig,
    TrainingError,
    TrainSection,
    apply_overrides,
    check_config,
    load_config,
    train,
    validate,
)

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "tiny"

CNN = {"arch": "cnn", "channels": 8, "blocks": 2, "dilations": [1, 2]}
GNN = {"arch": "gnn", "hidden": 16, "layers": 2}


def _config(tmp_path, model, **train_kw):
    t = {"epochs": 2, "batch_size": 16, "lr": 3e-3, "seed": 0, "threads": 1, "device": "cpu", **train_kw}
    return {"data": {"path": str(FIXTURE)}, "model": dict(model), "train": t,
            "output": {"dir": str(tmp_path / "run")}}


def _toml(path: Path, config: dict) -> Path:
    def value(v):
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = []
    for section, items in config.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {value(v)}" for k, v in items.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _state(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


# ------------------------------------------------------------------ configs
def test_config_defaults_and_overrides(tmp_path):
    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN))
    c = load_config(path, ["train.epochs=5", "model.dilations=[1, 2, 4]", "train.target=truth"])
    assert c.train.epochs == 5 and c.train.target == "truth"
    assert c.model["dilations"] == [1, 2, 4] and c.model["channels"] == 8
    assert c.train.weight_decay == 1e-4  # a default
    # The JSON form: every table complete, the model's config with "arch" first.
    d = c.to_dict()
    assert list(d) == ["data", "model", "train", "output"]
    assert list(d["model"]) == ["arch", "channels", "blocks", "dilations", "kernel", "norm", "global_pool",
                                "symmetric"]
    assert d["train"]["lr"] == 3e-3 and d["data"]["configurations"] is None
    # A checked config, or its dict, checks again to the same config.
    assert check_config(c) == c and check_config(d) == c
    assert apply_overrides(c, ["train.epochs=7"])["train"]["epochs"] == 7


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("train.epochs=0", "train.epochs must be at least 1; got 0"),
        ("train.epochs=2.5", "train.epochs must be an integer; got 2.5"),
        ("train.lr=0", "train.lr must be a number"),
        ("train.target=guess", "train.target must be one of exact, truth"),
        ("train.certain_weight=0", "train.certain_weight must be a number in [0, inf] above 0; got 0"),
        ("train.certain_margin=-1", "train.certain_margin must be a number in [0, inf]; got -1"),
        ("train.in_memory=1", "train.in_memory must be true or false; got 1"),
        ("train.speed=3", "unknown key(s) ['speed'] in [train]"),
        ("model.channels=-4", "[model]"),
        ("model.arch=mlp", "[model]"),
        ("optim.lr=1", "unknown config section 'optim'"),
        ("epochs=3", "section.key=value"),
        ("train.num_workers=100000", "train.num_workers must be at most"),
        ("train.threads=100000", "train.threads must be at most"),
    ],
)
def test_bad_configs(tmp_path, override, words):
    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN))
    with pytest.raises(TrainingError) as info:
        load_config(path, [override])
    assert words in str(info.value)


@pytest.mark.parametrize(
    ("section", "values", "words"),
    [
        (TrainSection, {"epochs": 0}, "train.epochs must be at least 1; got 0"),
        (TrainSection, {"warmup": 1.5}, "train.warmup must be a number in [0, 1]; got 1.5"),
        (TrainSection, {"lr": True}, "train.lr must be a number in [0, inf] above 0; got True"),
        (TrainSection, {"device": "tpu"}, "train.device must be auto, cpu or cuda; got 'tpu'"),
        (TrainSection, {"in_memory": "yes"}, "train.in_memory must be true or false; got 'yes'"),
        (DataSection, {}, "[data] path is required: the dataset folder to train on"),
        (DataSection, {"path": "d", "configurations": "9x9-m10-safe-csp"},
         "data.configurations must be a list of configuration keys; got '9x9-m10-safe-csp'"),
        (DataSection, {"path": "d", "val_split": 2}, "data.val_split must be a string; got 2"),
        (OutputSection, {"dir": ""}, "[output] dir is required: the run folder"),
    ],
)
def test_config_sections_refuse_bad_values(section, values, words):
    with pytest.raises(TrainingError) as info:
        section(**values)
    assert words in str(info.value)


def test_sections_normalise_and_freeze():
    t = TrainSection(lr=1, epochs=3)
    assert t.lr == 1.0 and isinstance(t.lr, float) and t.epochs == 3 and t.batch_size == 128
    with pytest.raises(AttributeError):
        t.epochs = 4  # frozen
    data = DataSection(path=FIXTURE, configurations=["a", "b"])
    assert data.path == str(FIXTURE) and data.configurations == ("a", "b")
    assert data.to_dict()["configurations"] == ["a", "b"]


@pytest.mark.parametrize("arch", ["cnn", "gnn"])
def test_shipped_train_configs_load_as_recorded_with_the_bundled_weights(arch):
    import json

    root = Path(__file__).resolve().parents[1]
    meta = json.loads((root / "nnsweeper" / "models" / "weights" / f"{arch}.json").read_text())
    recorded = meta["extra"]["train_config"]
    overrides = []
    name = f"{arch}_broad"
    run_dir = Path(recorded["output"]["dir"])
    if run_dir.parent == Path("runs/plan"):  # the last step of train/plan.py: its ledger has the command
        import shlex

        ledger = json.loads((root / "train" / "plan" / "ledger.json").read_text())
        argv = shlex.split(ledger[run_dir.name]["command"])
        assert argv[:2] == ["nnsweeper", "train"]
        name = Path(argv[argv.index("--config") + 1]).stem
        overrides = [a for a in argv[2:] if "=" in a and not a.startswith("-")]
        assert f"output.dir={run_dir}" in overrides
    elif meta["extra"].get("init"):  # weights fine-tuned by a run of train/decisions.py: its overrides too
        import importlib.util
        import sys

        spec = importlib.util.spec_from_file_location("decisions", root / "train" / "decisions.py")
        decisions = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("decisions", decisions)  # a dataclass looks its module up there
        spec.loader.exec_module(decisions)
        run = decisions.run_named(run_dir.name)
        assert run.config == f"train/{name}.toml"
        overrides = run.recorded_overrides()
        # Where it ran is not a setting of its weights: a GPU run's device and loader processes
        # are compared as this machine's defaults.
        recorded = {**recorded, "train": {**recorded["train"], "device": "cpu", "num_workers": 0}}
    config = load_config(root / "train" / f"{name}.toml", overrides)
    assert isinstance(config, TrainingConfig)
    # What the shipped config reads as is what the bundled weights were trained with:
    # every recorded setting, and keys added since at their defaults.
    now = config.to_dict()
    for section, values in recorded.items():
        kept = {k: now[section][k] for k in values} if isinstance(values, dict) else now[section]
        assert kept == values
    assert now == check_config(recorded).to_dict()
    assert json.dumps(now) == json.dumps(check_config(recorded).to_dict())  # the same key order too
    # The model as the bundled weights describe it, keys added since at their defaults.
    assert config.model == MineModel.complete_config(meta["config"])
    assert {k: config.model[k] for k in meta["config"]} == meta["config"]


def test_train_help_lists_every_key_with_its_default(capsys):
    from nnsweeper.cli import main
    from nnsweeper.training import SECTIONS

    assert main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    assert "train.epochs = 10" in out and "Passes over the training split." in out
    assert 'train.target = "exact"' in out and "data.path = none" in out
    assert "model.channels = 32" in out and "model.conv = \"sage\"" in out
    for name, cls in SECTIONS.items():
        for key in cls.keys() if cls is not None else ("arch",):
            assert f"{name}.{key} = " in out


def test_certain_weight_in_the_loss():
    from nnsweeper.training.scoring import bce_loss as _loss

    logit = torch.tensor([0.0, 1.0, -2.0, 3.0])
    out = {"logit": logit, "prob": torch.tensor([0.0, 0.25, 1.0, 0.5]),
           "mine": torch.tensor([0.0, 0.0, 1.0, 1.0]), "weight": torch.tensor([1.0, 1.0, 2.0, 1.0])}
    q = torch.sigmoid(logit)
    bce = -(out["prob"] * torch.log(q) + (1 - out["prob"]) * torch.log(1 - q))
    # Certain rows (p = 0 and p = 1) count 4 times their weight.
    w = torch.tensor([4.0, 1.0, 8.0, 1.0])
    assert float(_loss(out, "exact", 4.0)) == pytest.approx(float((bce * w).sum() / w.sum()), rel=1e-6)
    w1 = out["weight"]
    assert float(_loss(out, "exact")) == pytest.approx(float((bce * w1).sum() / w1.sum()), rel=1e-6)
    truth = -(out["mine"] * torch.log(q) + (1 - out["mine"]) * torch.log(1 - q))
    assert float(_loss(out, "truth", 4.0)) == pytest.approx(float((truth * w).sum() / w.sum()), rel=1e-6)


def test_certain_margin_penalises_only_proven_cells_outside_the_band():
    from nnsweeper.training.scoring import bce_loss as _loss

    edge = math.log(0.01 / 0.99)  # logit(0.01) = -4.595
    # A proven-safe cell at logit -2 (P 0.12, wrong by 2.595), one at -6 (inside the band), a proven
    # mine at logit 3 (P 0.95, wrong by 1.595), an uncertain cell far out (never penalised).
    logit = torch.tensor([-2.0, -6.0, 3.0, 8.0])
    out = {"logit": logit, "prob": torch.tensor([0.0, 0.0, 1.0, 0.5]),
           "mine": torch.tensor([0.0, 0.0, 1.0, 1.0]), "weight": torch.tensor([1.0, 1.0, 2.0, 1.0])}
    plain = float(_loss(out, "exact"))
    penalty = torch.tensor([(-2.0 - edge) ** 2, 0.0, (-edge - 3.0) ** 2, 0.0])
    assert (-2.0 - edge) ** 2 == pytest.approx(6.7346, abs=1e-4)
    w = out["weight"]
    assert float(_loss(out, "exact", certain_margin=0.5)) == pytest.approx(
        plain + float((0.5 * penalty * w).sum() / w.sum()), rel=1e-6)
    # With the weight of proven cells as well: both count it.
    cw = torch.tensor([3.0, 3.0, 6.0, 1.0])
    q = torch.sigmoid(logit)
    bce = -(out["prob"] * torch.log(q) + (1 - out["prob"]) * torch.log(1 - q))
    assert float(_loss(out, "exact", 3.0, 0.5)) == pytest.approx(
        float(((bce + 0.5 * penalty) * cw).sum() / cw.sum()), rel=1e-5)
    # Every proven cell inside the band: no penalty at all.
    inside = dict(out, logit=torch.tensor([-5.0, -6.0, 5.0, 8.0]))
    assert float(_loss(inside, "exact", certain_margin=9.0)) == pytest.approx(float(_loss(inside, "exact")),
                                                                           rel=1e-7)


def test_missing_config_file(tmp_path):
    with pytest.raises(TrainingError, match="no training config"):
        load_config(tmp_path / "none.toml")


# ------------------------------------------------------------------ training
@pytest.mark.parametrize(("model", "options"), [
    (CNN, {}), (GNN, {}), (CNN, {"augment": True}),
    (CNN, {"decision_weight": 1.0, "calibration_margin": 0.5}),
    (GNN, {"decision_weight": 1.0, "decision_loss": "listwise", "decision_temperature": 0.05}),
], ids=["cnn", "gnn", "cnn-augment", "cnn-risk-calibration", "gnn-listwise"])
def test_two_epochs_lower_the_loss(tmp_path, model, options):
    config = check_config(_config(tmp_path, model, epochs=2, **options))
    from nnsweeper.training.loop import _loader

    torch.manual_seed(0)
    fresh = MineModel.from_config(config.model)
    val = _loader(fresh, config, FIXTURE, "val", shuffle=False, rank=0, world=1)
    before = validate(fresh, val)["loss"]
    result = train(config, progress=False)
    assert [h["epoch"] for h in result.history] == [1, 2]
    assert result.history[-1]["val_loss"] < before
    assert result.history[-1]["train_loss"] < result.history[0]["train_loss"] * 1.05
    model_back = load_checkpoint(result.best, expected={"arch": model["arch"]})
    assert validate(model_back, val)["loss"] == pytest.approx(min(h["val_loss"] for h in result.history))
    assert model_back.checkpoint_meta["extra"]["data_manifest_sha256"]
    for name in ("best.pt", "best.json", "last.pt", "last.json", "history.json", "config.json", "resume.pt"):
        assert (result.run_dir / name).exists()


def test_augment_is_refused_for_graphs_and_shuffles_the_training_loader_only(tmp_path):
    from nnsweeper.training.loop import _loader

    config = check_config(_config(tmp_path, GNN, augment=True))
    with pytest.raises(DatasetError, match="augment is for grid models"):
        train(config, progress=False)
    config = check_config(_config(tmp_path, CNN, augment=True))
    model = MineModel.from_config(config.model)
    assert _loader(model, config, FIXTURE, "train", shuffle=True, rank=0, world=1).dataset.augment
    assert not _loader(model, config, FIXTURE, "val", shuffle=False, rank=0, world=1).dataset.augment


def test_resume_after_kill_gives_the_same_weights(tmp_path):
    config = _config(tmp_path, CNN, epochs=4, save_every=2)
    reference = dict(config, output={"dir": str(tmp_path / "reference")})
    train(check_config(reference), progress=False)

    path = _toml(tmp_path / "c.toml", config)
    run = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "nnsweeper", "train", "--config", str(path), "--quiet"]
    proc = subprocess.Popen(cmd, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (run / "resume.pt").exists():
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.002)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "training ended before it could be killed"
    assert not (run / "history.json").exists() or len(__import__("json").loads(
        (run / "history.json").read_text())) < 4
    from nnsweeper.cli import main

    assert main(["train", "--config", str(path), "--resume", "--quiet"]) == 0
    a, b = _state(run / "last.pt"), _state(tmp_path / "reference" / "last.pt")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_nan_loss_stops_with_the_step(tmp_path, monkeypatch):
    from nnsweeper.models import MineCNN

    real = MineCNN.outputs
    calls = {"n": 0}

    def poisoned(self, batch):
        out = real(self, batch)
        calls["n"] += 1
        if self.training and calls["n"] == 3:
            out["logit"] = out["logit"] * float("nan")
        return out

    monkeypatch.setattr(MineCNN, "outputs", poisoned)
    with pytest.raises(TrainingError, match=r"the loss became nan at epoch 1, step 3"):
        train(check_config(_config(tmp_path, CNN)), progress=False)


def test_dataset_that_does_not_match_is_refused(tmp_path):
    config = _config(tmp_path, CNN)
    config["data"]["manifest_sha256"] = "0" * 64
    with pytest.raises(TrainingError, match="does not match the config: its manifest's SHA-256"):
        train(check_config(config), progress=False)
    config = _config(tmp_path, CNN)
    config["data"]["configurations"] = ["16x30-m99-safe-csp"]
    with pytest.raises(TrainingError, match="lacks the configuration"):
        train(check_config(config), progress=False)
    assert not (tmp_path / "run").exists()


def test_run_folder_rules(tmp_path):
    config = check_config(_config(tmp_path, CNN, epochs=1))
    with pytest.raises(TrainingError, match="nothing to resume"):
        train(config, resume=True, progress=False)
    train(config, progress=False)
    with pytest.raises(TrainingError, match="is not empty; use --resume"):
        train(config, progress=False)
    other = check_config(_config(tmp_path, {**CNN, "channels": 4}, epochs=1, lr=1e-3))
    with pytest.raises(TrainingError) as info:
        train(other, resume=True, progress=False)
    # Each differing key with its value now and the run's, and what to type instead.
    assert str(info.value).startswith(f"cannot resume {str(tmp_path / 'run')!r} with another config: ")
    assert "model.channels is 4, the run has 8; train.lr is 0.001, the run has 0.003" in str(info.value)
    assert "the overrides model.channels=8 train.lr=0.003" in str(info.value)


def test_a_folder_with_only_its_config_starts_again(tmp_path):
    # A run stopped before its first save leaves config.json alone: the same command starts it again.
    config = check_config(_config(tmp_path, CNN, epochs=1))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text("{}")
    with pytest.raises(TrainingError, match="stopped before its first save: run the same command without"):
        train(config, resume=True, progress=False)
    assert [h["epoch"] for h in train(config, progress=False).history] == [1]


def test_corrupted_resume_state_is_refused(tmp_path):
    config = check_config(_config(tmp_path, CNN, epochs=1))
    train(config, progress=False)
    blob = (tmp_path / "run" / "resume.pt").read_bytes()
    (tmp_path / "run" / "resume.pt").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(TrainingError, match="resume.pt"):
        train(config, resume=True, progress=False)


def test_ddp_two_cpu_processes(tmp_path):
    pytest.importorskip("torch.distributed.run")
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available")
    config = _config(tmp_path, CNN, epochs=1)
    path = _toml(tmp_path / "c.toml", config)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "nnsweeper", "train", "--config", str(path), "--quiet"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    run = tmp_path / "run"
    model = load_checkpoint(run / "last.pt")
    # Each rank takes half of the batches.
    assert model.checkpoint_meta["extra"]["step"] == -(-_batches(config) // 2)
    single = _config(tmp_path, CNN, epochs=1)
    single["output"]["dir"] = str(tmp_path / "single")
    one = train(check_config(single), progress=False)
    assert load_checkpoint(one.last).checkpoint_meta["extra"]["step"] == _batches(config)
    shutil.rmtree(tmp_path / "single")


def _batches(config) -> int:
    from nnsweeper.training.loop import _loader

    config = check_config(config)
    model = MineModel.from_config(config.model)
    return len(_loader(model, config, FIXTURE, "train", shuffle=True, rank=0, world=1))


def test_evaluate_model_command(tmp_path, capsys):
    import json

    from nnsweeper.cli import main
    from nnsweeper.training import evaluate_model

    result = train(check_config(_config(tmp_path, GNN, epochs=1)), progress=False)
    model = load_checkpoint(result.best)
    scores, preds = evaluate_model(model, FIXTURE, "test")
    # The exact engine as the model scores a ratio of 1; a trained model is worse, not better.
    assert scores["frontier"]["log_loss_ratio"] >= 1.0
    assert set(scores["by"]) == {"6x6-m5-safe-csp", "9x9-m10-safe-csp", "9x9-m10-safe-explore"}
    total = sum(v["all"]["cells"] for v in scores["by"].values())
    assert total == scores["all"]["cells"] == preds.cells
    assert scores["held_out"] is True and "held_out_note" not in scores
    # Kinds pool configurations: one flag mode only, so no flags field.
    kinds = scores["kinds"]
    assert set(kinds) == {"board", "policy", "policy_flags"}
    assert list(kinds["board"]) == ["6x6-m5", "9x9-m10"] and list(kinds["policy"]) == ["csp", "explore"]
    assert list(kinds["policy_flags"]) == ["csp-all", "explore-all"]
    by = {k: v["frontier"]["cells"] for k, v in scores["by"].items()}
    nine = by["9x9-m10-safe-csp"] + by["9x9-m10-safe-explore"]
    assert kinds["board"]["9x9-m10"]["frontier"]["cells"] == nine
    assert kinds["policy"]["csp"]["frontier"]["cells"] == by["6x6-m5-safe-csp"] + by["9x9-m10-safe-csp"]
    assert kinds["policy"]["explore"]["frontier"] == scores["by"]["9x9-m10-safe-explore"]["frontier"]
    out = tmp_path / "eval" / "gnn"
    assert main(["evaluate-model", "--model", str(result.best), "--data", str(FIXTURE), "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith(f"{result.best} on the test split of {FIXTURE} (held out: games the model "
                                  f"never saw), each figure beside the exact engine's:\n")
    assert "frontier" in printed.out and "interior" in printed.out
    kinds_part, decisions_part = printed.out.split("frontier cells by kind:\n")[1].split("decisions on ")
    assert [line.split()[0] for line in kinds_part.splitlines()] == [
        "board", "6x6-m5", "9x9-m10", "policy", "csp", "explore", "policy_flags", "csp-all", "explore-all"]
    # Then the decisions on the positions with no proven-safe cell, overall and by phase.
    head, _, *phases, last = decisions_part.splitlines()
    assert [line.split()[0] for line in phases] == ["all", ">400", "120-400", "<=120"]
    # A model trained two epochs on a few hundred states is not ready to play alone.
    assert last.startswith(f"{result.best}: not ready to play alone (proven-safe frontier cells given")
    assert "wrote" not in printed.out and printed.err == ""
    saved = json.loads(out.with_suffix(".json").read_text())
    assert saved["frontier"]["log_loss_ratio"] == pytest.approx(scores["frontier"]["log_loss_ratio"])
    assert saved["held_out"] is True
    assert head.startswith(f"{saved['decision']['positions']:,} guess positions (of "
                           f"{saved['decision']['all_positions']:,}; no proven-safe cell):")
    assert 0 < saved["decision"]["positions"] < saved["decision"]["all_positions"]
    assert out.with_suffix(".png").stat().st_size > 10_000
    assert main(["evaluate-model", "--model", "nowhere.pt", "--data", str(FIXTURE), "--out", str(out)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


# ------------------------------------------------------------------ messages
def test_resuming_a_finished_run_says_so_and_trains_nothing(tmp_path, capsys):
    from nnsweeper.cli import main

    config = _config(tmp_path, CNN, epochs=1)
    path = _toml(tmp_path / "c.toml", config)
    assert main(["train", "--config", str(path), "--quiet"]) == 0
    run = tmp_path / "run"
    before = {name: (run / name).stat().st_mtime_ns for name in ("last.pt", "resume.pt", "history.json")}
    capsys.readouterr()
    assert main(["train", "--config", str(path), "--resume", "--quiet"]) == 0
    out = capsys.readouterr().out
    history = __import__("json").loads((run / "history.json").read_text())
    assert out == (
        f"{run} already finished its 1 epoch (best epoch 1, val loss {history[0]['val_loss']:.4f}); to train "
        f"longer, run the same command with train.epochs=N --resume, N above 1\n"
    )
    assert before == {name: (run / name).stat().st_mtime_ns for name in before}


def test_resuming_with_more_epochs_stretches_the_schedule(tmp_path):
    from nnsweeper.training.loop import _schedule

    first = train(check_config(_config(tmp_path, CNN, epochs=1)), progress=False)
    per_epoch = first.history[0]["step"]
    notes = []
    longer = check_config(_config(tmp_path, CNN, epochs=3))
    result = train(longer, resume=True, progress=False, notify=notes.append)
    assert [h["epoch"] for h in result.history] == [1, 2, 3]
    # The learning rate jumps from the end of the 1-epoch schedule to the 3-epoch one's at that step.
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=3e-3)
    factor = _schedule(optimizer, 3 * per_epoch, 0.05, 0.02).lr_lambdas[0]
    run = tmp_path / "run"
    assert notes == [
        f"{run} continues after epoch 1 (step {per_epoch}) with train.epochs=3 instead of 1: the warm-up "
        f"and cosine decay now span 3 epochs, so the learning rate goes from {3e-3 * 0.02:.3g} to "
        f"{3e-3 * factor(per_epoch):.3g} and the weights will differ from a run started with train.epochs=3"
    ]
    changes = [{"epoch": 1, "batch": 0, "step": per_epoch, "from": 1, "to": 3}]
    assert load_checkpoint(result.last).checkpoint_meta["extra"]["epochs_changes"] == changes
    assert load_checkpoint(result.last).checkpoint_meta["extra"]["train_config"]["train"]["epochs"] == 3
    assert __import__("json").loads((run / "config.json").read_text())["train"]["epochs"] == 3
    # The run is now a 3-epoch run: resuming it as such trains nothing; fewer epochs are refused.
    assert train(longer, resume=True, progress=False).already_finished
    with pytest.raises(TrainingError) as info:
        train(check_config(_config(tmp_path, CNN, epochs=2)), resume=True, progress=False)
    assert str(info.value) == (
        f"{str(run)!r} has done 3 epochs, more than train.epochs=2: give train.epochs=3 or more, or leave "
        f"out train.epochs to keep its 3"
    )


def test_ctrl_c_says_where_the_run_stands_and_resume_continues(tmp_path, ctrl_c_at_step, capsys):
    from nnsweeper.cli import main

    config = _config(tmp_path, CNN, epochs=2, save_every=2)
    reference = dict(config, output={"dir": str(tmp_path / "reference")})
    train(check_config(reference), progress=False)
    per_epoch = _batches(config)

    ctrl_c_at_step(5)
    path = _toml(tmp_path / "c.toml", config)
    assert main(["train", "--config", str(path), "--quiet"]) == 130
    assert capsys.readouterr().err == (
        f"nnsweeper: interrupted in epoch 1 of 2 (batch 5 of {per_epoch}); resume.pt holds epoch 1 up to "
        f"batch 4 of {per_epoch}: run the same command with --resume to continue\n"
    )
    run = tmp_path / "run"
    assert (_state(run / "resume.pt")["epoch"], _state(run / "resume.pt")["batch"]) == (0, 4)
    assert main(["train", "--config", str(path), "--quiet", "--resume"]) == 0
    a, b = _state(run / "last.pt"), _state(tmp_path / "reference" / "last.pt")
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_sigterm_to_every_process_of_a_job_stops_a_run_with_loader_processes(tmp_path, ctrl_c_at_step,
                                                                                capsys):
    import multiprocessing
    import signal
    import subprocess
    import sys
    import time

    from nnsweeper.cli import main

    config = _config(tmp_path, CNN, epochs=2, num_workers=1)
    per_epoch = _batches(config)
    killed = []

    def kill_the_job():  # SIGTERM to the loader process, then to the main one
        # Sent by another process, as a batch system's is (torch's loader process exits
        # quietly on a SIGTERM from its main process, and dies of one from any other).
        # (A child of an earlier test may end meanwhile: the ones signalled are counted.)
        pids = [p.pid for p in multiprocessing.active_children()]
        script = ("import os, signal, sys\nn = 0\nfor pid in sys.argv[1:]:\n    try:\n"
                  "        os.kill(int(pid), signal.SIGTERM); n += 1\n    except ProcessLookupError:\n"
                  "        pass\nprint(n)")
        out = subprocess.run([sys.executable, "-c", script, *map(str, pids)], check=True,
                             capture_output=True, text=True).stdout
        killed.append(int(out))
        # Give a loader process killed by it the time to die (and the main process the
        # SIGCHLD that fails the run); one that ignores it is still alive after a second.
        for _ in range(50):
            if not {p.pid for p in multiprocessing.active_children()} & set(pids):
                break
            time.sleep(0.02)
        signal.raise_signal(signal.SIGTERM)

    ctrl_c_at_step(3, kill_the_job)
    assert main(["train", "--config", str(_toml(tmp_path / "c.toml", config)), "--quiet"]) == 130
    assert killed[0] >= 1  # a loader process was running, and was sent SIGTERM
    assert capsys.readouterr().err == (
        f"nnsweeper: interrupted in epoch 1 of 2 (batch 3 of {per_epoch}); nothing is saved yet "
        f"(resume.pt is first written at the end of epoch 1): run the same command to start again\n"
    )


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path, ctrl_c_at_step, capsys):
    import signal

    from nnsweeper.cli import main

    config = _config(tmp_path, CNN, epochs=2, save_every=2)
    reference = dict(config, output={"dir": str(tmp_path / "reference")})
    train(check_config(reference), progress=False)
    per_epoch = _batches(config)

    # The fifth step is a kill (SIGTERM, as a batch system sends).
    ctrl_c_at_step(5, lambda: signal.raise_signal(signal.SIGTERM))
    path = _toml(tmp_path / "c.toml", config)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert main(["train", "--config", str(path), "--quiet"]) == 130
    assert capsys.readouterr().err == (
        f"nnsweeper: interrupted in epoch 1 of 2 (batch 5 of {per_epoch}); resume.pt holds epoch 1 up to "
        f"batch 4 of {per_epoch}: run the same command with --resume to continue\n"
    )
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # given back
    ctrl_c_at_step(None)
    assert main(["train", "--config", str(path), "--quiet", "--resume"]) == 0
    a, b = _state(tmp_path / "run" / "last.pt"), _state(tmp_path / "reference" / "last.pt")
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_ctrl_c_waits_for_the_files_of_an_epochs_end(tmp_path, monkeypatch):
    import json
    import signal

    import nnsweeper.models
    from nnsweeper.training import TrainingInterrupted

    real = nnsweeper.models.save_checkpoint

    calls = []

    def save(path, model, **kw):
        calls.append(signal.getsignal(signal.SIGINT))
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C between the files
        return real(path, model, **kw)

    monkeypatch.setattr(nnsweeper.models, "save_checkpoint", save)
    # Ctrl-C as a terminal delivers it, whatever handler an earlier test of this process left.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(TrainingInterrupted) as info:
            train(check_config(_config(tmp_path, CNN, epochs=2)), progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert calls  # the files were written through the patched save
    assert str(info.value) == (
        "interrupted after epoch 1 of 2; resume.pt holds the end of epoch 1: run the same command with "
        "--resume to continue"
    )
    run = tmp_path / "run"
    assert _state(run / "resume.pt")["epoch"] == 1
    assert load_checkpoint(run / "last.pt").checkpoint_meta["extra"]["epoch"] == 1  # .pt and .json agree
    assert len(json.loads((run / "history.json").read_text())) == 1


def test_evaluate_model_notes_games_the_model_learned_from(tmp_path, capsys):
    import json

    from nnsweeper.cli import main

    result = train(check_config(_config(tmp_path, GNN, epochs=1)), progress=False)
    out = tmp_path / "eval" / "train"
    assert main(["evaluate-model", "--model", str(result.best), "--data", str(FIXTURE), "--split", "train",
                 "--out", str(out), "--max-batches", "1"]) == 0
    printed = capsys.readouterr()
    games = json.loads((FIXTURE / "manifest.json").read_text())["splits"]["train"]["games"]
    note = (f"split 'train' of {FIXTURE}: {games} of its {games} games are games {result.best} was trained "
            f"on (split 'train' of its dataset {FIXTURE}, seed 1): these figures are not held-out")
    assert printed.err.startswith(f"nnsweeper: note: {note}\n")  # then the progress bar
    assert printed.out.endswith(f"wrote {out}.json and {out}.png\n")
    saved = json.loads(out.with_suffix(".json").read_text())
    assert saved["held_out"] is False and saved["held_out_note"] == note


def test_held_out_compares_seeds_not_datasets():
    # A smaller dataset made with the same seed shares the first games of each stream.
    from nnsweeper.seeds import seed_stream
    from nnsweeper.training.scoring import _held_out

    key = (10, 10, 5, 0, 0)
    trained = [seed_stream(0, "train", key, 320), seed_stream(0, "val", key, 40)]
    model = MineModel.from_config(GNN)
    model.checkpoint_meta = {"extra": {"data_seed_streams": trained, "data_path": "data/mixed"}}
    small = {"seed_streams": [seed_stream(0, s, key, n) for s, n in (("train", 8), ("val", 1), ("test", 1))]}
    held, note = _held_out(model, small, "data/small", "train", "gnn")
    assert held is False and note == (
        "split 'train' of data/small: 8 of its 8 games are games gnn was trained on (split 'train' of its "
        "dataset data/mixed, seed 0): these figures are not held-out"
    )
    held, note = _held_out(model, small, "data/small", "val", "gnn")
    assert held is False and "1 of its 1 games are games gnn was validated on to choose its best" in note
    assert _held_out(model, small, "data/small", "test", "gnn") == (True, None)
    other = {"seed_streams": [seed_stream(1, "train", key, 8)]}
    assert _held_out(model, other, "data/other", "train", "gnn") == (True, None)
    model.checkpoint_meta = {"extra": {}}
    assert _held_out(model, small, "data/small", "train", "gnn") == (None, None)


# ------------------------------------------------------------------ TensorBoard
def _scalars(folder: Path) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_tensorboard_logs_every_step_and_each_epochs_validation_by_kind(tmp_path, capsys):
    pytest.importorskip("tensorboard")
    from nnsweeper.cli import main

    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN, epochs=2))
    assert main(["train", "--config", str(path)]) == 0
    run = tmp_path / "run"
    assert f"tensorboard --logdir {run}" in capsys.readouterr().out
    history = __import__("json").loads((run / "history.json").read_text())
    logged = _scalars(run / "tensorboard")
    steps = history[-1]["step"]
    assert [s for s, _ in logged["train/loss"]] == list(range(1, steps + 1))
    # An epoch's training loss is the mean of its steps' losses (float32 in the log).
    first = [v for s, v in logged["train/loss"] if s <= history[0]["step"]]
    assert sum(first) / len(first) == pytest.approx(history[0]["train_loss"], rel=1e-5)
    # The learning rate of step 1: the first of the warm-up (one step of max(1, 5% of them)).
    warm = max(1, round(0.05 * steps))
    assert logged["train/lr"][0] == (1, pytest.approx(3e-3 / warm, rel=1e-6))
    for h in history:
        at = h["step"]
        assert (at, pytest.approx(h["val_loss"], rel=1e-6)) in logged["val/loss"]
        ratio = dict(logged["val/frontier_log_loss_ratio"])[at]
        assert ratio == pytest.approx(h["val_frontier_log_loss_ratio"], rel=1e-6)
        # The decisions on the guess positions of the validation split (nnsweeper.decisions).
        assert h["val_decision_positions"] > 0
        pick = dict(logged["val/decision_lowest_risk"])[at]
        assert pick == pytest.approx(h["val_decision_lowest_risk"], rel=1e-6) and 0 <= pick <= 1
        assert dict(logged["epoch/examples"])[at] == h["examples"]
    # The fixture's validation split has two policies and two boards: figures by each.
    assert history[-1]["examples"] == 2 * (124 + 55 + 47)
    kinds = history[-1]["val_kinds"]
    assert set(kinds["policy"]) == {"csp", "explore"} and set(kinds["board"]) == {"6x6-m5", "9x9-m10"}
    ratio = kinds["policy"]["explore"]["frontier_log_loss_ratio"]
    logged_ratio = dict(logged["val_by_policy/frontier_log_loss_ratio/explore"])[steps]
    assert logged_ratio == pytest.approx(ratio, rel=1e-6)


def test_a_resumed_run_logs_each_step_once_with_the_values_of_one_never_stopped(tmp_path, ctrl_c_at_step):
    pytest.importorskip("tensorboard")
    from nnsweeper.training import TrainingInterrupted

    reference = _config(tmp_path, CNN, epochs=2)
    reference["output"] = {"dir": str(tmp_path / "reference")}
    train(check_config(reference), progress=False)
    ctrl_c_at_step(6)
    config = check_config(_config(tmp_path, CNN, epochs=2, save_every=2))
    with pytest.raises(TrainingInterrupted):
        train(config, progress=False)  # steps 1-5 logged, resume.pt holds step 4
    ctrl_c_at_step(None)
    # TensorBoard reads a folder's event files in name order, and a name starts with the
    # second it was made: a resume starts in a later second than the run it continues
    # (here in the same process, it waits for the next one).
    time.sleep(1.01 - time.time() % 1.0)
    train(config, resume=True, progress=False)
    a, b = _scalars(tmp_path / "reference" / "tensorboard"), _scalars(tmp_path / "run" / "tensorboard")
    assert a["train/loss"] == b["train/loss"] and a["val/loss"] == b["val/loss"]
    steps = [s for s, _ in b["train/loss"]]
    assert steps == sorted(set(steps)) == list(range(1, len(steps) + 1))


def test_the_tensorboard_line_comes_only_once_the_run_has_started(tmp_path, capsys):
    pytest.importorskip("tensorboard")
    from nnsweeper.cli import main

    # A run that cannot start (no dataset there) says why on stderr and nothing about logs.
    config = _config(tmp_path, CNN, epochs=1)
    missing = _toml(tmp_path / "m.toml", dict(config, data={"path": str(tmp_path / "nowhere")}))
    assert main(["train", "--config", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "nowhere" in err
    assert not (tmp_path / "run").exists()
    # A finished run resumed trains nothing: the one line that says so, no line about logs.
    path = _toml(tmp_path / "c.toml", config)
    assert main(["train", "--config", str(path), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["train", "--config", str(path), "--resume"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{tmp_path / 'run'} already finished its 1 epoch") and out.count("\n") == 1


def test_without_tensorboard_a_run_trains_and_says_why_it_logs_nothing(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tensorboard(name, *args, **kwargs):
        if name.startswith("torch.utils.tensorboard"):
            raise ImportError("no tensorboard")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    with pytest.warns(UserWarning, match=r"pip install 'nnsweeper\[tensorboard\]'"):
        result = train(check_config(_config(tmp_path, CNN, epochs=1)), progress=False)
    assert result.tensorboard is None and not (tmp_path / "run" / "tensorboard").exists()
    assert result.best.is_file()
    quiet = train(check_config(_config(tmp_path / "q", CNN, epochs=1, tensorboard=False)), progress=False)
    assert quiet.tensorboard is None


# ------------------------------------------------------------------ every unfinished run
def test_a_run_goes_on_with_other_loader_processes_and_threads(tmp_path, ctrl_c_at_step):
    # Where a run computes may change when it resumes (a run started on a CPU can go on on
    # a GPU): loader processes do not change the batches, so the weights are a never-stopped
    # run's (other torch threads may change the last bits of a sum, so they are only accepted).
    config = _config(tmp_path, CNN, epochs=2, save_every=2, augment=True)
    reference = dict(config, output={"dir": str(tmp_path / "reference")})
    train(check_config(reference), progress=False)
    ctrl_c_at_step(_batches(config) + 2)
    with pytest.raises(KeyboardInterrupt):
        train(check_config(config), progress=False)
    ctrl_c_at_step(None)
    elsewhere = _config(tmp_path, CNN, epochs=2, save_every=2, augment=True, num_workers=2)
    assert [h["epoch"] for h in train(check_config(elsewhere), resume=True, progress=False).history] == [1, 2]
    a, b = _state(tmp_path / "run" / "last.pt"), _state(tmp_path / "reference" / "last.pt")
    for k in a:
        assert torch.equal(a[k], b[k]), k
    threads = _config(tmp_path, CNN, epochs=2, save_every=2, augment=True, threads=2)
    assert train(check_config(threads), resume=True, progress=False).already_finished
    with pytest.raises(TrainingError, match="train.lr is 0.001, the run has 0.003"):
        train(check_config(_config(tmp_path, CNN, epochs=3, lr=1e-3, num_workers=2)), resume=True,
              progress=False)


def test_resume_continues_every_unfinished_run_under_a_folder(tmp_path, ctrl_c_at_step, capsys):
    import json

    from nnsweeper.cli import main
    from nnsweeper.training import TrainingInterrupted, run_states

    runs = tmp_path / "runs"
    done = check_config({**_config(tmp_path, CNN, epochs=1), "output": {"dir": str(runs / "done")}})
    train(done, progress=False)
    reference = check_config({**_config(tmp_path, GNN, epochs=2), "output": {"dir": str(tmp_path / "ref")}})
    train(reference, progress=False)
    stopped = check_config({**reference.to_dict(), "output": {"dir": str(runs / "a" / "stopped")},
                            "train": {**reference.train.to_dict(), "save_every": 2}})
    ctrl_c_at_step(4)
    with pytest.raises(TrainingInterrupted):
        train(stopped, progress=False)
    ctrl_c_at_step(None)
    fresh = runs / "fresh"  # stopped before its first save: only its config
    fresh.mkdir(parents=True)
    (fresh / "config.json").write_text(
        json.dumps({**done.to_dict(), "output": {"dir": str(fresh)}}))
    (runs / "notes").mkdir()
    (runs / "notes" / "config.json").write_text('{"another": "program"}')
    # Runs copied without their resume.pt: one finished, one whose config asks for an epoch more.
    import shutil

    shutil.copytree(tmp_path / "ref", runs / "moved-done")
    shutil.copytree(tmp_path / "ref", runs / "moved-part")
    for moved in ("moved-done", "moved-part"):
        (runs / moved / "resume.pt").unlink()
    recorded = json.loads((runs / "moved-part" / "config.json").read_text())
    recorded["train"]["epochs"] = 3
    (runs / "moved-part" / "config.json").write_text(json.dumps(recorded))
    part = runs / "moved-part"
    stuck = f"{part}: 2 of 3 epochs by its history.json, without resume.pt: it cannot be continued (a new " \
            "run may start from its weights, train.init)"

    assert main(["resume", str(runs), "--status"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{runs / 'a' / 'stopped'}: 0 of 2 epochs and 2 batches of the next",
        f"{runs / 'done'}: 1 of 1 epochs (finished)",
        f"{fresh}: 0 of 1 epochs",
        f"{runs / 'moved-done'}: 2 of 2 epochs by its history.json, without resume.pt (finished)",
        stuck,
    ]
    assert main(["resume", str(runs), "--quiet"]) == 0
    assert f"nnsweeper: note: left alone: {stuck}" in capsys.readouterr().err
    states = run_states(runs)
    assert [s.run_dir for s in states if not s.finished] == [part] and len(states) == 5
    assert not (part / "resume.pt").exists()
    a, b = _state(runs / "a" / "stopped" / "last.pt"), _state(tmp_path / "ref" / "last.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert _state(fresh / "last.pt").keys() == _state(runs / "done" / "last.pt").keys()
    assert main(["resume", str(runs), "--quiet"]) == 0  # nothing left: trains nothing
    assert main(["resume", str(tmp_path / "nowhere")]) == 2
    assert "is not a folder of training runs" in capsys.readouterr().err


# ------------------------------------------------------------ damaged run folders
@pytest.fixture(scope="module")
def two_stopped_runs(tmp_path_factory):
    """A folder of two runs, ``good`` and ``bad`` (the same CNN run), each stopped in its second
    of two epochs: what resume.pt holds is the end of epoch 1, next to last.pt and best.pt."""
    import nnsweeper.training.loop as loop
    from nnsweeper.training import TrainingInterrupted

    root = tmp_path_factory.mktemp("damaged")
    config = _config(root, CNN, epochs=2, tensorboard=False)
    config["output"]["dir"] = str(root / "runs" / "good")
    real = loop._step

    def step(run, net, batch, b):
        if run.epoch >= 1:
            raise KeyboardInterrupt
        return real(run, net, batch, b)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "_step", step)
        with pytest.raises(TrainingInterrupted):
            train(check_config(config), progress=False)
    shutil.copytree(root / "runs" / "good", root / "runs" / "bad")
    return root / "runs"


def _damaged_resume_line(run: Path, why: str) -> tuple[str, str]:
    """The start and end of the message of ``run``'s damaged resume.pt, around its ``why``."""
    return (f"{str(run / 'resume.pt')!r} is damaged ({why}",
            "): the run cannot be continued; its checkpoints last.pt and best.pt are intact: a new run can "
            f"start from their weights, with train.init={run / 'last.pt'} and another output.dir; remove "
            "resume.pt to have nnsweeper resume leave the run as its history.json says it stands")


def _save_state_without(path: Path, key: str, **changed):
    state = {k: v for k, v in _state(path).items() if k != key}
    torch.save({**state, **changed}, path)


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "torch.load cannot read it: "),
        (lambda p: p.write_bytes(b""), "it is empty"),
        (lambda p: p.write_bytes(random.Random(0).randbytes(4000)), "torch.load cannot read it: "),
        (lambda p: _save_state_without(p, "epoch"), "it lacks epoch"),
        (lambda p: _save_state_without(p, "", batch="7"), "its batch is not a count"),
        (lambda p: _save_state_without(p, "", history=5), "its history is not the JSON of the epochs' lines"),
        (lambda p: torch.save([1, 2], p), "it holds a list, not a resume state"),
    ],
    ids=["truncated", "empty", "random-bytes", "missing-key", "wrong-type", "history-not-json", "a-list"],
)
def test_a_damaged_resume_state_skips_its_run_and_the_others_go_on(two_stopped_runs, tmp_path, capsys,
                                                                    damage, why):
    from nnsweeper.cli import main
    from nnsweeper.models import load_checkpoint
    from nnsweeper.training import run_states

    runs = tmp_path / "runs"
    shutil.copytree(two_stopped_runs, runs)
    bad, good = runs / "bad", runs / "good"
    damage(bad / "resume.pt")
    kept = {p.name: p.read_bytes() for p in bad.iterdir()}
    head, tail = _damaged_resume_line(bad, why)

    # --status lists every run, the damaged one as such, and says so by its exit code.
    assert main(["resume", str(runs), "--status"]) == 2
    out, err = capsys.readouterr()
    assert err == ""
    listed, other = out.splitlines()
    assert listed.startswith(f"{bad}: damaged: {head}") and listed.endswith(tail)
    assert other == f"{good}: 1 of 2 epochs"

    # resume skips it with one line that names it, continues the other, and exits with 2.
    assert main(["resume", str(runs), "--quiet"]) == 2
    out, err = capsys.readouterr()
    skipped = [line for line in err.splitlines() if not line.startswith("nnsweeper: note: continuing ")]
    assert len(skipped) == 1 and out == ""
    assert skipped[0].startswith(f"nnsweeper: note: skipped {bad}: {head}") and skipped[0].endswith(tail)
    states = {s.run_dir: s for s in run_states(runs)}
    assert states[good].finished and states[good].epoch == 2
    assert [h["epoch"] for h in __import__("json").loads((good / "history.json").read_text())] == [1, 2]
    assert states[bad].damaged and not states[bad].finished
    assert {p.name: p.read_bytes() for p in bad.iterdir()} == kept  # nothing of it touched

    # Given alone: the error in one line, no traceback.
    assert main(["resume", str(bad), "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"nnsweeper: error: {head}") and err.endswith(tail + "\n")
    with pytest.raises(TrainingError, match="is damaged"):  # and train --resume says the same
        same = {**_config(tmp_path, CNN, epochs=2, tensorboard=False), "output": {"dir": str(bad)}}
        train(check_config(same), resume=True, progress=False)

    # The advice holds: its checkpoints load, and without resume.pt the run is left as it stands.
    assert load_checkpoint(bad / "last.pt").checkpoint_meta["extra"]["epoch"] == 1
    (bad / "resume.pt").unlink()
    assert main(["resume", str(runs), "--quiet"]) == 0
    assert capsys.readouterr().err == (
        f"nnsweeper: note: left alone: {bad}: 1 of 2 epochs by its history.json, without resume.pt: it "
        "cannot be continued (a new run may start from its weights, train.init)\n")


def test_damaged_history_config_and_weights_of_a_run(two_stopped_runs, tmp_path, capsys):
    import json

    from nnsweeper.cli import main
    from nnsweeper.training import resume_runs

    runs = tmp_path / "runs"
    shutil.copytree(two_stopped_runs, runs)
    bad, good = runs / "bad", runs / "good"
    shutil.copytree(good, runs / "weights")
    shutil.copytree(good, runs / "config")
    # Without resume.pt, a damaged history.json leaves where the run stands unknown.
    (bad / "resume.pt").unlink()
    (bad / "history.json").write_text('[{"epoch": 1, "val_')
    history = (f"{str(bad / 'history.json')!r} is damaged (not JSON: JSONDecodeError): the run cannot be "
               f"continued; its checkpoints last.pt and best.pt are intact: a new run can start from their "
               f"weights, with train.init={bad / 'last.pt'} and another output.dir")
    # A resume.pt whose weights do not fit the run's model.
    _save_state_without(runs / "weights" / "resume.pt", "", model={"stem.weight": torch.zeros(3)})
    # A damaged config.json next to an intact resume.pt, which records the config too.
    (runs / "config" / "config.json").write_text("")
    # Another program's config.json, alone in its folder: not a run.
    (runs / "notes").mkdir()
    (runs / "notes" / "config.json").write_text("{")

    assert main(["resume", str(runs), "--status"]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{bad}: damaged: {history}",
        f"{runs / 'config'}: 1 of 2 epochs; its config.json is damaged (it is empty): nnsweeper resume "
        "writes it again from the config its resume.pt records",
        f"{good}: 1 of 2 epochs",
        f"{runs / 'weights'}: 1 of 2 epochs",
    ]
    results = resume_runs(runs, progress=False, notify=lambda line: None)
    assert sorted(r.run_dir for r in results) == [runs / "config", good]
    assert [(path, why.split(" (")[0]) for path, why in results.skipped] == [
        (bad, f"{str(bad / 'history.json')!r} is damaged"),
        (runs / "weights", f"{str(runs / 'weights' / 'resume.pt')!r} is damaged"),
    ]
    assert "(it does not fit the run's model: RuntimeError)" in results.skipped[1][1]
    assert results.skipped[0][1] == history
    recorded = json.loads((runs / "config" / "config.json").read_text())
    assert recorded["train"]["epochs"] == 2 and recorded["output"]["dir"] == str(runs / "config")
    assert main(["resume", str(runs), "--status"]) == 2
    assert capsys.readouterr().out.splitlines()[1:3] == [f"{runs / 'config'}: 2 of 2 epochs (finished)",
                                                         f"{good}: 2 of 2 epochs (finished)"]
    assert main(["resume", str(bad), "--status"]) == 2  # a damaged run given alone is listed as such
    assert capsys.readouterr().out == f"{bad}: damaged: {history}\n"


def test_leftovers_of_a_killed_write_do_not_make_a_folder_not_empty(tmp_path, capsys, ctrl_c_at_step):
    from nnsweeper.cli import main

    # A run killed while it wrote a file (kill -9) leaves the temporary copy of atomic_path.
    run = tmp_path / "run"
    run.mkdir()
    (run / ".best.pt.k2_9xq0a.pt").write_bytes(b"half a checkpoint")
    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN, epochs=1, tensorboard=False))
    assert main(["train", "--config", str(path), "--quiet"]) == 0
    assert not (run / ".best.pt.k2_9xq0a.pt").exists() and (run / "best.pt").exists()
    # Anything else still makes the folder one not to train into.
    for other in ("notes.txt", ".best.pt.old"):
        shutil.rmtree(run)
        run.mkdir()
        (run / other).write_text("mine")
        capsys.readouterr()
        assert main(["train", "--config", str(path), "--quiet"]) == 2
        assert "is not empty; use --resume" in capsys.readouterr().err

    # A run stopped within its first epoch, whose resume.pt is all it saved (and a leftover of its
    # next write): once the damaged file is removed, as the message says, resume starts it again.
    shutil.rmtree(run)
    config = _config(tmp_path, CNN, epochs=1, tensorboard=False, save_every=2)
    from nnsweeper.training import TrainingInterrupted

    ctrl_c_at_step(3)
    with pytest.raises(TrainingInterrupted, match="resume.pt holds epoch 1 up to batch 2"):
        train(check_config(config), progress=False)
    ctrl_c_at_step(None)
    (run / "resume.pt").write_bytes((run / "resume.pt").read_bytes()[:100])
    (run / ".resume.pt.a8c3_f1z.pt").write_bytes(b"")
    assert main(["resume", str(run), "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"nnsweeper: error: {str(run / 'resume.pt')!r} is damaged (torch.load cannot read it: "
        f"{type(_load_error(run / 'resume.pt')).__name__}): the run cannot be continued, and nothing else of "
        f"it is saved yet: remove resume.pt and nnsweeper resume {run} starts it again\n")
    (run / "resume.pt").unlink()
    assert main(["resume", str(run), "--quiet"]) == 0
    assert [h["epoch"] for h in __import__("json").loads((run / "history.json").read_text())] == [1]
    assert sorted(p.name for p in run.iterdir()) == ["best.json", "best.pt", "config.json", "history.json",
                                                     "last.json", "last.pt", "resume.pt"]


def _load_error(path: Path) -> Exception:
    try:
        torch.load(path, weights_only=True)
    except Exception as exc:
        return exc
    raise AssertionError(f"{path} loads")


def test_keep_every_keeps_the_weights_of_those_epochs(tmp_path):
    config = check_config(_config(tmp_path, GNN, epochs=3, keep_every=2, tensorboard=False))
    result = train(config, progress=False)
    kept = sorted(p.name for p in (result.run_dir / "checkpoints").glob("*.pt"))
    assert kept == ["epoch-0002.pt"]
    a = _state(result.run_dir / "checkpoints" / "epoch-0002.pt")
    meta = __import__("json").loads((result.run_dir / "checkpoints" / "epoch-0002.json").read_text())
    assert meta["extra"]["epoch"] == 2 and meta["extra"]["step"] == result.history[1]["step"]
    assert not all(torch.equal(a[k], v) for k, v in _state(result.last).items())  # epoch 3 moved on


def test_play_readiness_says_when_a_pure_solver_should_not_play_alone():
    from nnsweeper.training import play_readiness

    def result(safe, mine):
        return {"frontier": {"safe_below_threshold": safe, "mine_above_threshold": mine}}

    assert play_readiness(result(0.999, 0.996), "gnn") == (
        "ready to play alone (proven-safe frontier cells given P < 0.02: 99.9%, proven mines given P > 0.98: "
        "99.6%; at least 99.5% each)")
    line = play_readiness({**result(0.994, 1.0), "model": {"name": "gnn"}}, "gnn")  # the bundled gnn
    assert line.startswith("not ready to play alone (proven-safe frontier cells given P < 0.02: 99.4%,")
    assert "; play it as hybrid-gnn (logic first), or train it longer" in line
    # A checkpoint: hybrid-gnn would play the bundled weights; --model NAME=ARCH:PATH plays it as hybrid-NAME.
    line = play_readiness({**result(0.994, 1.0), "model": {"name": "runs/my gnn/best.pt"}}, "gnn")
    assert ("; play it with logic first: nnsweeper eval --model mygnn=gnn:'runs/my gnn/best.pt' "
            "--solvers csp,hybrid-mygnn (a checkpoint given as --model NAME=gnn:PATH plays as hybrid-NAME; "
            "hybrid-gnn plays the bundled gnn), or train") in line
    assert "play it as hybrid-gnn" not in line
    line = play_readiness(result(0.994, 1.0), "cnn")  # no model named: both ways
    assert ("as hybrid-cnn for the bundled cnn, as hybrid-NAME for a checkpoint given to nnsweeper eval "
            "as --model NAME=cnn:PATH") in line
    assert play_readiness(result(None, 0.9), "cnn").startswith(
        "not ready to play alone (proven mines given P > 0.98: 90.0%; below 99.5%)")
    assert play_readiness(result(None, None), "cnn") == (
        "ready to play alone (no proven frontier cells to judge by; at least 99.5% each)")


def test_init_starts_a_run_from_a_checkpoints_weights(tmp_path):
    import json

    from nnsweeper.training.loop import _initial_weights

    # The bundled weights go on under the configs that trained them, at the size their checkpoint
    # records (a run of train/decisions.py gave the CNN cnn-l's).
    root = FIXTURE.parents[2]
    for arch, parameters in (("gnn", 689_026), ("cnn", 791_617)):
        size = json.loads((root / "nnsweeper" / "models" / "weights" / f"{arch}.json").read_text())["config"]
        model = [f"model.{k}={json.dumps(v)}" for k, v in size.items() if k != "arch"]
        config = load_config(root / "train" / f"{arch}_broad.toml", [f"train.init={arch}", *model])
        assert _initial_weights(config).n_parameters == parameters

    first = train(check_config(_config(tmp_path / "a", GNN, epochs=2, tensorboard=False)), progress=False)
    # A fine-tuning run whose one step can hardly move a weight (AdamW moves each by about lr).
    tune = _config(tmp_path / "b", GNN, epochs=1, max_batches=1, lr=1e-12, tensorboard=False,
                   init=str(first.last))
    result = train(check_config(tune), progress=False)
    a, b = _state(first.last), _state(result.last)
    for k in a:
        assert torch.allclose(a[k], b[k], rtol=0, atol=1e-8), k
    fresh = train(check_config(dict(tune, train={**tune["train"], "init": None},
                                    output={"dir": str(tmp_path / "fresh")})), progress=False)
    c = _state(fresh.last)  # the same step from fresh weights lands elsewhere
    assert not any(torch.allclose(a[k], c[k], rtol=0, atol=1e-3) for k in a if a[k].numel() > 1)
    parent = json.loads(first.last.with_suffix(".json").read_text())
    record = load_checkpoint(result.last).checkpoint_meta["extra"]["init"]
    assert record == {"init": str(first.last), "sha256": parent["sha256"], "epoch": 2,
                      "examples": first.history[-1]["examples"], "steps": first.history[-1]["step"],
                      "seconds": pytest.approx(sum(h["seconds"] for h in first.history)),
                      "streams_merged": True}
    # The run's own counters start at zero: its compute is its own, the parent's is in "init".
    assert result.history[-1]["examples"] == 16 and result.history[-1]["step"] == 1


def test_a_fine_tuned_checkpoint_carries_its_parents_training_seeds(tmp_path):
    import json

    import numpy as np

    from nnsweeper.datasets import load_manifest
    from nnsweeper.seeds import manifest_seeds

    first = train(check_config(_config(tmp_path / "a", GNN, epochs=1, max_batches=1, tensorboard=False)),
                  progress=False)
    own = load_manifest(FIXTURE)["seed_streams"]
    # The parent learned from games of another dataset as well (entropy 7): its record says so.
    meta_path = first.last.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    foreign = {**own[0], "entropy": 7, "split": "train"}
    empty = {**own[0], "entropy": 8, "split": "val", "games": 0}  # a stream of no games: no seed
    meta["extra"]["data_seed_streams"] = [*own, foreign, empty]
    meta_path.write_text(json.dumps(meta))
    tune = _config(tmp_path / "b", GNN, epochs=1, max_batches=1, tensorboard=False, init=str(first.last))
    result = train(check_config(tune), progress=False)
    streams = load_checkpoint(result.last).checkpoint_meta["extra"]["data_seed_streams"]
    # Its own first, the parent's after, none twice; a stream of no games names no seed: left out.
    assert streams == [*own, foreign]
    full = manifest_seeds({"seed_streams": [*own, foreign, empty]})
    kept = manifest_seeds({"seed_streams": streams})
    assert all(np.array_equal(kept.get(k, np.empty(0, np.int64)), v) for k, v in full.items())
    # In the description each stream is one line (a plan's checkpoint carries thousands).
    text = result.last.with_suffix(".json").read_text()
    assert sum(line.strip().startswith('{"split": ') for line in text.splitlines()) == len(streams)
    assert json.loads(text)["extra"]["data_seed_streams"] == streams
    learned = manifest_seeds({"seed_streams": streams}, ["train"])["train"]
    parents = manifest_seeds({"seed_streams": [foreign]}, ["train"])["train"]
    assert np.isin(parents, learned).all()
    # A run from fresh weights carries its dataset's streams only.
    fresh = train(check_config(_config(tmp_path / "c", GNN, epochs=1, max_batches=1, tensorboard=False)),
                  progress=False)
    assert load_checkpoint(fresh.last).checkpoint_meta["extra"]["data_seed_streams"] == own


@pytest.mark.parametrize(
    ("init", "model", "words"),
    [
        ("nowhere.pt", GNN, "train.init='nowhere.pt': 'nowhere.pt' is neither a bundled model name"),
        ("gnn", GNN, "train.init='gnn' holds another model than [model]: hidden=64 (here 16)"),
        ("cnn", GNN, "train.init='cnn' holds another model than [model]: arch='cnn' (here 'gnn')"),
    ],
)
def test_init_refuses_what_it_cannot_start_from(tmp_path, init, model, words):
    with pytest.raises(TrainingError) as err:
        train(check_config(_config(tmp_path, model, init=init, tensorboard=False)), progress=False)
    assert words in str(err.value)
    assert not (tmp_path / "run").exists()  # refused before the run folder is made


# ------------------------------------------------ one process a folder, failed writes
def test_a_folder_another_training_holds_is_refused_before_anything_is_written(tmp_path, capsys):
    from filelock import FileLock

    from nnsweeper.cli import main
    from nnsweeper.training.folder import LOCK_NAME

    run = tmp_path / "run"
    run.mkdir()
    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN, epochs=1, tensorboard=False))
    held = FileLock(os.fspath(run / LOCK_NAME))
    held.acquire()
    try:
        with pytest.raises(TrainingError, match=f"another process is writing training run '{run}'; wait "
                                                r"for it to end \(a killed run releases it, and --resume"):
            train(check_config(_config(tmp_path, CNN, epochs=1)), progress=False)
        for resume in ([], ["--resume"]):
            assert main(["train", "--config", str(path), "--quiet", *resume]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "another process is writing training run" in err
        assert sorted(p.name for p in run.iterdir()) == [LOCK_NAME]  # nothing else was written
    finally:
        held.release()
    assert main(["train", "--config", str(path), "--quiet"]) == 0
    assert not (run / LOCK_NAME).exists()  # the lock goes with the run that held it
    # A refused start leaves no folder of its own behind.
    with pytest.raises(TrainingError, match="nothing to resume"):
        train(check_config(_config(tmp_path / "nowhere", CNN)), resume=True, progress=False)
    assert not (tmp_path / "nowhere").exists()


def test_two_trainings_started_together_into_one_folder_one_is_refused(tmp_path):
    # Each process imports everything, says it is ready and waits for the same go: then both start
    # at once, with different learning rates, into one output.dir.
    go = tmp_path / "go"
    script = ("import pathlib, sys, time\n"
              "from nnsweeper.cli import main\n"
              "import nnsweeper.training, nnsweeper.models, nnsweeper.datasets.loaders\n"
              "print('ready', flush=True)\n"
              "while not pathlib.Path(sys.argv[1]).exists():\n"
              "    time.sleep(0.001)\n"
              "sys.exit(main(sys.argv[2:]))\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = []
    for lr in (1e-3, 3e-3):
        path = _toml(tmp_path / f"lr{lr}.toml", _config(tmp_path, CNN, epochs=1, lr=lr, tensorboard=False))
        procs.append(subprocess.Popen([sys.executable, "-c", script, str(go), "train", "--config", str(path),
                                       "--quiet"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready"
        go.touch()
        outs = [proc.communicate(timeout=300) for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
    codes = sorted(proc.returncode for proc in procs)
    assert codes == [0, 2], outs
    refused = next(err for proc, (_, err) in zip(procs, outs, strict=True) if proc.returncode == 2)
    assert refused.count("\n") == 1 and "another process is writing training run" in refused, refused
    winner = [1e-3, 3e-3][[proc.returncode for proc in procs].index(0)]
    assert json.loads((tmp_path / "run" / "config.json").read_text())["train"]["lr"] == winner


def _history_without_times(run: Path) -> list[dict]:
    wall = ("seconds", "examples_per_second")
    return [{k: v for k, v in line.items() if k not in wall}
            for line in json.loads((run / "history.json").read_text())]


@pytest.mark.parametrize("model", [CNN, GNN], ids=["cnn", "gnn"])
def test_a_training_killed_mid_epoch_resumes_to_the_history_of_one_never_stopped(tmp_path, model):
    config = _config(tmp_path, model, epochs=2, save_every=3, tensorboard=False)
    reference = train(check_config(dict(config, output={"dir": str(tmp_path / "reference")})), progress=False)
    # The run kills itself (SIGKILL, no clean-up) at its 8th step: resume.pt holds epoch 1 up to batch 6.
    script = ("import os, signal, sys\n"
              "import nnsweeper.training.loop as loop\n"
              "real, calls = loop._step, [0]\n"
              "def step(*args):\n"
              "    calls[0] += 1\n"
              "    if calls[0] == 8:\n"
              "        os.kill(os.getpid(), signal.SIGKILL)\n"
              "    return real(*args)\n"
              "loop._step = step\n"
              "from nnsweeper.cli import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    path = _toml(tmp_path / "c.toml", config)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", script, "train", "--config", str(path), "--quiet"], env=env,
                          timeout=300)
    assert proc.returncode == -signal.SIGKILL
    run = tmp_path / "run"
    state = _state(run / "resume.pt")
    assert (state["epoch"], state["batch"]) == (0, 6) and not (run / "history.json").exists()
    from nnsweeper.cli import main

    assert main(["train", "--config", str(path), "--resume", "--quiet"]) == 0
    assert _history_without_times(run) == _history_without_times(reference.run_dir)
    a, b = _state(run / "last.pt"), _state(reference.last)
    assert all(torch.equal(a[k], b[k]) for k in b) and a.keys() == b.keys()


def test_a_write_past_a_file_size_limit_stops_with_one_line_and_starts_again(tmp_path):
    import resource

    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN, epochs=1))
    cmd = [sys.executable, "-m", "nnsweeper", "train", "--config", str(path), "--quiet"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def limit():  # the checkpoint (about 40 kB) does not fit; config.json and the logs do
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, resource.RLIM_INFINITY))

    proc = subprocess.run(cmd, env=env, preexec_fn=limit, capture_output=True, text=True, timeout=300)
    run = tmp_path / "run"
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"nnsweeper: error: stopped ([Errno 27] cannot write "
                                  f"{str(run / 'last.pt')!r}: File too large) after epoch 1 of 1; nothing is "
                                  "saved yet"), proc.stderr
    assert proc.stderr.endswith(": run the same command to start again\n")
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "tensorboard"]
    from nnsweeper.cli import main

    assert main(["train", "--config", str(path), "--quiet"]) == 0  # as the message says
    assert [h["epoch"] for h in json.loads((run / "history.json").read_text())] == [1]


def test_a_failed_write_after_a_save_says_resume_and_resume_ends_as_one_never_stopped(tmp_path, monkeypatch):
    import errno

    import nnsweeper.models

    config = _config(tmp_path, GNN, epochs=2, tensorboard=False)
    reference = train(check_config(dict(config, output={"dir": str(tmp_path / "reference")})), progress=False)
    real, calls = nnsweeper.models.save_checkpoint, []

    def full_disk_at_the_second_epochs_end(path, model, **kw):
        calls.append(path)
        if len(calls) > 2:  # epoch 1 writes last.pt and best.pt
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, model, **kw)

    monkeypatch.setattr(nnsweeper.models, "save_checkpoint", full_disk_at_the_second_epochs_end)
    run = tmp_path / "run"
    with pytest.raises(TrainingError, match=r"^stopped \(\[Errno 28\] No space left on device\) after "
                                            r"epoch 2 of 2; resume.pt holds the end of epoch 1: run the same "
                                            r"command with --resume to continue$"):
        train(check_config(config), progress=False)
    monkeypatch.undo()
    train(check_config(config), resume=True, progress=False)
    assert _history_without_times(run) == _history_without_times(reference.run_dir)
    a, b = _state(run / "best.pt"), _state(reference.best)
    assert all(torch.equal(a[k], b[k]) for k in b)


def test_the_tensorboard_logs_failing_to_write_stop_the_run_with_one_line(tmp_path, monkeypatch, capfd):
    import errno

    from tensorboard.summary.writer import record_writer

    from nnsweeper.cli import main

    written = []

    def fails_after_a_few(self, data):
        written.append(data)
        if len(written) > 5:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(record_writer.RecordWriter, "write", fails_after_a_few)
    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN, epochs=1, tensorboard=True))
    capfd.readouterr()
    assert main(["train", "--config", str(path), "--quiet"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1, err  # no traceback of tensorboard's writer thread
    logs = tmp_path / "run" / "tensorboard"
    assert (f"stopped ([Errno 28] cannot write the TensorBoard logs in {str(logs)!r}: No space left on "
            "device) in epoch 1 of 1") in err, err


def _pdeathsig_after_loader_setup(conn) -> None:
    import ctypes

    from nnsweeper.training.loop import _loader_process_setup

    _loader_process_setup(0)
    value = ctypes.c_int(-1)
    ctypes.CDLL(None, use_errno=True).prctl(2, ctypes.byref(value))  # PR_GET_PDEATHSIG
    conn.send((value.value, signal.getsignal(signal.SIGTERM) == signal.SIG_IGN))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_loader_process_is_killed_with_its_training_however_the_training_ends():
    # A loader process, set up as a run sets up its own (a forked process), asks the kernel to kill
    # it when its parent dies (SIGKILL of the training leaves none behind), and leaves SIGTERM to
    # the main process.
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_pdeathsig_after_loader_setup, args=(there,))
    child.start()
    try:
        assert here.poll(60)
        assert here.recv() == (signal.SIGKILL, True)
    finally:
        child.join(10)


def test_a_model_too_big_is_refused_before_any_of_it_is_allocated(tmp_path, monkeypatch, capsys):
    from nnsweeper.cli import main
    from nnsweeper.models import base

    with pytest.raises(base.ModelError, match=r"arch='gnn', hidden=1000000, .* has 63,000,144,000,002 "
                                              r"parameters, more than the 2,147,483,648 a model may have"):
        MineModel.from_config({"arch": "gnn", "hidden": 1_000_000})
    path = _toml(tmp_path / "c.toml", _config(tmp_path, GNN, epochs=1))
    assert main(["train", "--config", str(path), "--quiet", "model.hidden=1000000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[model]: the model arch='gnn', hidden=1000000" in err, err
    assert not (tmp_path / "run").exists()
    # Within the bound, but more than this machine holds: 1 GiB here.
    monkeypatch.setattr(base, "_machine_memory", lambda: 2**30)
    wide = {"arch": "gnn", "hidden": 1200, "layers": 6}
    parameters = base.check_model_size(wide)  # 4 bytes each fit: it may be held
    assert 2**30 / 16 < parameters < 2**30 / 4
    with pytest.raises(TrainingError, match=rf"\[model\]: the model .* has {parameters:,} parameters: to "
                                            r"train them takes [\d.]+ GiB, more than this machine's 1.0 GiB"):
        train(check_config(_config(tmp_path, wide, epochs=1)), progress=False)


def test_bad_settings_are_refused_before_torch_is_imported(tmp_path):
    path = _toml(tmp_path / "c.toml", _config(tmp_path, CNN, epochs=1))
    script = ("import sys\n"
              "from nnsweeper.cli import main\n"
              "code = main(sys.argv[1:])\n"
              "print('torch' in sys.modules)\n"
              "sys.exit(code)\n")
    cases = [["train", "--config", str(path), setting]
             for setting in ("train.lr=-1", "train.batch_size=0", "output.dir=''", "train.device=tpu")]
    from importlib import metadata

    if metadata.version("torch").endswith("+cpu"):  # CUDA asked of a CPU build of torch
        cases += [["train", "--config", str(path), "train.device=cuda"],
                  ["evaluate-model", "--model", "cnn", "--data", str(FIXTURE), "--out", str(tmp_path / "e"),
                   "--device", "cuda"],
                  ["eval", "--solvers", "cnn", "--board", "5x5:3", "--device", "cuda:0", "--out",
                   str(tmp_path / "v")]]
    for argv in cases:
        proc = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (argv, proc.stderr)
        assert proc.stdout == "False\n", argv  # refused without importing torch
    assert not (tmp_path / "run").exists()


def test_a_damaged_validation_or_test_shard_is_named_before_the_first_batch(tmp_path, monkeypatch):
    import nnsweeper.training.loop as loop
    from nnsweeper.errors import ChecksumError
    from nnsweeper.models import load_model
    from nnsweeper.training import evaluate_model

    data = tmp_path / "data"
    shutil.copytree(FIXTURE, data)
    manifest = json.loads((data / "manifest.json").read_text())
    for split in ("val", "test"):
        entry = next(e for e in manifest["shards"] if e["split"] == split)
        shard = data / entry["file"]
        original = shard.read_bytes()
        shard.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        steps = []
        monkeypatch.setattr(loop, "_step", lambda *args, steps=steps: steps.append(1) or 0.0)
        config = dict(_config(tmp_path, CNN, epochs=1), data={"path": str(data), "val_split": "val"})
        if split == "val":
            with pytest.raises(ChecksumError, match=f"shard '{shard}' is damaged"):
                train(check_config(config), progress=False)
            assert not steps and not (tmp_path / "run").exists()
        else:
            batches = []
            model = load_model("cnn")
            monkeypatch.setattr(model, "outputs", lambda *args, batches=batches, **kw: batches.append(1))
            with pytest.raises(ChecksumError, match=f"shard '{shard}' is damaged"):
                evaluate_model(model, data, "test", progress=False)
            assert not batches
        shard.write_bytes(original)
