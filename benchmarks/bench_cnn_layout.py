"""Time of the bundled CNN's forward pass per board, in both memory orders.

Runs ``load_model(MODEL)`` on random encoded boards (``--size`` square, ``--batch``
boards at a time, one torch thread) with :attr:`MineCNN.channels_last` off and on, the
two alternating ``--rounds`` times, and prints the median time per board of each, their
ratio and the largest difference of their logits::

    python benchmarks/bench_cnn_layout.py
    python benchmarks/bench_cnn_layout.py --batch 1,16,256 --size 16 --rounds 15
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from nnsweeper import features
from nnsweeper.models import load_model
from nnsweeper.models.cnn import MineCNN


def _seconds(model, x) -> tuple[float, torch.Tensor]:
    t0 = time.perf_counter()
    out = model(x)
    return time.perf_counter() - t0, out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cnn", help="a bundled name or a checkpoint (default: cnn)")
    parser.add_argument("--batch", default="16,64,256", help="boards per pass, comma-separated")
    parser.add_argument("--size", type=int, default=10, help="board side (default: 10)")
    parser.add_argument("--rounds", type=int, default=9, help="passes of each order (default: 9)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    model = load_model(args.model)
    if not isinstance(model, MineCNN):
        parser.error(f"--model must be a CNN; {args.model!r} is a {type(model).__name__}")
    model.eval()
    rng = np.random.default_rng(0)
    outside = features.GRID_CHANNELS.index("outside")
    print(f"{args.model}: ms per board on {args.size}x{args.size} boards, one thread, "
          f"median of {args.rounds} passes")
    with torch.inference_mode():
        for batch in (int(b) for b in args.batch.split(",")):
            x = torch.from_numpy(rng.random((batch, len(features.GRID_CHANNELS), args.size, args.size),
                                            dtype=np.float32))
            x[:, outside] = 0.0
            times = {False: [], True: []}
            logits = {}
            for _ in range(args.rounds):
                for order in (False, True):
                    MineCNN.channels_last = order
                    seconds, logits[order] = _seconds(model, x)
                    times[order].append(seconds)
            MineCNN.channels_last = True
            before, after = (statistics.median(times[o]) * 1e3 / batch for o in (False, True))
            gap = float((logits[True] - logits[False]).abs().max())
            print(f"  batch {batch:4d}: default {before:.2f}, channels-last {after:.2f} "
                  f"({after / before:.2f}x), largest logit difference {gap:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
