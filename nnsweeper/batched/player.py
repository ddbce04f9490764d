"""The pure policy of a neural solver, played on :class:`~nnsweeper.batched.BatchedGames`.

:func:`play_batched` plays a pure :class:`~nnsweeper.solvers.NeuralSolver`'s policy on
games held as tensors, every decision of every game at once on the device, with no
Python step per game. The rule of a turn is the solver's own
(:meth:`~nnsweeper.solvers.NeuralSolver.pure_masks`,
:meth:`~nnsweeper.solvers.NeuralSolver.interior_values`); what is here is the batch around it:
:func:`predict_tensor` (the model's P(mine) maps of boards held as tensors: the
model's own ``predict_tensor``, its inputs built on the device, or ``predict_proba``
on the host), the guess (the first cell of
:func:`~nnsweeper.solvers.ranking.rank_cells`' order, exact ties broken by
:func:`tie_hash`) and the games that end leaving the batch for new ones.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from nnsweeper.errors import InvalidRulesError, check_int
from nnsweeper.game import Rules
from nnsweeper.grid_torch import neighbour_product, neighbour_sum
from nnsweeper.models.base import resolve_device, tensor_totals
from nnsweeper.solvers.base import first_click_cell
from nnsweeper.solvers.ranking import check_tie_break

from .games import BatchedGames, check_seeds

__all__ = ["BatchedResults", "play_batched", "predict_tensor", "tie_hash"]


def predict_tensor(model, grids: torch.Tensor, total_mines, flags: torch.Tensor, *,
                   sparse: bool | None = None) -> torch.Tensor:
    """P(mine) maps of boards given as tensors, as ``model.predict_proba`` gives them.

    A model with a ``predict_tensor`` method (:class:`~nnsweeper.models.MineCNN`,
    :class:`~nnsweeper.models.MineGNN`) runs its forward pass on inputs it builds on
    the device and maps the logits back to the boards as ``predict_proba`` does;
    another model is asked through its ``predict_proba`` on the host. Exactly 0 at
    revealed cells and 1 at flags. The caller sets eval mode and
    ``torch.inference_mode()``; the boards are not checked.

    Parameters
    ----------
    model : MineModel, or any model with ``predict_proba``
    grids : Tensor of int, (B, rows, cols)
        -1 covered, 0..8 revealed, on the model's device.
    total_mines : int or Tensor of int, (B,)
    flags : Tensor of bool, (B, rows, cols)
    sparse : bool, optional
        For a graph model: pass sparse adjacencies; by default on the CPU only.

    Returns
    -------
    Tensor of float64, (B, rows, cols), on the grids' device
    """
    on_device = getattr(model, "predict_tensor", None)
    if on_device is not None:
        return on_device(grids, total_mines, flags, sparse=sparse)
    totals = tensor_totals(total_mines, grids.shape[0], grids.device).cpu().numpy()
    out = model.predict_proba(grids.cpu().numpy(), totals, flags=flags.cpu().numpy(),
                              batch_size=max(grids.shape[0], 1))
    return torch.as_tensor(np.asarray(out, dtype=np.float64), device=grids.device)


# --------------------------------------------------------------------------- tie-break hash
_MASK32 = 0xFFFFFFFF


def _mul32(x: torch.Tensor, m: int) -> torch.Tensor:
    """``x * m`` modulo 2**32 for ``x`` in [0, 2**32) (int64, in halves: no overflow)."""
    hi = ((x >> 16) * m) & 0xFFFF
    return ((hi << 16) + (x & 0xFFFF) * m) & _MASK32


def _mix32(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (the "lowbias32" mixer) of int64 values in [0, 2**32)."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def tie_hash(seeds: torch.Tensor, moves: torch.Tensor, cells: int) -> torch.Tensor:
    """A deterministic pseudo-random int64 in [0, 2**32) per (game seed, move number, cell).

    Parameters
    ----------
    seeds, moves : Tensor of int64, (N,)
        The games' seeds (below 2**63) and move counts.
    cells : int
        Cells per board.

    Returns
    -------
    Tensor of int64, (N, cells)
    """
    dev = seeds.device
    key = _mix32(_mix32(_mix32(seeds & _MASK32) ^ (seeds >> 32)) ^ (moves & _MASK32))
    cell = _mix32(torch.arange(1, cells + 1, device=dev, dtype=torch.int64) ^ 0x5BD1E995)
    return _mix32(key[:, None] ^ cell[None, :])


# --------------------------------------------------------------------------- pure neural play
@dataclass
class BatchedResults:
    """Per-game results of :func:`play_batched`, in the order of its seeds (numpy arrays).

    Attributes
    ----------
    seeds : int64
    won, lost : bool
        How each game ended. A game that is neither was stopped with nothing left to
        open (which a game in play never reaches: its solver's flags never outnumber
        the mines).
    revealed_safe : int64
        Safe cells revealed when the game ended.
    moves : int64
        Cells clicked, the first click included (``len(GameRecord.moves)``).
    guesses : int64
        Moves that were guesses (``GameRecord.guesses``).
    flags : int64
        Flags on the board at the end.
    model_calls : int64
        Boards the model was asked about (``GameRecord.model_calls``).
    """

    seeds: np.ndarray
    won: np.ndarray
    lost: np.ndarray
    revealed_safe: np.ndarray
    moves: np.ndarray
    guesses: np.ndarray
    flags: np.ndarray
    model_calls: np.ndarray

    def __len__(self) -> int:
        return len(self.seeds)

    @property
    def win_rate(self) -> float:
        return float(self.won.mean()) if len(self) else float("nan")


_COUNTERS = ("guesses", "model_calls")


def _ranked_first(p: torch.Tensor, unknown: torch.Tensor, grid: torch.Tensor, tie_break: str,
                  tolerance: float, seeds: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
    """The flat index of each board's first cell in :func:`~nnsweeper.solvers.ranking.rank_cells`
    order (with ``coarse_ties``), exact ties broken by :func:`tie_hash`."""
    check_tie_break(tie_break)
    n, r, c = p.shape
    level = torch.floor(p / tolerance) if tolerance > 0 else p
    keys = [level]
    if tie_break in ("fewest_covered_neighbours", "fewest_covered_prob_zero"):
        keys.append(neighbour_sum(grid < 0).double())
    if tie_break in ("prob_zero", "fewest_covered_prob_zero"):
        safe = 1.0 - torch.where(grid < 0, p, 0.0)
        zero = safe * neighbour_product(safe)
        keys.append(-torch.floor(zero / tolerance) if tolerance > 0 else -zero)
    elif tie_break == "most_revealed_neighbours":
        keys.append(-neighbour_sum(grid >= 0).double())
    elif tie_break == "fewest_board_neighbours":
        keys.append(neighbour_sum(torch.ones_like(grid, dtype=torch.bool)).double())
    keys.append(tie_hash(seeds, moves, r * c).view(n, r, c).double())  # exact below 2**53
    best = unknown
    for key in keys:
        low = torch.where(best, key, torch.inf).amin((1, 2), keepdim=True)
        best = best & (key == low)
    return torch.where(best.view(n, -1), torch.arange(r * c, device=p.device), r * c).amin(1)


def _solver_model(solver, device):
    """The solver's model on ``device`` (a copy when it lives elsewhere) and that device."""
    model = solver.model
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    here = params[0].device if params else torch.device("cpu")
    dev = here if device is None else resolve_device(device)
    if params and dev != here:
        model = copy.deepcopy(model).to(dev)
    return model, dev


def _pure_turn(solver, model, state: dict, rules: Rules, batch_size: int) -> None:
    """One turn of the pure policy in every game of ``state["games"]`` (none is over), the model
    reading ``batch_size`` boards per forward pass."""
    games = state["games"]
    r, c, rc = rules.rows, rules.cols, rules.cells
    dev = games.device
    grid = games.observe()
    flags = games.flags
    unknown = games.covered & ~flags
    stuck = ~unknown.any((1, 2))
    p = torch.cat([predict_tensor(model, grid[k : k + batch_size], rules.mines, flags[k : k + batch_size])
                   for k in range(0, len(games), batch_size)])
    p = solver.interior_values(p, grid, flags, rules.mines)
    state["model_calls"] += ~stuck
    # The solver's rule: cells it rates almost surely mines are flagged (while flags do not
    # outnumber the mines), and every cell it rates almost surely safe is opened; without one,
    # its safest cell.
    flags, unknown, low = solver.pure_masks(p, grid, unknown, flags, rules.mines)
    has_low = low.any((1, 2))
    picking = ~has_low & ~stuck
    guess = _ranked_first(p, unknown, grid, solver.tie_break, solver.tolerance, state["seed"], games.moves)
    pick = torch.zeros((len(games), rc), dtype=torch.bool, device=dev)
    pick.scatter_(1, guess.clamp(max=rc - 1)[:, None], picking[:, None])
    games.set_flags(flags, check=False)
    games.reveal_many(torch.where(has_low[:, None, None], low, pick.view(-1, r, c)), check=False)
    # The safest cell is the model's move when rated below open_below (an interior cell), else a guess.
    picked_p = p.reshape(len(games), rc).gather(1, guess.clamp(max=rc - 1)[:, None])[:, 0]
    state["guesses"] += picking & (picked_p >= solver.open_below)
    state["stopped"] |= stuck


def play_batched(solver, rules: Rules, seeds: Sequence[int], *, device=None, batch_size: int | None = None,
                 in_play: int | None = None) -> BatchedResults:
    """Play a pure :class:`~nnsweeper.solvers.NeuralSolver`'s policy on :class:`BatchedGames`.

    Every decision of the solver's pure turn, for all games at once on the device:
    cells the model rates above ``flag_above`` are flagged (when flags and new ones
    do not outnumber the mines), the batch of
    :meth:`~nnsweeper.solvers.NeuralSolver.pure_masks` (frontier cells it rates below
    ``open_below``, up to ``batch_risk``) is opened in one move
    (:meth:`BatchedGames.reveal_many`), and otherwise the unknown
    cell first in :func:`~nnsweeper.solvers.ranking.rank_cells` order (lowest
    probability level ``floor(p / tolerance)``, then the solver's ``tie_break`` in
    levels of ``tolerance``) is opened; ``pool_interior`` or ``interior_count`` as the solver does. Games
    that end leave the batch and new ones take their places, so that up to
    ``in_play`` games play every turn.

    Exact ties (cells equal in both levels) are broken by :func:`tie_hash` of the
    game's seed, its move count and the cell, computed on the device, where
    :meth:`~nnsweeper.solvers.NeuralSolver.play_many` draws them from the game's
    numpy generator: a game reaching such a tie can go another way than there
    (and float noise between batches of different sizes can move a probability
    across a level's edge now and then), so single games may differ while win
    rates agree within their intervals (``benchmarks/bench_batched.py --engine
    torch`` compares them).

    Parameters
    ----------
    solver : NeuralSolver
        A pure solver (``hybrid=False``); its model (MineCNN or MineGNN run on the
        device; another model is asked through its ``predict_proba`` on the host).
    rules : Rules
    seeds : sequence of int
        One game per seed: the layout of ``Game(rules, seed)``.
    device : str or torch.device, optional
        Where the games and the model run (default: the model's device; a model on
        another device is copied there).
    batch_size : int, optional
        Boards per forward pass (default: the solver's ``batch_size``). On a CPU,
        a few hundred boards per pass run faster per board than thousands (their
        activations stay in the caches).
    in_play : int, optional
        Games played in lockstep (default: ``max(batch_size, 1024)``); each turn
        of theirs is one tensor operation per step of the policy, and their boards
        go to the model ``batch_size`` at a time.

    Returns
    -------
    BatchedResults

    Raises
    ------
    ValueError
        A hybrid or symmetric solver, or a bad ``batch_size`` or ``in_play``.
    """
    if getattr(solver, "hybrid", True):
        raise ValueError("play_batched plays the pure policy; give a NeuralSolver with hybrid=False")
    if getattr(solver, "symmetric", False):
        raise ValueError("play_batched reads each board once; give a NeuralSolver with symmetric=False "
                         "(play_many averages over the symmetries)")
    if not isinstance(rules, Rules):
        raise InvalidRulesError(f"rules must be a Rules instance; got {type(rules).__name__}")
    seeds = check_seeds(seeds)
    batch_size = check_int("batch_size", solver.batch_size if batch_size is None else batch_size, 1)
    in_play = check_int("in_play", max(batch_size, 1024) if in_play is None else in_play, 1)
    model, dev = _solver_model(solver, device)
    r, c = rules.rows, rules.cols
    total = len(seeds)
    if solver.start == "random":
        # The solver's first draw from default_rng(seed), the game rng of the harness.
        cells = [first_click_cell("random", r, c, np.random.default_rng(int(s))) for s in seeds]
    else:
        cells = [first_click_cell(solver.start, r, c)] * total
    starts = np.array([i * c + j for i, j in cells], dtype=np.int64)
    out = {name: np.zeros(total, dtype=np.int64) for name in ("revealed_safe", "moves", "guesses", "flags",
                                                              "model_calls")}
    won = np.zeros(total, dtype=bool)
    lost = np.zeros(total, dtype=bool)

    state: dict = {"games": None, "slot": None, "seed": None, "stopped": None,
                   **{k: None for k in _COUNTERS}}
    per_game = ("slot", "seed", "stopped", *_COUNTERS)

    def collect() -> None:
        """Write down the games that ended (or have nothing left to open) and drop them."""
        games = state["games"]
        over = games.done | state["stopped"]
        if not bool(over.any()):
            return
        idx = torch.nonzero(over)[:, 0]
        at = state["slot"][idx].cpu().numpy()
        won[at] = games.won[idx].cpu().numpy()
        lost[at] = games.lost[idx].cpu().numpy()
        out["revealed_safe"][at] = games.revealed[idx].cpu().numpy()
        out["moves"][at] = games.moves[idx].cpu().numpy()
        out["flags"][at] = games.flags[idx].sum((1, 2)).cpu().numpy()
        for k in _COUNTERS:
            out[k][at] = state[k][idx].cpu().numpy()
        keep = torch.nonzero(~over)[:, 0]
        state["games"] = games.take(keep)
        for k in per_game:
            state[k] = state[k][keep]

    def fill(queued: int) -> int:
        """Start new games (their first click made) in the free places; returns the games started."""
        games = state["games"]
        active = 0 if games is None else len(games)
        room = min(in_play - active, total - queued)
        # New games join in groups, not one by one, unless the batch runs dry.
        if room <= 0 or (room < max(1, in_play // 16) and queued + room < total and active > 0):
            return queued
        new = BatchedGames(rules, seeds[queued : queued + room], dev)
        new.reveal(torch.as_tensor(starts[queued : queued + room], device=dev), check=False)
        added = {
            "slot": torch.arange(queued, queued + room, device=dev),
            "seed": torch.as_tensor(new.seeds, device=dev),
            "stopped": torch.zeros(room, dtype=torch.bool, device=dev),
            **{k: torch.zeros(room, dtype=torch.int64, device=dev) for k in _COUNTERS},
        }
        if games is None:
            state["games"] = new
            state.update(added)
        else:
            state["games"] = BatchedGames.cat([games, new])
            for k in per_game:
                state[k] = torch.cat([state[k], added[k]])
        return queued + room

    modes = [(m, m.training) for m in model.modules()] if isinstance(model, torch.nn.Module) else []
    try:
        if modes:
            model.eval()
        with torch.inference_mode():
            queued = 0
            while True:
                queued = fill(queued)
                collect()
                if len(state["games"]) == 0:
                    if queued == total:
                        break
                    continue
                _pure_turn(solver, model, state, rules, batch_size)
                collect()
    finally:
        for m, mode in modes:
            m.training = mode
    return BatchedResults(seeds=seeds, won=won, lost=lost, **out)
