"""Training the state-value network on a value dataset.

:func:`train_value` reads a TOML config (or a dict) with the sections::

    [data]    path = "data/values"                       # a value dataset (generate_values)
    [model]   hidden = 64, layers = 6, conv = "sage"      # ValueConfig
    [train]   epochs, batch_size, lr, weight_decay, seed, threads
    [output]  dir = "runs/value_gnn"

The inputs of every position (its exact analysis) are computed once, in parallel
over shards; batches hold positions of one board size, drawn anew each epoch from a
generator seeded by ``seed`` and the epoch. The loss is the cross-entropy between
the predicted P(win) and the position's value label (a probability: the expectation
of the label is the policy's chance to win, so the loss is least at it). The model
with the lowest validation loss is written to ``dir/value-gnn.pt`` with
``dir/metrics.json``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from nnsweeper.configs import read_toml
from nnsweeper.datasets.values import load_value_manifest, read_value_split
from nnsweeper.engine import analyze
from nnsweeper.errors import DatasetError, check_int
from nnsweeper.fileio import file_sha256, write_text_atomic
from nnsweeper.models.value import ValueConfig, ValueNet, make_value_net, save_value_model
from nnsweeper.parallel import imap

__all__ = ["TRAIN_DEFAULTS", "load_value_config", "prepare_positions", "train_value", "value_metrics"]

#: The ``[train]`` keys and their defaults.
TRAIN_DEFAULTS = {"epochs": 8, "batch_size": 128, "lr": 2e-3, "weight_decay": 1e-4, "seed": 0, "threads": 2,
                  "n_jobs": 2}


def load_value_config(config) -> dict:
    """A value training config from a TOML path or a dict, checked and completed."""
    if not isinstance(config, Mapping):
        config = read_toml(config, "value training config", DatasetError)
    unknown = set(config) - {"data", "model", "train", "output"}
    if unknown:
        raise DatasetError(f"unknown section(s) {sorted(unknown)} in a value training config; the "
                           f"sections are data, model, train, output")
    data = dict(config.get("data", {}))
    if "path" not in data:
        raise DatasetError("a value training config needs [data] path (a value dataset folder)")
    model = asdict_checked(config.get("model", {}))
    train = {**TRAIN_DEFAULTS}
    for k, v in dict(config.get("train", {})).items():
        if k not in TRAIN_DEFAULTS:
            raise DatasetError(f"unknown [train] key {k!r}; the keys are {', '.join(TRAIN_DEFAULTS)}")
        train[k] = v
    for k in ("epochs", "batch_size", "seed", "threads", "n_jobs"):
        check_int(k, train[k], 0 if k == "seed" else 1, DatasetError)
    for k in ("lr", "weight_decay"):
        if isinstance(train[k], bool) or not isinstance(train[k], int | float) or not 0 <= train[k] < 10:
            raise DatasetError(f"[train] {k} must be a number in [0, 10); got {train[k]!r}")
    output = {"dir": "runs/value_gnn", **dict(config.get("output", {}))}
    return {"data": data, "model": model, "train": train, "output": output}


def asdict_checked(model: Mapping) -> dict:
    try:
        return ValueConfig(**dict(model)).__dict__.copy()
    except TypeError as exc:
        raise DatasetError(f"bad [model] section of a value training config: {exc}") from None


def _analyse_shard(arrays: dict) -> dict:
    torch.set_num_threads(1)
    probs, logs = [], []
    for g, t, f in zip(arrays["grid"], arrays["total_mines"], arrays["flags"], strict=True):
        a = analyze(g, int(t), f)
        probs.append(a.probabilities.astype(np.float32))
        logs.append(a.log_layouts)
    return {**arrays, "prob": np.stack(probs), "log_layouts": np.array(logs, dtype=np.float64)}


def prepare_positions(folder, split: str, n_jobs: int = 1) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """Every position of a split with its exact analysis, grouped by board shape."""
    shards = read_value_split(folder, split)
    by_shape: dict[tuple[int, int], list[dict]] = {}
    for arrays in imap(_analyse_shard, [(s,) for s in shards], n_jobs):
        by_shape.setdefault(arrays["grid"].shape[1:], []).append(arrays)
    return {shape: {k: np.concatenate([a[k] for a in parts]) for k in parts[0]}
            for shape, parts in sorted(by_shape.items())}


def _batches(positions: dict, batch_size: int, rng: np.random.Generator | None):
    out = []
    for shape, arrays in positions.items():
        n = len(arrays["value"])
        order = rng.permutation(n) if rng is not None else np.arange(n)
        out += [(shape, order[k:k + batch_size]) for k in range(0, n, batch_size)]
    if rng is not None:
        out = [out[k] for k in rng.permutation(len(out))]
    return out


def _inputs(model: ValueNet, arrays: dict, rows: np.ndarray):
    return model.inputs(arrays["grid"][rows], arrays["total_mines"][rows], arrays["flags"][rows],
                        arrays["prob"][rows], arrays["log_layouts"][rows])


@torch.no_grad()
def predict_positions(model: ValueNet, positions: dict, batch_size: int = 256) -> dict:
    """The model's P(win) (float64) of every prepared position, per board shape, in their order."""
    model.eval()
    return {shape: np.concatenate([torch.sigmoid(model(_inputs(model, arrays, idx)).double()).numpy()
                                   for _, idx in _batches({shape: arrays}, batch_size, None)])
            for shape, arrays in positions.items()}


def value_metrics(model: ValueNet, positions: dict, batch_size: int = 256, *,
                  predictions: dict | None = None) -> dict:
    """Loss and errors of ``model`` on prepared positions, overall and per board size.

    ``bce``: cross-entropy against the value labels; ``mse``: squared error against
    them; ``mse_mean``: the squared error of predicting each board size's mean value
    (what the model must beat); ``brier``: squared error against the one-bit
    ``survived`` labels. ``predictions`` (from :func:`predict_positions`) spares
    running the model again.
    """
    if predictions is None:
        predictions = predict_positions(model, positions, batch_size)
    rows = {}
    for shape, arrays in positions.items():
        p = predictions[shape]
        v = arrays["value"]
        eps = 1e-7
        q = np.clip(p, eps, 1 - eps)
        rows[f"{shape[0]}x{shape[1]}"] = {
            "positions": int(v.size),
            "bce": float(-np.mean(v * np.log(q) + (1 - v) * np.log(1 - q))),
            "mse": float(np.mean((p - v) ** 2)),
            "mse_mean": float(np.var(v)),
            "brier": float(np.mean((p - arrays["survived"]) ** 2)),
            "mean_value": float(v.mean()),
            "mean_prediction": float(p.mean()),
        }
    n = sum(r["positions"] for r in rows.values())
    total = {k: sum(r[k] * r["positions"] for r in rows.values()) / n
             for k in ("bce", "mse", "mse_mean", "brier", "mean_value", "mean_prediction")}
    return {"positions": n, **total, "boards": rows}


def train_value(config, *, progress: bool = False) -> dict:
    """Train a value network as the config says; returns the metrics (also written to the output dir)."""
    cfg = load_value_config(config)
    tr = cfg["train"]
    torch.set_num_threads(tr["threads"])
    torch.manual_seed(tr["seed"])
    folder = cfg["data"]["path"]
    manifest = load_value_manifest(folder)
    t0 = time.perf_counter()
    train = prepare_positions(folder, "train", tr["n_jobs"])
    val = prepare_positions(folder, "val", tr["n_jobs"])
    prep = time.perf_counter() - t0
    if not train or not val:
        raise DatasetError(f"value dataset {str(folder)!r} needs positions in its train and val splits")
    model = make_value_net(cfg["model"])
    # What the saved model learned from: the dataset's checksum, and its seed streams so
    # that evaluations refuse its games (ValueSolver.training_seeds).
    about = {"dataset": os.fspath(folder),
             "data_manifest_sha256": file_sha256(Path(folder) / "manifest.json"),
             "data_seed_streams": manifest["seed_streams"], "train_config": cfg}
    opt = torch.optim.AdamW(model.parameters(), lr=tr["lr"], weight_decay=tr["weight_decay"])
    steps = tr["epochs"] * len(_batches(train, tr["batch_size"], None))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=tr["lr"], total_steps=steps, pct_start=0.1)
    out = Path(cfg["output"]["dir"])
    weights = out / f"value-{model.config['arch']}.pt"
    out.mkdir(parents=True, exist_ok=True)
    best, history = None, []
    from tqdm.auto import tqdm

    for epoch in range(tr["epochs"]):
        model.train()
        rng = np.random.default_rng([tr["seed"], epoch])
        t1, losses = time.perf_counter(), []
        for shape, idx in tqdm(_batches(train, tr["batch_size"], rng), disable=not progress,
                               desc=f"epoch {epoch + 1}/{tr['epochs']}", unit="batch"):
            arrays = train[shape]
            target = torch.from_numpy(arrays["value"][idx].astype(np.float32))
            logits = model(_inputs(model, arrays, idx))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
        m = value_metrics(model, val)
        history.append({"epoch": epoch + 1, "train_bce": float(np.mean(losses)), "val": m,
                        "seconds": time.perf_counter() - t1})
        if best is None or m["bce"] < best["bce"]:
            best = {**m, "epoch": epoch + 1}
            save_value_model(weights, model, extra={**about, "epoch": epoch + 1})
        if progress:
            print(f"epoch {epoch + 1}: train bce {np.mean(losses):.4f}, val bce {m['bce']:.4f}, "
                  f"mse {m['mse']:.5f} (per-board mean: {m['mse_mean']:.5f})")
    metrics = {"config": cfg, "dataset_splits": manifest["splits"], "prepare_seconds": prep,
               "train_seconds": time.perf_counter() - t0, "best": best, "history": history,
               "parameters": model.n_parameters}
    write_text_atomic(out / "metrics.json", json.dumps(metrics, indent=1, default=str) + "\n")
    return metrics
