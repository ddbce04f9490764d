"""The dataset card: what a dataset's states hold, summed shard by shard.

:func:`shard_statistics` counts one shard (cells, frontier and interior, guesses, the
labels' calibration); the generator adds them per configuration and writes the card
into the manifest; :func:`format_card` prints it.
"""

from __future__ import annotations

import json
import math

import numpy as np

from nnsweeper.grid import dilate

__all__ = ["shard_statistics", "format_card"]

_CALIBRATION_BINS = 10


def shard_statistics(arrays: dict[str, np.ndarray]) -> dict:
    """What the dataset card sums over: counts and label statistics of one shard.

    Cells counted are the unknown ones (covered, not flagged). ``calibration`` holds,
    per tenth of probability, the cells, the sum of their exact probabilities and
    their mines.
    """
    grid, flags, mines, prob = arrays["grid"], arrays["flags"], arrays["mines"], arrays["prob"]
    unknown = (grid < 0) & ~flags
    frontier = unknown & dilate(grid >= 0)
    p, truth = prob[unknown], mines[unknown]
    bins = np.minimum((p * _CALIBRATION_BINS).astype(int), _CALIBRATION_BINS - 1)
    safe_known = (unknown & (prob == 0.0)).any(axis=(1, 2))
    # Correctly rounded sums (math.fsum), the same whatever order or machine adds them.
    prob_sum = [math.fsum(p[bins == b]) for b in range(_CALIBRATION_BINS)]
    return {
        "states": int(len(grid)),
        "unknown_cells": int(unknown.sum()),
        "frontier_cells": int(frontier.sum()),
        "interior_cells": int((unknown & ~frontier).sum()),
        "guess_needed": int((~safe_known).sum()),
        "policy_guessed": int(arrays["guess"].sum()),
        "mine_cells": int(truth.sum()),
        "mine_prob_sum": math.fsum(p[truth]),
        "safe_cells": int((~truth).sum()),
        "safe_prob_sum": math.fsum(p[~truth]),
        "calibration": {
            "cells": np.bincount(bins, minlength=_CALIBRATION_BINS).tolist(),
            "prob_sum": prob_sum,
            "mines": np.bincount(bins, weights=truth, minlength=_CALIBRATION_BINS).astype(int).tolist(),
        },
    }


def add_stats(total: dict | None, s: dict) -> dict:
    if total is None:
        return json.loads(json.dumps(s))
    for k, v in s.items():
        if k == "calibration":
            for name, values in v.items():
                total[k][name] = [a + b for a, b in zip(total[k][name], values, strict=True)]
        else:
            total[k] += v
    return total


def card_row(name: str, games: int, s: dict) -> dict:
    def share(a, b):
        return a / b if b else None

    return {
        "configuration": name,
        "games": games,
        "states": s["states"],
        "frontier_share": share(s["frontier_cells"], s["unknown_cells"]),
        "interior_share": share(s["interior_cells"], s["unknown_cells"]),
        "guess_needed_share": share(s["guess_needed"], s["states"]),
        "policy_guessed_share": share(s["policy_guessed"], s["states"]),
        "mean_prob_mines": share(s["mine_prob_sum"], s["mine_cells"]),
        "mean_prob_safe": share(s["safe_prob_sum"], s["safe_cells"]),
    }


def format_card(card: list[dict]) -> str:
    """The dataset card as a plain-text table."""
    head = ("configuration", "games", "states", "frontier", "interior", "guess needed",
            "policy guessed", "P(mine) mines", "P(mine) safe")
    lines = [head]
    for row in card:
        lines.append((
            row["configuration"], str(row["games"]), str(row["states"]),
            *("-" if row[k] is None else f"{100 * row[k]:.1f}%" for k in
              ("frontier_share", "interior_share", "guess_needed_share", "policy_guessed_share")),
            *("-" if row[k] is None else f"{row[k]:.3f}" for k in ("mean_prob_mines", "mean_prob_safe")),
        ))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths,
                                                                                                  strict=True)))
        for line in lines
    )
