"""Solvers that play from a neural model's mine probabilities, alone or after logic.

:class:`NeuralSolver` plays in two ways:

* **pure** (``hybrid=False``, registry names ``cnn`` and ``gnn``): every move comes
  from the model. Cells it rates almost surely mines are flagged (the models learned
  from boards whose proven mines were flagged), frontier cells it rates almost surely
  safe are opened together, as long as their summed probability stays small (moves of
  kind ``"model"``), and otherwise the covered cell it rates safest is opened alone (a
  ``"guess"``, with the model's probability; a ``"model"`` move when rated almost surely
  safe, as an interior cell can be: the interior is never opened in a batch, since no
  number on the board checks the model's value for it).
* **hybrid** (``hybrid=True``, ``hybrid-cnn`` and ``hybrid-gnn``): the local rules and
  the exact engine make every certain move, exactly as :class:`~nnsweeper.CSPSolver`
  does, and the model is asked only when a guess is needed; its safest cell is the
  guess (the constraint solver plus learned guesser design).

A game is written as a generator that yields each board it needs probabilities
for and receives them back, so the same code plays one game
(:meth:`NeuralSolver.play`) or many in lockstep (:meth:`NeuralSolver.play_many`,
which sends every board waiting for the model in one batch). Both give the same
games: a decision never depends on a difference between probabilities smaller than
the solver's ``tolerance``, far above the float noise of batching.

Each game of a lockstep batch is timed on its own: its own work (the time spent
advancing its generator) plus a share of every batched model call it took part in
(a call over B boards charges each of them 1/B of its time), so per-game times differ
as the games do and add up to the batch's time. Loading a model is set-up, outside
every game's time: :meth:`NeuralSolver.prepare` does it, once per process for every
solver playing the same model, and reports how long it took.
"""

from __future__ import annotations

import numbers
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from nnsweeper.decisions import FLAG_ABOVE, OPEN_BELOW
from nnsweeper.errors import check_unit
from nnsweeper.grid import dilate
from nnsweeper.observation import Observation
from nnsweeper.solvers.base import GameRecord, Solver, Turns
from nnsweeper.solvers.ranking import check_tie_break, rank_cells

__all__ = ["NeuralSolver", "ModelRequest", "count_interior", "pool_interior", "neural_solver_class"]

#: The pure solver's ``batch_risk`` default: the most summed model probability one move's
#: batch of frontier cells opened without proof may carry.
BATCH_RISK = 0.01

#: The clock of game times and load times.
_clock = time.perf_counter

#: Models loaded by name or path in this process (least recently used first), by
#: :func:`_model_key`: the solvers that play the same model share one copy, and a
#: solver sent to a worker process finds it there on every task after the first.
_LOADED: OrderedDict[tuple, object] = OrderedDict()
#: Most models kept in :data:`_LOADED`.
_KEEP_LOADED = 4
#: Seconds this process spent loading each model (its imports included) that no
#: :meth:`NeuralSolver.prepare` has reported yet.
_UNREPORTED: dict[tuple, float] = {}
_LOAD_LOCK = threading.Lock()


def _model_key(source: str, device, arch) -> tuple:
    """What identifies a model loaded by name or path.

    A checkpoint file by its resolved path, modification time and size (a file
    written again is loaded again), a bundled name by itself; then the device and
    the architecture asked for.
    """
    try:
        st = os.stat(source)
    except OSError:
        where: tuple = (source,)
    else:
        where = (os.path.realpath(source), st.st_mtime_ns, st.st_size)
    return (*where, str(device), arch)


def _shared_model(source: str, device, arch) -> tuple[tuple, object]:
    """The model of ``source`` loaded once in this process, with its key in :data:`_LOADED`."""
    key = _model_key(source, device, arch)
    with _LOAD_LOCK:
        model = _LOADED.get(key)
        if model is not None:
            _LOADED.move_to_end(key)
            return key, model
        t0 = _clock()
        from nnsweeper.models import load_model  # the first one imports torch

        model = load_model(source, device=device, arch=arch)
        _UNREPORTED[key] = _UNREPORTED.get(key, 0.0) + (_clock() - t0)
        _LOADED[key] = model
        while len(_LOADED) > _KEEP_LOADED:
            _LOADED.popitem(last=False)
        return key, model


@dataclass(frozen=True)
class ModelRequest:
    """A board a game waits on: what the player sees, as the model's input.

    Attributes
    ----------
    observation : Observation
        The position (checked once, by :meth:`~nnsweeper.solvers.base.Turns.observation`).
    """

    observation: Observation

    @property
    def grid(self) -> np.ndarray:
        """The visible grid (int8, read-only)."""
        return self.observation.grid

    @property
    def total_mines(self) -> int:
        """Mines on the board, flagged ones included."""
        return self.observation.total_mines

    @property
    def flags(self) -> np.ndarray:
        """The solver's flags on that grid (bool, read-only)."""
        return self.observation.flags


def _reads_observations(model) -> bool:
    """Whether ``model`` is a :class:`~nnsweeper.models.MineModel`, whose ``predict_proba``
    takes Observations (a model of another kind is given grids, totals and flags)."""
    base = sys.modules.get("nnsweeper.models.base")  # not loaded: no MineModel exists
    return base is not None and isinstance(model, base.MineModel)


class NeuralSolver(Solver):
    """Play from a mine-probability model (:class:`~nnsweeper.models.MineModel`).

    Parameters
    ----------
    model : str, path or MineModel, default "gnn"
        A bundled model name (``"cnn"``, ``"gnn"``), a checkpoint path, or a model.
        Names and paths are loaded on first use (:func:`nnsweeper.load_model`).
    hybrid : bool, default False
        Make every certain move with the local rules and the exact engine first and
        ask the model only for guesses.
    start : {"center", "corner", "random"} or (row, col), default "center"
        Where the first click goes.
    open_below : float, default 0.002
        Pure play: covered cells the model gives less than this are opened without
        proof, as ``"model"`` moves (0: every pick is a guess). Frontier cells (those
        next to a revealed number) below it are opened together, in one move, up to
        ``batch_risk``; the interior is one candidate (its cells are exchangeable given
        the frontier, and nothing on the board checks the model's value for them), so at
        most one interior cell is opened per move, and only when it is the safest choice.
    batch_risk : float, default 0.01
        Pure play: the most summed model probability one move's batch of frontier cells
        may carry. The cells below ``open_below`` are taken in increasing order of
        probability while their sum stays within it (the first always), and the rest
        wait for the next call of the model, which sees what the batch revealed.
        ``math.inf`` opens every frontier cell below ``open_below`` at once.
    batch_interior : bool, default False
        Pure play: let the batch open every interior cell below ``open_below`` too
        (the rule of nnsweeper 0.x before the interior became one candidate; for
        comparisons only: a model that under-rates a sparse interior opens all of it).
    flag_above : float, default 0.995
        Pure play: covered cells the model gives more than this are flagged and
        passed to the model as known mines (1 never flags). Flags never outnumber the
        mines, and a flag on a cell that a flood fill opened is dropped.
    tie_break : str (one of ``TIE_BREAKS``), default "prob_zero"
        Among cells whose probabilities fall in the same ``tolerance`` level, as for
        :class:`~nnsweeper.CSPSolver` (computed from the model's probabilities).
    tolerance : float, default 1e-3
        Probabilities are compared in levels of this width (see
        :func:`~nnsweeper.solvers.ranking.rank_cells`): model outputs closer than that
        carry no real preference, and batching changes them by about 1e-7.
    device : str, default "cpu"
        Where a model loaded by name or path runs ("cpu", "cuda", "auto").
        Solvers with the same model name or path, device and architecture share one
        loaded copy per process (the solvers never change it).
    pool_interior : bool, default True
        Give every interior cell (covered, unflagged, with no revealed neighbour) the
        mean of the model's probabilities for them: such cells are exchangeable given
        the frontier, so differences between them are the model's noise (the GNN
        already gives them one value; a CNN does not).
    interior_count : bool, default False
        Give the interior, instead, the share of the mines it must hold: the mines left
        (total less flags) less the frontier's expected mines under the model, over the
        interior cells, clipped to [0, 1]. It is exact when the frontier values are (the
        interior's cells are exchangeable, so each holds that share), whatever the model
        said about the interior itself: an output layer that makes the model's interior
        obey the mine count. Implies pooling.
    arch : str, optional
        The architecture ``model`` must have (a name of
        :data:`~nnsweeper.models.ARCHITECTURES`; the registry's solvers set it).
    batch_size : int, default 512
        Boards per forward pass in :meth:`play_many`.
    symmetric : bool, default False
        Ask the model for the mean of its answers over the board's symmetries (8 on a
        square board, 4 otherwise: ``predict_proba(symmetric=True)`` of a
        :class:`~nnsweeper.models.MineModel`), at that many times the model's cost: a
        network that is not symmetric then plays as if it were.
    """

    name = "neural"
    #: The architecture of the registry's solver classes (None: any model).
    arch: str | None = None
    #: The pure policy's batch options' values before they were options (every cell below
    #: ``open_below`` opened at once, the interior too): a game recorded without them was
    #: played so, and is replayed so.
    UNSET = {"batch_risk": float("inf"), "batch_interior": True}

    def __init__(self, model="gnn", *, hybrid=False, start="center", open_below=OPEN_BELOW,
                 flag_above=FLAG_ABOVE, tie_break="prob_zero", tolerance=1e-3, device="cpu", batch_size=512,
                 pool_interior=True, arch=None, batch_risk=BATCH_RISK, batch_interior=False, symmetric=False,
                 interior_count=False):
        super().__init__(start=start)
        from nnsweeper.models.registry import get_architecture

        if arch is not None:
            get_architecture(arch)
        if not isinstance(model, str | os.PathLike) and not callable(getattr(model, "predict_proba", None)):
            raise ValueError(
                f"model must be a bundled model name, a checkpoint path or a MineModel; got {model!r}"
            )
        given_arch = None if isinstance(model, str | os.PathLike) else getattr(model, "arch", arch)
        if arch is not None and given_arch is not None and given_arch != arch:
            raise ValueError(f"this solver plays with a {arch!r} model; got a {model.arch!r} model")
        check_tie_break(tie_break)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer of at least 1; got {batch_size!r}")
        self.hybrid = bool(hybrid)
        self.open_below = check_unit("open_below", open_below, open_high=True)
        self.flag_above = check_unit("flag_above", flag_above)
        if self.flag_above <= self.open_below:
            raise ValueError(f"flag_above ({flag_above}) must be above open_below ({open_below})")
        number = isinstance(batch_risk, numbers.Real) and not isinstance(batch_risk, bool)
        if not (number and batch_risk >= 0):  # nan fails too
            raise ValueError(f"batch_risk must be a number of at least 0 (math.inf: no cap); "
                             f"got {batch_risk!r}")
        self.batch_risk = float(batch_risk)
        self.batch_interior = bool(batch_interior)
        self.symmetric = bool(symmetric)
        self.tie_break = tie_break
        self.tolerance = check_unit("tolerance", tolerance, open_high=True)
        self.device = device
        self.batch_size = batch_size
        self.pool_interior = bool(pool_interior)
        self.interior_count = bool(interior_count)
        self.arch = arch
        given = not isinstance(model, str | os.PathLike)
        self.model_source = model if given else os.fspath(model)
        self._model = model if given else None

    def options(self) -> dict:
        source = self.model_source
        return {
            **super().options(),
            "model": source if isinstance(source, str) else f"<{type(source).__name__}>",
            "hybrid": self.hybrid,
            "open_below": self.open_below,
            "flag_above": self.flag_above,
            # The pure policy's batches, where they differ from the rule before they were options
            # (UNSET); the hybrid opens no batch, so its options stay as they were.
            **({} if self.hybrid else {k: getattr(self, k) for k, unset in self.UNSET.items()
                                       if getattr(self, k) != unset}),
            "tie_break": self.tie_break,
            "tolerance": self.tolerance,
            "pool_interior": self.pool_interior,
            **({"interior_count": True} if self.interior_count else {}),
            **({"symmetric": True} if self.symmetric else {}),
        }

    def weights(self) -> dict[str, str]:
        from nnsweeper.models.digest import model_weights

        return model_weights(self.model_source)

    def __getstate__(self) -> dict:
        # A model loaded from a name or path is loaded again where the solver lands.
        state = self.__dict__.copy()
        if isinstance(self.model_source, str):
            state["_model"] = None
        return state

    @property
    def model(self):
        """The model (loaded on first use, once per process for a name or path)."""
        if self._model is None:
            _, self._model = _shared_model(self.model_source, self.device, self.arch)
        return self._model

    def prepare(self) -> float:
        """Load the model now, so that no game's clock runs while it loads.

        The evaluation harness calls it in every process that plays, before the
        games' clocks start. A model given by name or path is loaded once per process
        and shared by the solvers that play it (a solver sent to a worker process is
        a copy without its model: it finds the model the worker loaded before).

        Returns
        -------
        float
            Seconds this process spent loading this solver's model (the imports of the
            first load included) that no earlier call reported: the load time on the
            first call in a process, 0.0 afterwards, and 0.0 for a model given as an
            object.
        """
        if not isinstance(self.model_source, str):
            return 0.0
        if self._model is None:
            key, self._model = _shared_model(self.model_source, self.device, self.arch)
        else:
            key = _model_key(self.model_source, self.device, self.arch)
            if _LOADED.get(key) is not self._model:  # a model put in place by hand
                return 0.0
        return _UNREPORTED.pop(key, 0.0)

    @property
    def training_seeds(self) -> dict | None:
        """The seed streams of the model's training data (a manifest-like dict), if recorded.

        Read from the checkpoint's description where the model is not loaded in this process
        (the process that hands games to workers need not import torch), else from the model.
        """
        meta = None
        if self._model is None:
            from nnsweeper.models.digest import model_description

            meta = model_description(self.model_source, self.arch)
        if meta is None:
            meta = getattr(self.model, "checkpoint_meta", None) or {}
        streams = (meta.get("extra") or {}).get("data_seed_streams")
        return {"seed_streams": streams} if streams else None

    # ----------------------------------------------------------------- playing
    def play(self, env, rng, *, on_decision=None) -> GameRecord:
        """Reset ``env``, play one game with randomness from ``rng``, return its record.

        ``on_decision`` is as for :meth:`Solver.play`.
        """
        if on_decision is None:
            rec = self.play_many([env], [rng])[0]
        else:
            rec = self.play_many([env], [rng], on_decision=lambda _, decision: on_decision(decision))[0]
        self.last_record = rec
        return rec

    def play_many(self, envs: Sequence, rngs: Sequence, *, on_decision=None) -> list[GameRecord]:
        """Play one game on each env in lockstep, asking the model for all waiting boards at once.

        Parameters
        ----------
        envs : sequence of env
            Seed-compatible environments (each is reset).
        rngs : sequence of numpy.random.Generator
            One per env: the game's randomness.
        on_decision : callable, optional
            Called as ``on_decision(k, decision)`` after every decision of game ``k``
            (a :class:`~nnsweeper.solvers.base.Decision`).

        Returns
        -------
        list of GameRecord
            In env order; the same records as playing each game with :meth:`play`.
            Each record's ``seconds`` is the game's own time in lockstep play: the
            time spent advancing that game, plus a share of each batched model call
            it took part in (a call over B boards charges each of them 1/B of its
            time). Over all games they add up to the time of this call, but for the
            loading of the model (see :meth:`prepare`) and the bookkeeping between
            steps.
        """
        envs, rngs = list(envs), list(rngs)
        if len(envs) != len(rngs):
            raise ValueError(f"give one rng per env; got {len(envs)} envs and {len(rngs)} rngs")
        _ = self.model  # loaded (if it is not yet) before any game's clock runs
        games = [self._game(env, rng, None if on_decision is None else partial(on_decision, k))
                 for k, (env, rng) in enumerate(zip(envs, rngs, strict=True))]
        records: list[GameRecord | None] = [None] * len(games)
        seconds = [0.0] * len(games)
        waiting = {}
        for k, game in enumerate(games):
            self._advance(k, game, None, waiting, records, seconds)
        while waiting:
            keys = list(waiting)
            requests = [waiting.pop(k) for k in keys]
            t0 = _clock()
            probs = self.predict_requests(requests)
            share = (_clock() - t0) / len(keys)
            for k, p in zip(keys, probs, strict=True):
                seconds[k] += share
                self._advance(k, games[k], p, waiting, records, seconds)
        for rec, t in zip(records, seconds, strict=True):
            rec.seconds = t
        return records

    def predict_requests(self, requests: Sequence[ModelRequest]) -> list[np.ndarray]:
        """The model's P(mine) maps for the boards of ``requests``, in one batched call.

        What :meth:`turn_steps` waits for: one (rows, cols) array per request, in order.
        """
        model = self.model
        if _reads_observations(model):
            return list(model.predict_proba([r.observation for r in requests], batch_size=self.batch_size,
                                            symmetric=self.symmetric))
        if self.symmetric:
            raise ValueError(f"symmetric=True needs a MineModel, whose predict_proba averages over the "
                             f"board's symmetries; got a {type(model).__name__}")
        return list(model.predict_proba(
            [r.grid for r in requests], [r.total_mines for r in requests],
            flags=[r.flags for r in requests], batch_size=self.batch_size,
        ))

    def turn_steps(self, game: Turns, flags: np.ndarray, rng) -> Generator[ModelRequest, np.ndarray, bool]:
        """One turn as a generator: it yields a :class:`ModelRequest` whenever it needs the
        model and is sent the answer (a map of :meth:`predict_requests`); it returns
        whether it made a move or placed a flag, as :meth:`Solver.turn` does.

        The hybrid solver starts with the certain moves and asks only when it must
        guess; the pure one asks every turn.
        """
        step = self._hybrid_turn if self.hybrid else self._pure_turn
        return (yield from step(game, flags, rng))

    @staticmethod
    def _advance(k: int, game: Generator, answer, waiting: dict, records: list, seconds: list) -> None:
        """Run game ``k`` up to its next model request (or its end), adding the time to ``seconds[k]``."""
        t0 = _clock()
        try:
            waiting[k] = game.send(answer)
        except StopIteration as stop:
            records[k] = stop.value
        seconds[k] += _clock() - t0

    def _game(self, env, rng, on_decision=None) -> Generator[ModelRequest, np.ndarray, GameRecord]:
        """One game; yields the boards it needs probabilities for, returns the record."""
        game, flags = self.begin(env, rng)
        while not game.done:
            before = game.position(flags) if on_decision is not None else None
            if not (yield from self.turn_steps(game, flags, rng)):
                break
            if before is not None:
                on_decision(game.decision(before))
        return self.end(game, flags)

    def _ask(self, game: Turns, flags: np.ndarray) -> Generator[ModelRequest, np.ndarray, np.ndarray]:
        game.record.model_calls += 1
        p = yield ModelRequest(game.observation(flags))
        p = np.array(p, dtype=float)
        return self.interior_values(p, game.grid, flags, game.env.mines)

    def interior_values(self, p, grid, flags, total_mines):
        """The model's map ``p`` as the solver plays it: the interior pooled
        (``pool_interior``) or given its share of the mines left (``interior_count``).

        One board as numpy arrays (``p`` may be changed in place), or boards stacked as
        torch tensors (``total_mines`` an int or one per board).
        """
        if self.interior_count:
            return count_interior(p, grid, flags, total_mines)
        return pool_interior(p, grid, flags) if self.pool_interior else p

    @staticmethod
    def _reveal_pick(game: Turns, i: int, j: int, kind: str, probability: float) -> None:
        rec = game.record
        game.reveal(i, j, kind, probability)
        rec.model_picks += 1
        rec.model_safe += not game.lost

    def _pure_turn(self, game: Turns, flags: np.ndarray, rng):
        grid = game.grid
        # A wrong flag on a safe cell can be opened by a flood fill: drop it.
        flags &= grid < 0
        unknown = (grid < 0) & ~flags
        if not unknown.any():
            # Not reached in a game that goes on: flags never outnumber the mines, so
            # a covered safe cell is always unflagged.
            return False
        p = yield from self._ask(game, flags)
        new_flags, unknown, low = (m[0] for m in self.pure_masks(p[None], grid[None], unknown[None],
                                                                  flags[None], game.env.mines))
        flags[...] = new_flags
        if low.any():
            for i, j in np.argwhere(low):
                if game.env.mask[i, j] == 1:
                    self._reveal_pick(game, i, j, "model", float(p[i, j]))
                    if game.done:
                        break
            return True
        # No frontier cell to open: the safest cell alone (an interior cell below
        # open_below is opened as the model's move, anything else is its guess).
        i, j = rank_cells(p, unknown, grid, rng, self.tie_break, self.tolerance, coarse_ties=True)[0]
        self._reveal_pick(game, i, j, "model" if p[i, j] < self.open_below else "guess", float(p[i, j]))
        return True

    def pure_masks(self, p, grid, unknown, flags, mines):
        """The pure policy's flags and batch of openings, on boards stacked (B, rows, cols): numpy
        arrays (one game's turn) or torch tensors (:func:`nnsweeper.batched.play_batched`'s turn
        of every game), the same rule for both.

        Unknown cells rated above ``flag_above`` are flagged, unless the flags would then
        outnumber the ``mines`` (an int or one per board). The batch to open: the unknown
        cells left that are rated below ``open_below`` and touch a revealed number (interior
        cells too with ``batch_interior``), taken in increasing order of probability (then
        board order) while their summed probability stays within ``batch_risk``; the first
        is always taken. An empty batch leaves the move to the safest cell
        (:func:`~nnsweeper.solvers.ranking.rank_cells`), which may be an interior one.

        Returns
        -------
        flags, unknown, low : bool arrays of the input's kind, (B, rows, cols)
            The flags after the turn, the cells still unknown, the cells to open.
        """
        sure = unknown & (p > self.flag_above)
        n_sure = sure.sum((1, 2))
        sure = sure & ((n_sure > 0) & (flags.sum((1, 2)) + n_sure <= mines))[:, None, None]
        flags = flags | sure
        unknown = unknown & ~sure
        low = unknown & (p < self.open_below)
        if not self.batch_interior:
            low = low & _frontier(grid)
        if self.batch_risk < float("inf"):
            low = _within_risk(p, low, self.batch_risk)
        return flags, unknown, low

    def _hybrid_turn(self, game: Turns, flags: np.ndarray, rng):
        a = self.certain_moves(game, flags)
        if isinstance(a, bool):
            return a
        p = yield from self._ask(game, flags)
        # The model gives the mines just flagged P = 1: they rank last, as in CSPSolver.
        i, j = rank_cells(p, a.unknown, game.grid, rng, self.tie_break, self.tolerance, coarse_ties=True)[0]
        # The record keeps the exact risk the guess took; the model chose it.
        self._reveal_pick(game, i, j, "guess", float(a.probabilities[i, j]))
        return True


def _frontier(grid):
    """Cells next to a revealed cell (boards (B, rows, cols), numpy or torch)."""
    if isinstance(grid, np.ndarray):
        return dilate(grid >= 0)
    from nnsweeper import grid_torch

    return grid_torch.dilate(grid >= 0)


def _within_risk(p, low, risk: float):
    """The cells of ``low`` taken in increasing order of ``p`` (then board order) while their
    summed ``p`` stays within ``risk``, the first always (boards (B, rows, cols), numpy or torch)."""
    b = low.shape[0]
    if isinstance(p, np.ndarray):
        q = np.where(low, p, np.inf).reshape(b, -1)
        order = np.argsort(q, axis=1, kind="stable")
        ranked = np.take_along_axis(q, order, 1)
        finite = np.isfinite(ranked)
        total = np.cumsum(np.where(finite, ranked, 0.0), axis=1)
        first = np.arange(ranked.shape[1]) == 0
        keep = np.zeros_like(finite)
        np.put_along_axis(keep, order, finite & ((total <= risk) | first), 1)
        return keep.reshape(low.shape)
    import torch

    q = torch.where(low, p, torch.inf).reshape(b, -1)
    ranked, order = torch.sort(q, dim=1, stable=True)
    finite = torch.isfinite(ranked)
    total = torch.cumsum(torch.where(finite, ranked, 0.0), dim=1)
    first = torch.arange(ranked.shape[1], device=p.device) == 0
    keep = torch.zeros_like(finite).scatter(1, order, finite & ((total <= risk) | first))
    return keep.reshape(low.shape)


def count_interior(p, grid, flags, total_mines):
    """``p`` with every interior cell at the share of the mines the interior must hold.

    That share is the mines left (``total_mines`` less the flags) less the frontier's
    expected mines (the sum of ``p`` over the unknown cells next to a revealed one), over
    the interior cells, clipped to [0, 1]. Given the frontier, the interior's cells are
    exchangeable, so with the exact frontier values this is the exact interior value.

    Parameters
    ----------
    p, grid, flags : ndarray (rows, cols), or Tensor (B, rows, cols)
        As for :func:`pool_interior` (numpy ``p`` is modified in place and returned).
    total_mines : int, or int Tensor (B,)
        Mines on the board, flagged ones included.
    """
    if isinstance(p, np.ndarray):
        unknown = (grid < 0) & ~flags
        interior = unknown & ~dilate(grid >= 0)
        n = int(interior.sum())
        if n:
            left = int(total_mines) - int(flags.sum()) - float(p[unknown & ~interior].sum())
            p[interior] = min(max(left / n, 0.0), 1.0)
        return p
    import torch

    from nnsweeper import grid_torch

    unknown = (grid < 0) & ~flags
    interior = unknown & ~grid_torch.dilate(grid >= 0)
    total = torch.as_tensor(total_mines, device=p.device).reshape(-1, 1, 1).to(p.dtype)
    frontier_mines = torch.where(unknown & ~interior, p, 0.0).sum((1, 2), keepdim=True)
    left = total - flags.sum((1, 2), keepdim=True).to(p.dtype) - frontier_mines
    share = (left / interior.sum((1, 2), keepdim=True).clamp(min=1)).clamp(0.0, 1.0)
    return torch.where(interior, share, p)


def pool_interior(p, grid, flags):
    """``p`` with every interior cell of a board at their mean.

    Interior cells (covered, unflagged, with no revealed neighbour) are exchangeable
    given the frontier, so they share one probability; differences a model gives them
    are its noise.

    Parameters
    ----------
    p, grid, flags : ndarray (rows, cols), or Tensor (B, rows, cols)
        One board's P(mine), visible grid and flags as numpy arrays (``p`` is modified
        in place and returned), or boards stacked as torch tensors, as batched play
        holds them (a new tensor is returned).
    """
    if isinstance(p, np.ndarray):
        interior = (grid < 0) & ~flags & ~dilate(grid >= 0)
        if interior.any():
            p[interior] = p[interior].mean()
        return p
    import torch

    from nnsweeper import grid_torch

    interior = (grid < 0) & ~flags & ~grid_torch.dilate(grid >= 0)
    count = interior.sum((1, 2), keepdim=True)
    mean = torch.where(interior, p, 0.0).sum((1, 2), keepdim=True) / count.clamp(min=1)
    return torch.where(interior, mean, p)


#: The solver classes made by :func:`neural_solver_class`, by (name, title, hybrid): one class
#: per architecture and kind, so that a class found twice is the same class.
_CLASSES: dict[tuple[str, str, bool], type[NeuralSolver]] = {}


def neural_solver_class(arch, hybrid: bool) -> type[NeuralSolver]:
    """The solver class of an architecture: its model alone, or logic first.

    :mod:`nnsweeper.solvers` lists these as ``ARCH`` and ``hybrid-ARCH`` for every
    entry of :data:`~nnsweeper.models.ARCHITECTURES`; each class is made once per
    process and found by its class name in this module (so that it pickles by
    reference).

    Parameters
    ----------
    arch : Architecture
        A registry entry (:mod:`nnsweeper.models.registry`).
    hybrid : bool
        Logic first and the model for guesses (``hybrid-ARCH``), or the model alone (``ARCH``).

    Returns
    -------
    type
        A :class:`NeuralSolver` subclass named after the architecture's title
        (``GNNSolver``, ``HybridGNNSolver``) whose model defaults to the bundled
        weights of the architecture (its name) and must be of that architecture.
    """
    key = (arch.name, arch.title, bool(hybrid))
    cls = _CLASSES.get(key)
    if cls is None:
        cls = _CLASSES[key] = _make_class(arch.name, arch.title, bool(hybrid))
    return cls


def _make_class(arch_name: str, arch_title: str, hybrid: bool) -> type[NeuralSolver]:
    title = f"Hybrid{arch_title}Solver" if hybrid else f"{arch_title}Solver"
    name = f"hybrid-{arch_name}" if hybrid else arch_name
    what = (f"Logic first, a {arch_title} model for guesses" if hybrid
            else f"Play from a {arch_title} model alone")

    def __init__(self, model=arch_name, **options):
        NeuralSolver.__init__(self, model, hybrid=hybrid, arch=arch_name, **options)

    cls = type(title, (NeuralSolver,), {
        "__init__": __init__, "name": name, "arch": arch_name, "__module__": __name__,
        "__doc__": f"{what} (registry name ``{name}``); see :class:`NeuralSolver`.",
    })
    __init__.__qualname__ = f"{title}.__init__"
    return cls


def __getattr__(name: str):
    # The architectures' solver classes by their class names (GNNSolver, HybridGNNSolver, ...):
    # where pickle looks for them, in a worker process too.
    if name.endswith("Solver"):
        from nnsweeper.models.registry import ARCHITECTURES

        for arch in ARCHITECTURES.values():
            for hybrid in (False, True):
                if name == f"{'Hybrid' if hybrid else ''}{arch.title}Solver":
                    return neural_solver_class(arch, hybrid)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
