"""Scoring a model on a dataset: the loss of the loop, validation, :func:`evaluate_model`.

:func:`validate` scores a model after each epoch (per configuration of the validation
split, pooled and by kind); :func:`evaluate_model` scores it on a whole split with every
figure of :func:`nnsweeper.metrics.evaluate_predictions`, per configuration and pooled
by each kind of :data:`KIND_FIELDS`, and says whether the split is held out from the
model's training games.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping

import numpy as np
import torch

from nnsweeper.training_config import TrainingError

__all__ = ["KIND_FIELDS", "MARGIN_P", "READY_SHARE", "bce_loss", "evaluate_model", "is_value_model",
           "play_readiness", "split_configurations", "to_device", "validate"]

#: The share of proven-safe cells given P < 0.02 and of proven mines given P > 0.98 (frontier
#: cells) below which a model's pure solver is told not to play alone (:func:`play_readiness`).
READY_SHARE = 0.995


def to_device(batch, device: torch.device):
    if isinstance(batch, dict):
        return {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}
    return batch.to(device)


#: The band a proven cell's prediction should stay inside, for ``train.certain_margin``: P <= 0.01
#: where the engine proves the cell safe, P >= 0.99 where it proves a mine (half the distance of the
#: 0.02 / 0.98 thresholds the safe and mine shares count against).
MARGIN_P = 0.01


def bce_loss(out: dict, target: str, certain_weight: float = 1.0,
             certain_margin: float = 0.0) -> torch.Tensor:
    """Weighted mean binary cross-entropy of the logits against the target.

    ``certain_weight`` multiplies the weight of rows whose exact probability is 0 or
    1 (cells the engine proves safe or mined), which sharpens the model there.
    ``certain_margin`` adds, for those rows, that many times the squared distance by
    which the logit lies on the wrong side of the band of :data:`MARGIN_P` (above
    logit(0.01) for a proven-safe cell, below logit(0.99) for a proven mine), with the
    same weights: a penalty on the proven cells the model gets wrong only, where the
    weight pushes every proven cell (and, where the model cannot tell them apart, the
    uncertain cells like them) further out. A value network's outputs (a ``value`` per
    position) give the mean cross-entropy against the value labels (the loss is least
    at the policy's chance to win).
    """
    if "value" in out:
        return torch.nn.functional.binary_cross_entropy_with_logits(out["logit"].float(),
                                                                    out["value"].float())
    y = out["prob"] if target == "exact" else out["mine"]
    w = out["weight"]
    p = out["prob"]
    logit = out["logit"].float()
    if certain_weight != 1.0:
        w = torch.where((p == 0) | (p == 1), w * certain_weight, w)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logit, y.float(), reduction="none")
    if certain_margin:
        edge = math.log(MARGIN_P / (1 - MARGIN_P))  # logit(0.01); logit(0.99) is -edge
        wrong = torch.where(p == 0, logit - edge, torch.where(p == 1, -edge - logit, torch.zeros_like(logit)))
        loss = loss + certain_margin * torch.relu(wrong).square()
    return (loss * w).sum() / w.sum().clamp_min(1.0)


def _predict(model, loader, *, target: str, max_batches: int, device, symmetric: bool = False,
             decisions=None):
    """Every prediction row of ``model`` over ``loader`` and the mean loss (eval mode, no grad).

    ``decisions``: a :class:`~nnsweeper.decisions.DecisionAccumulator` that each batch's
    positions are added to as well.
    """
    from nnsweeper.metrics import PredictionAccumulator

    acc = PredictionAccumulator()
    total, weight = 0.0, 0.0
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for b, batch in enumerate(loader):
            if max_batches and b >= max_batches:
                break
            # Only asked for when wanted: an architecture's outputs() may not take it.
            out = model.outputs(to_device(batch, device), **({"symmetric": True} if symmetric else {}))
            w = float(out["weight"].sum())
            total += float(bce_loss(out, target)) * w
            weight += w
            p = torch.sigmoid(out["logit"].float())
            acc.add(p, out["prob"], out["mine"], weight=out["weight"], frontier=out["frontier"])
            if decisions is not None:
                decisions.add(p, out["prob"], out["weight"], out["frontier"], out["graph"])
    model.train(was_training)
    return acc.to_set(), total / max(weight, 1.0)


def validate(model, loader, *, target: str = "exact", max_batches: int = 0, device=None,
             configurations: Mapping | None = None) -> dict:
    """Loss and metrics of ``model`` over ``loader`` (frontier, interior and all cells).

    ``loader`` may be a mapping ``{configuration key: loader}``: then ``max_batches`` is
    shared between them (each takes its ceiling share), the result adds ``"by"`` (each
    configuration's figures) and, with the manifest's ``configurations`` (their dicts by
    key), ``"kinds"``: the figures pooled by each of :data:`KIND_FIELDS` that has more
    than one value among them. A value network's figures are
    :func:`~nnsweeper.models.value.value_metrics` over the loader's positions (all of
    them), with ``loss`` its cross-entropy.
    """
    from nnsweeper.metrics import evaluate_predictions

    if is_value_model(model):
        from nnsweeper.models.value import value_metrics

        was_training = model.training
        result = value_metrics(model, loader.positions, loader.batch_size)
        model.train(was_training)
        return {**result, "loss": result["bce"]}
    from nnsweeper.decisions import DecisionAccumulator, decision_metrics

    device = device or model.device
    decisions = DecisionAccumulator()
    if not isinstance(loader, Mapping):
        preds, loss = _predict(model, loader, target=target, max_batches=max_batches, device=device,
                               decisions=decisions)
        return {**evaluate_predictions(preds), "loss": loss, "decision": decision_metrics(decisions)}
    share = -(-max_batches // len(loader)) if max_batches else 0
    preds, keys, loss = _predict_by_key(model, loader, target=target, max_batches=share, device=device,
                                        decisions=decisions)
    result = {**evaluate_predictions(preds, by=keys), "loss": loss, "decision": decision_metrics(decisions)}
    if configurations is not None:
        result.update(_kinds(preds, keys, configurations))
    return result


def _predict_by_key(model, loaders: Mapping, *, target: str, max_batches: int, device,
                    symmetric: bool = False, progress: bool = False, decisions=None):
    """:func:`_predict` over each loader of ``{key: loader}``: every row, its key, the mean loss."""
    from tqdm.auto import tqdm

    from nnsweeper.metrics import PredictionSet

    sets, total, weight = [], 0.0, 0.0
    for key in tqdm(list(loaders), disable=not progress, desc="configurations", unit="config"):
        s, loss = _predict(model, loaders[key], target=target, max_batches=max_batches, device=device,
                           symmetric=symmetric, decisions=decisions)
        w = float(s.weight.sum()) if len(s) else 0.0
        sets.append(s)
        total += loss * w
        weight += w
    preds = PredictionSet.concat(sets)
    keys = np.repeat(np.array(list(loaders), dtype=object), [len(s) for s in sets])
    return preds, keys, total / max(weight, 1.0)


def _kinds(preds, keys: np.ndarray, configurations: Mapping) -> dict:
    """``{"kinds": {field: {label: figures}}}`` for each of :data:`KIND_FIELDS` with more than
    one label among the rows' configurations (``{}`` when none has)."""
    from nnsweeper.metrics import evaluate_predictions

    kinds = {}
    present = list(dict.fromkeys(keys.tolist()))
    for kind in KIND_FIELDS:
        label = {key: _kind(configurations[key], kind) for key in present}
        if len(set(label.values())) > 1:
            names = np.array([label[k] for k in keys.tolist()], dtype=object)
            kinds[kind] = evaluate_predictions(preds, by=names, overall=False)["by"]
    return {"kinds": kinds} if kinds else {}


def is_value_model(model) -> bool:
    """Whether ``model`` is a value network (an architecture of target ``"value"``)."""
    return getattr(model, "target", "probability") == "value"


#: What :func:`evaluate_model` pools a dataset's configurations by: the board (size, mines
#: and first-click rule), the behaviour policy, the flag mode, and policy with flag mode.
KIND_FIELDS: tuple[str, ...] = ("board", "policy", "flags", "policy_flags")


def split_configurations(manifest: dict, split: str, chosen=()) -> list[str]:
    """The keys of the manifest's configurations with states in ``split`` (of ``chosen`` only,
    when given), in manifest order."""
    chosen = set(chosen or ())
    return [c["key"] for c in manifest["configurations"]
            if c.get("states_per_split", {}).get(split, 0) and (not chosen or c["key"] in chosen)]


def _kind(config: dict, field: str) -> str:
    """The label of a manifest configuration for one of :data:`KIND_FIELDS`."""
    rule = config.get("first_click", "safe")
    board = f"{config['rows']}x{config['cols']}-m{config['mines']}" + ("" if rule == "safe" else f"-{rule}")
    # Manifests written before policies and flag modes existed hold csp games with every flag.
    policy, flags = config.get("policy", "csp"), config.get("flags", "all")
    return {"board": board, "policy": policy, "flags": flags, "policy_flags": f"{policy}-{flags}"}[field]


def evaluate_model(model, root, split: str = "test", *, batch_size: int = 128, max_batches: int = 0,
                   progress: bool = False, name: str | None = None,
                   notify: Callable[[str], None] | None = None, symmetric: bool = False):
    """Score a model on one split of a dataset, per configuration and overall.

    The split's game seeds are compared with the seed streams the model's checkpoint
    records (its training dataset's): scoring a model on games it was trained or
    validated on is allowed (it shows over-fitting) but the figures are not held-out.

    Parameters
    ----------
    model : MineModel
    root : str or os.PathLike
        A dataset folder.
    split : {"train", "val", "test"}, default="test"
    batch_size : int, default=128
    max_batches : int, default=0
        At most this many batches per configuration (0: all).
    progress : bool, default=False
    name : str, optional
        What to call the model in the note (default: its architecture).
    notify : callable, optional
        Called, before any scoring, with a one-line note when the split holds games
        the model learned from.
    symmetric : bool, default=False
        Score the mean over each board's symmetries (``predict_proba(symmetric=True)``).

    Returns
    -------
    result : dict
        :func:`nnsweeper.metrics.evaluate_predictions` with ``by`` the configuration
        keys: frontier, interior and all cells, overall and per configuration, each
        figure next to the exact engine's. ``kinds`` pools the configurations by each
        field of :data:`KIND_FIELDS` that takes more than one value in the split
        (``{field: {label: regions}}``; labels such as ``"16x30-m99"``, ``"reveal"``,
        ``"none"``, ``"reveal-none"``). ``held_out`` is False when the split holds
        games of the model's training or validation split (``held_out_note`` says
        which), True when it holds none, None when the checkpoint records no seeds.
    preds : PredictionSet
        Every row, for reliability diagrams.
    """
    from nnsweeper.datasets import check_shards, load_manifest, make_loader
    from nnsweeper.metrics import evaluate_predictions

    manifest = load_manifest(root)
    keys = split_configurations(manifest, split)
    if not keys:
        raise TrainingError(f"the {split!r} split of {os.fspath(root)!r} holds no states")
    check_shards(root, manifest, {split})  # a damaged shard is named before minutes of scoring
    held_out, note = _held_out(model, manifest, root, split, name or model.arch)
    if note and notify is not None:
        notify(note)
    loaders = {key: make_loader(model, root, split, batch_size=batch_size, shuffle=False, configs=[key])
               for key in keys}
    from nnsweeper.decisions import DecisionAccumulator, decision_metrics

    decisions = DecisionAccumulator()
    preds, row_keys, _ = _predict_by_key(model, loaders, target="exact", max_batches=max_batches,
                                         device=model.device, symmetric=symmetric, progress=progress,
                                         decisions=decisions)
    result = evaluate_predictions(preds, by=row_keys)
    result["decision"] = decision_metrics(decisions)
    result.update(_kinds(preds, row_keys, {c["key"]: c for c in manifest["configurations"]}))
    result["held_out"] = held_out
    if note:
        result["held_out_note"] = note
    return result, preds


def _held_out(model, manifest: dict, root, split: str, name: str) -> tuple[bool | None, str | None]:
    """Whether ``split`` of a dataset is new to ``model`` (None: unknown), and a note when it is not.

    The model's checkpoint records its dataset's seed streams and training config; the
    games of its training and validation splits are the ones it learned from.
    """
    from nnsweeper.seeds import manifest_seeds

    extra = (getattr(model, "checkpoint_meta", None) or {}).get("extra") or {}
    streams = extra.get("data_seed_streams")
    if not streams or not isinstance(manifest.get("seed_streams"), list):
        return None, None
    data = (extra.get("train_config") or {}).get("data") or {}
    roles = ((data.get("train_split") or "train", "trained on"),
             (data.get("val_split") or "val", "validated on to choose its best epoch"))
    ours = manifest_seeds(manifest, [split]).get(split, np.zeros(0, dtype=np.int64))
    for theirs_split, role in roles:
        theirs = manifest_seeds({"seed_streams": streams}, [theirs_split]).get(theirs_split)
        shared = 0 if theirs is None else np.intersect1d(ours, theirs).size
        if not shared:
            continue
        where = f"split {theirs_split!r} of its dataset"
        if extra.get("data_path"):
            where += f" {os.fspath(extra['data_path'])}"
        entropy = sorted({int(e["entropy"]) for e in streams
                          if e.get("split") == theirs_split and "entropy" in e})
        if entropy:
            where += f", seed {', '.join(map(str, entropy))}"
        return False, (
            f"split {split!r} of {os.fspath(root)}: {shared} of its {ours.size} games are games {name} was "
            f"{role} ({where}): these figures are not held-out"
        )
    return True, None


def play_readiness(result: dict, arch: str) -> str:
    """One line on whether a model's pure solver can play alone, from an :func:`evaluate_model` result.

    A pure solver opens the cell of lowest P(mine): where the model gives a cell the
    engine proves safe a P of a few percent, it opens another, and loses games that
    logic wins. Below :data:`READY_SHARE` of proven-safe cells given P < 0.02 or of
    proven mines given P > 0.98 (frontier cells), the line says to play the model
    through its hybrid solver (logic first, the model for guesses) or to train it longer
    (``train.epochs=N --resume``: a finished run goes on with more epochs). The hybrid
    solver of a bundled model (``result["model"]["name"]`` the architecture's name) is
    ``hybrid-ARCH``; a checkpoint is played with ``nnsweeper eval --model
    NAME=ARCH:PATH`` as ``hybrid-NAME`` (``hybrid-ARCH`` plays the bundled weights).
    """
    f = result["frontier"]
    safe, mine = f["safe_below_threshold"], f["mine_above_threshold"]
    named = (("proven-safe frontier cells given P < 0.02:", safe), ("proven mines given P > 0.98:", mine))
    parts = [f"{what} {share:.1%}" for what, share in named if share is not None]
    shares = ", ".join(parts) or "no proven frontier cells to judge by"
    if any(v is not None and v < READY_SHARE for v in (safe, mine)):
        model = result.get("model")
        name = model.get("name") if isinstance(model, dict) else None
        if name == arch:  # the bundled weights
            play = f"play it as hybrid-{arch} (logic first)"
        elif name:  # a checkpoint: hybrid-ARCH would play the bundled weights, not these
            import shlex

            play = (f"play it with logic first: nnsweeper eval --model my{arch}={arch}:"
                    f"{shlex.quote(os.fspath(name))} --solvers csp,hybrid-my{arch} (a checkpoint given as "
                    f"--model NAME={arch}:PATH plays as hybrid-NAME; hybrid-{arch} plays the bundled {arch})")
        else:
            play = (f"play it with logic first: as hybrid-{arch} for the bundled {arch}, as hybrid-NAME for "
                    f"a checkpoint given to nnsweeper eval as --model NAME={arch}:PATH")
        return (f"not ready to play alone ({shares}; below {READY_SHARE:.1%}): its pure solver will "
                f"guess where logic is certain and lose games that csp wins; {play}, or train it longer "
                f"(its nnsweeper train command again with train.epochs=N --resume)")
    return f"ready to play alone ({shares}; at least {READY_SHARE:.1%} each)"
