"""Training states per second of the scaling runs' models: the optimiser step alone, and the loader.

A training epoch costs two things: building each state's model input (the graph or the
grid, on the CPU, in the loader's processes) and the optimiser step (forward, backward
and AdamW, on the training device). This times them apart, for each model size of
``train/scaling.py``: the loader as states built per second in one process, and the
step on ``--device`` as states per second over ``--batches`` batches built beforehand
(spread over an epoch, the same for every model of an input kind; bf16 autocast on a GPU, as
``nnsweeper train`` does). The median of ``--repeats`` passes over the batches::

    python benchmarks/bench_train_step.py                           # CPU, one thread
    python benchmarks/bench_train_step.py --device cuda --runs gnn-m,gnn-l

An epoch's time is about the larger of the step's time and the loader's time
divided by its processes (``--workers`` of ``train/scaling.py``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "train"))

from scaling import RUNS  # noqa: E402

from nnsweeper.datasets import make_loader  # noqa: E402
from nnsweeper.models import MineModel  # noqa: E402
from nnsweeper.training import load_config  # noqa: E402
from nnsweeper.training.scoring import bce_loss, to_device  # noqa: E402


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _batches(model: MineModel, data: Path, n: int, batch_size: int) -> tuple[list, float]:
    """``n`` training batches spread evenly over an epoch (of every board size, as training
    sees them) and the loader's states per second building them."""
    loader = make_loader(model, data, "train", shuffle=True, batch_size=batch_size, seed=0)
    order = list(loader.batch_sampler)
    picked = [order[k * len(order) // n] for k in range(n)]
    out, states, started = [], 0, time.perf_counter()
    for indices in picked:
        out.append(loader.collate_fn([loader.dataset[i] for i in indices]))
        states += len(indices)
    return out, states / (time.perf_counter() - started)


def bench(run, data: Path, device: torch.device, n: int, repeats: int, batch_size: int) -> dict:
    config = load_config(ROOT / run.base, run.overrides(None, "cpu", 0))
    torch.manual_seed(0)
    model = MineModel.from_config(config.model)
    batches, built = _batches(model, data, n, batch_size)
    model.to(device).train()
    batches = [to_device(b, device) for b in batches]
    t = config.train
    opt = torch.optim.AdamW(model.parameters(), lr=t.lr, weight_decay=t.weight_decay)
    states = sum(int(getattr(b, "num_graphs", 0)) or len(b["x"]) for b in batches)

    def one_pass() -> float:
        _sync(device)
        started = time.perf_counter()
        for b in batches:
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                out = model.outputs(b)
            loss = bce_loss(out, t.target, t.certain_weight)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        _sync(device)
        return time.perf_counter() - started

    one_pass()  # warm-up: kernels, allocator, autotuning
    seconds = statistics.median(one_pass() for _ in range(repeats))
    return {"run": run.name, "parameters": model.n_parameters, "step": states / seconds, "loader": built}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default=",".join(r.name for r in RUNS), help="scaling runs (default: all)")
    parser.add_argument("--data", default=str(ROOT / "data" / "broad"), help="the training dataset")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--batches", type=int, default=40, help="batches per pass (default: 40)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    known = {r.name: r for r in RUNS}
    names = [n for n in args.runs.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown run(s) {', '.join(unknown)}; the runs: {', '.join(known)}")
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {args.threads} thread(s)"
    print(f"{where}; {args.batches} batches of {args.batch_size}, median of {args.repeats}")
    print(f"{'run':8} {'parameters':>10} {'step states/s':>14} {'loader states/s (1 process)':>28}")
    for name in names:
        r = bench(known[name], Path(args.data), device, args.batches, args.repeats, args.batch_size)
        print(f"{r['run']:8} {r['parameters']:>10,} {r['step']:>14,.0f} {r['loader']:>28,.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
