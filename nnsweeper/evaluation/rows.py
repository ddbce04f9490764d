"""A table row from a job's stored games, read chunk by chunk in bounded memory.

Counts are summed as integers and real numbers with ``math.fsum`` (exactly rounded,
whatever the order), the median of the times is found exactly in two passes, and the
outcomes are packed as they stream past, so a row does not depend on how the games were
cut into chunks or in which runs they were played.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .runner import Job
from .stats import wilson_interval

__all__ = ["HOLD_GAMES", "exact_sum", "median_of_chunks", "pack_stream", "summarise"]

#: Most games of a job that :func:`summarise` holds in memory while it makes the row (it reads
#: them once); a job of more is read from the store once per figure, in bounded memory.
HOLD_GAMES = 100_000


def median_of_chunks(chunks, n: int) -> float:
    """The median of the non-negative times in ``chunks()`` (an iterable of arrays, ``n`` values in all).

    Exact, as ``numpy.median`` of all of them, in bounded memory: a first pass counts
    the values by the top 16 bits of their float32 pattern (which orders non-negative
    float32 numbers as integers), a second keeps only the values in the one or two
    bins that hold the middle ranks.
    """
    counts = np.zeros(1 << 16, dtype=np.int64)
    for x in chunks():
        counts += np.bincount(x.astype(np.float32).view(np.uint32) >> 16, minlength=1 << 16)
    ranks = ((n - 1) // 2, n // 2)
    cum = np.cumsum(counts)
    bins = [int(np.searchsorted(cum, r, side="right")) for r in ranks]
    low = int(cum[bins[0] - 1]) if bins[0] else 0  # values before the first middle bin
    kept = []
    for x in chunks():
        keys = x.astype(np.float32).view(np.uint32) >> 16
        kept.append(x[(keys >= bins[0]) & (keys <= bins[1])])
    middle = np.sort(np.concatenate(kept))
    return float((middle[ranks[0] - low] + middle[ranks[1] - low]) / 2)


def pack_stream(parts) -> str:
    """:func:`~nnsweeper.evaluation.pack_outcomes` of the concatenated boolean arrays ``parts``, streamed."""
    out, rest = [], np.zeros(0, dtype=bool)
    for won in parts:
        x = np.concatenate([rest, won])
        cut = len(x) - len(x) % 8
        out.append(np.packbits(x[:cut]).tobytes())
        rest = x[cut:]
    out.append(np.packbits(rest).tobytes())
    return b"".join(out).hex()


def exact_sum(values) -> float:
    """``math.fsum`` of the arrays ``values``: exactly rounded, so the same whatever their chunks."""
    return math.fsum(itertools.chain.from_iterable(v.tolist() for v in values))


def summarise(job: Job, first_click: str, trials: int) -> dict:
    """One table row from a job's stored games, read chunk by chunk.

    Counts are summed as integers and real numbers with ``math.fsum`` (exactly
    rounded, whatever the order), so a row does not depend on how the games were cut
    into chunks or in which runs they were played. Memory stays bounded: a job of at
    most :data:`HOLD_GAMES` games is read once and held (a few megabytes), a larger one
    (a record's) read a few times over instead.
    """
    if trials <= HOLD_GAMES:
        held = list(job.games.read(trials))

        def read():
            return iter(held)
    else:
        def read():
            return job.games.read(trials)

    n = k = guesses = calls = picks = safe = lost = 0
    setup, seconds_max, model_asked = 0.0, 0.0, False
    for part in read():
        won = part.won
        n, k, lost = n + len(won), k + int(won.sum()), lost + int((~won).sum())
        if job.record:
            guesses += int(part.guesses.astype(np.int64).sum())
        seconds_max = max(seconds_max, float(part.seconds.max()))
        calls += int(part.model_calls.astype(np.int64).sum())
        model_asked = model_asked or bool(part.model_calls.any())
        picks += int(part.model_picks.astype(np.int64).sum())
        safe += int(part.model_safe.astype(np.int64).sum())
        setup += part.setup_seconds
    low, high = wilson_interval(k, n)
    board = job.board
    return {
        "solver": job.name,
        "board": board.name,
        "rows": board.rows,
        "cols": board.cols,
        "mines": board.mines,
        "density": board.mines / (board.rows * board.cols),
        "first_click": first_click,
        "games": n,
        "wins": k,
        "win_rate": k / n,
        "ci_low": low,
        "ci_high": high,
        "mean_guesses": guesses / n if job.record else math.nan,
        "mean_cleared_lost": exact_sum(p.cleared[~p.won] for p in read()) / lost if lost else math.nan,
        "mean_seconds": exact_sum(p.seconds for p in read()) / n,
        "median_seconds": median_of_chunks(lambda: (p.seconds for p in read()), n),
        "max_seconds": seconds_max,
        "setup_seconds": setup,
        "model_calls": calls / n if model_asked else math.nan,
        "model_safe_rate": safe / picks if picks else math.nan,
        "outcomes": pack_stream(p.won for p in read()),
    }
