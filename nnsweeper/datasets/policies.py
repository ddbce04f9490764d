"""The behaviour policies that play a dataset's games, and the recording of one game.

A policy is a solver (:mod:`nnsweeper.solvers`); :func:`record_game` plays one game
with it through :meth:`~nnsweeper.solvers.Solver.play`'s ``on_decision`` callback and
keeps the position before each decision, labelled with the truth and the exact
probabilities. The policies are one table, :data:`POLICIES` (name ->
:class:`Policy`), filled by the :func:`register_policy` lines at the end of this
module: a new policy is a solver and one line there, with a new code.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from nnsweeper.engine import analyze
from nnsweeper.errors import DatasetError, check_unit
from nnsweeper.game import Game, Rules
from nnsweeper.solvers.base import STARTS, Decision, Turns, local_rules
from nnsweeper.solvers.csp import CSPSolver
from nnsweeper.solvers.neural import NeuralSolver
from nnsweeper.solvers.search import SearchSolver
from nnsweeper.solvers.single_point import SinglePointSolver

from .storage import empty_shard

__all__ = ["POLICY_CODES", "POLICIES", "Policy", "FLAG_CODES", "FLAG_MODES", "RECORD_MODES", "ExploreSolver",
           "RECORD_CODES", "RevealSolver", "policy_solver", "record_game", "recorded_flags",
           "register_policy"]


@dataclass(frozen=True)
class Policy:
    """One behaviour policy.

    Attributes
    ----------
    name : str
        Its name (``--policy``, a part's ``:POLICY``).
    code : int
        Part of the seed keys of its games (:attr:`~nnsweeper.datasets.Part.stream_key`),
        so of every dataset's seeds: a new policy takes a new code, and no code changes.
    solver : type
        The solver class that plays it, called as ``solver(start=..., **options)``.
    options : tuple of str
        The options of :func:`record_game` it takes (``"epsilon"``).
    model : str, optional
        The bundled model it plays (the network policies): a dataset's manifest records
        those weights' digest, since its positions depend on them.
    """

    name: str
    code: int
    solver: type
    options: tuple[str, ...] = ()
    model: str | None = None


#: The behaviour policies by name, in registration order (the table at the end of this
#: module, then what :func:`register_policy` adds).
POLICIES: dict[str, Policy] = {}


def register_policy(name: str, code: int, solver: type, *, options: tuple[str, ...] = (),
                    model: str | None = None) -> Policy:
    """Add a behaviour policy to :data:`POLICIES`.

    Parameters
    ----------
    name : str
        Its name; must not be taken.
    code : int
        Its seed-key code (non-negative); must not be taken: codes are never reused.
    solver : type
        A :class:`~nnsweeper.solvers.Solver` subclass, called as ``solver(start=...)``
        plus the ``options`` it takes.
    options : tuple of str, default ()
        The options of :func:`record_game` it takes (``"epsilon"``).
    model : str, optional
        The bundled model the policy plays, if any.

    Returns
    -------
    Policy
    """
    if not isinstance(name, str) or not name or ":" in name or "," in name:
        raise ValueError(f"a policy name must be a non-empty string without ':' or ','; got {name!r}")
    if name in POLICIES:
        raise ValueError(f"policy {name!r} is registered already")
    if isinstance(code, bool) or not isinstance(code, int) or code < 0:
        raise ValueError(f"a policy code must be a non-negative integer; got {code!r}")
    taken = next((p.name for p in POLICIES.values() if p.code == code), None)
    if taken is not None:
        raise ValueError(f"policy code {code} is {taken!r}'s; a new policy takes a new code")
    POLICIES[name] = policy = Policy(name, code, solver, tuple(options), model)
    return policy


class _PolicyCodes(Mapping):
    """:data:`POLICY_CODES`: each policy's code by name, read from :data:`POLICIES` when asked."""

    def __getitem__(self, name: str) -> int:
        return POLICIES[name].code

    def __iter__(self) -> Iterator[str]:
        return iter(POLICIES)

    def __len__(self) -> int:
        return len(POLICIES)

    def __repr__(self) -> str:
        return repr(dict(self))


#: Each policy's seed-key code by name (a read-only view of :data:`POLICIES`).
POLICY_CODES: Mapping[str, int] = _PolicyCodes()

#: The flags a recorded state keeps: all the policy's (every one a proven mine), each
#: of them with probability 1/2, or none. A code other than ``all``'s is part of the
#: seed keys of the configuration's games, as a policy's is.
FLAG_CODES: dict[str, int] = {"all": 0, "some": 1, "none": 2}
#: The flag modes.
FLAG_MODES = tuple(FLAG_CODES)
#: Which states are recorded: every decision, or only those where the policy guessed.
RECORD_MODES = ("all", "guess")
#: A part's own record mode's seed-key code (``guess``: its games are not those of the same
#: configuration recording every decision).
RECORD_CODES: dict[str, int] = {"all": 0, "guess": 1}


def check_choices(policy: str, record: str, start: str, flags: str = "all") -> None:
    if policy not in POLICIES:
        raise DatasetError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if record not in RECORD_MODES:
        raise DatasetError(f"record must be one of {', '.join(RECORD_MODES)}; got {record!r}")
    if start not in STARTS:
        raise DatasetError(f"start must be one of {', '.join(STARTS)}; got {start!r}")
    if flags not in FLAG_MODES:
        raise DatasetError(f"flags must be one of {', '.join(FLAG_MODES)}; got {flags!r}")


class ExploreSolver(CSPSolver):
    """The ``explore`` policy: :class:`~nnsweeper.solvers.CSPSolver` that now and then explores.

    Before each decision, with probability ``epsilon``, it reveals a uniformly random
    covered cell whose exact probability is neither 0 nor 1 (when there is one)
    instead of playing as the CSP solver would.
    """

    name = "explore"

    def __init__(self, *, epsilon: float = 0.1, **options):
        super().__init__(**options)
        self.epsilon = check_unit("epsilon", epsilon)

    def options(self) -> dict:
        return {**super().options(), "epsilon": self.epsilon}

    def turn(self, game: Turns, flags: np.ndarray, rng) -> bool:
        if rng.random() < self.epsilon:
            a = game.analyze(flags)
            open_ = a.unknown & (a.probabilities > 0) & (a.probabilities < 1)
            if open_.any():
                cells = np.argwhere(open_)
                i, j = cells[rng.integers(len(cells))]
                game.reveal(i, j, "guess", float(a.probabilities[i, j]))
                return True
        return super().turn(game, flags, rng)


class RevealSolver(CSPSolver):
    """The ``reveal`` policy: one proven-safe cell per decision, drawn at random.

    Each turn it flags the mines the local rules prove and reveals one cell drawn
    uniformly (from ``rng``) among those the local rules prove safe, or when there
    are none, among those the exact engine proves safe (flagging the engine's mines);
    when nothing is certain it guesses as :class:`~nnsweeper.solvers.CSPSolver` does.
    Unlike ``csp``, which reveals every proven cell at once, it leaves the other
    proven cells covered, as a person clearing a board one click at a time does, so
    its positions have provable cells the model must find.
    """

    name = "reveal"

    def turn(self, game: Turns, flags: np.ndarray, rng) -> bool:
        safe, mines = local_rules(game.grid, flags)
        flags |= mines
        kind = "local"
        if not safe.any():
            if not ((game.grid < 0) & ~flags).any():
                return False
            a = game.analyze(flags)
            flags |= a.mines
            safe, kind = a.safe, "engine"
            if not safe.any():
                i, j = self.choose_guess(a, game.grid, flags, game.env.mines, rng)
                game.reveal(i, j, "guess", float(a.probabilities[i, j]))
                return True
        cells = np.argwhere(safe)
        i, j = cells[rng.integers(len(cells))]
        game.reveal(i, j, kind, 0.0)
        return True


class NetworkPolicy(NeuralSolver):
    """A network policy: the pure :class:`~nnsweeper.solvers.NeuralSolver` of a bundled model
    that never flags (``flag_above=1``), so that the recorded flags are none and every label
    is the exact engine's for the position as it stands."""

    model_name = "gnn"

    def __init__(self, start="center"):
        super().__init__(self.model_name, arch=self.model_name, start=start, flag_above=1.0)

    @classmethod
    def of(cls, model: str) -> type:
        """The policy class of bundled model ``model`` (a module-level class, so that it pickles)."""
        return globals()[f"{model.upper()}Policy"]


class GNNPolicy(NetworkPolicy):
    """The ``gnn`` policy: the bundled GNN's pure play."""

    name = "gnn"
    model_name = "gnn"


class CNNPolicy(NetworkPolicy):
    """The ``cnn`` policy: the bundled CNN's pure play."""

    name = "cnn"
    model_name = "cnn"


def policy_solver(policy: str, start: str, epsilon: float):
    """The solver that plays ``policy``'s games (``epsilon`` for the policies that take it)."""
    entry = POLICIES[policy]
    options = {"epsilon": epsilon} if "epsilon" in entry.options else {}
    return entry.solver(start=start, **options)


def recorded_flags(flags: np.ndarray, mode: str, seed: int) -> np.ndarray:
    """The flags the recorded states keep, from the policy's ``flags`` (n, rows, cols).

    ``all`` keeps them, ``none`` drops them, ``some`` keeps each one independently
    with probability 1/2, drawn from a stream of the game's ``seed`` of its own (the
    policy's play does not depend on it). The policies flag proven mines only, so a
    dropped flag changes no exact probability; the labels are the engine's for the
    flags the state keeps all the same.
    """
    if mode == "all":
        return flags
    if mode == "none":
        return np.zeros_like(flags)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(FLAG_CODES[mode],)))
    return flags & (rng.random(flags.shape) < 0.5)


def record_game(rules: Rules, seed: int, policy: str = "csp", *, record: str = "all", epsilon: float = 0.1,
                start: str = "random", flags: str = "all") -> tuple[dict[str, np.ndarray], bool]:
    """Play one game with a policy and return its recorded, labelled states.

    The state before each decision of the policy after the first click is a
    candidate (the all-covered board before the first click tells nothing); with
    ``record="guess"`` only the decisions where the policy guessed are kept. The
    policy's randomness comes from ``np.random.default_rng(seed)``, the layout from
    the game's own stream of ``seed``. ``flags`` says which of the policy's flags the
    states keep (:func:`recorded_flags`).

    Returns
    -------
    arrays : dict of ndarray
        The per-state shard arrays (see :mod:`nnsweeper.datasets.storage`) except
        ``game`` (set by the caller).
    won : bool
    """
    check_choices(policy, record, start, flags)
    env = Game(rules, seed=seed)
    kept = []

    def keep(decision: Decision) -> None:
        if record == "all" or decision.guessed:
            kept.append(decision)

    rec = policy_solver(policy, start, epsilon).play(env, np.random.default_rng(seed), on_decision=keep)
    if not kept:
        return {k: v for k, v in empty_shard(env.r, env.c).items() if k != "game"}, bool(rec.won)
    layout = env.mine_layout()
    n = len(kept)
    grids = np.stack([d.grid for d in kept])
    kept_flags = recorded_flags(np.stack([d.flags for d in kept]), flags, seed)
    # The policy's own analysis of a position, when it made one with the flags the
    # state keeps, is the label; otherwise the engine's with those flags.
    prob = np.stack([
        (d.analysis if d.analysis is not None and np.array_equal(f, d.flags)
         else analyze(d.grid, env.mines, f)).probabilities
        for d, f in zip(kept, kept_flags, strict=True)
    ])
    arrays = {
        "grid": grids.astype(np.int8),
        "flags": kept_flags,
        "mines": layout[None] & (grids < 0),
        "prob": prob,
        "total_mines": np.full(n, env.mines, dtype=np.int16),
        "game_seed": np.full(n, seed, dtype=np.int64),
        "step": np.array([d.step for d in kept], dtype=np.int16),
        "guess": np.array([d.guessed for d in kept], dtype=bool),
        "won": np.full(n, bool(rec.won)),
    }
    return arrays, bool(rec.won)


# --------------------------------------------------------------------------- the table
# The CSP solver; the single-point solver; CSP that now and then (with probability
# ``epsilon`` per decision) reveals a random covered cell whose exact probability is
# neither 0 nor 1; a player that reveals one proven-safe cell at a time, drawn at
# random, so that provable cells stay covered as in human play; the search solver.
register_policy("csp", 0, CSPSolver)
register_policy("single_point", 1, SinglePointSolver)
register_policy("explore", 2, ExploreSolver, options=("epsilon",))
register_policy("reveal", 3, RevealSolver)
register_policy("search", 4, SearchSolver)
# The bundled networks' own pure play (never flagging: their flags are not proofs), so that
# a dataset holds the positions where they go wrong.
register_policy("gnn", 5, NetworkPolicy.of("gnn"), model="gnn")
register_policy("cnn", 6, NetworkPolicy.of("cnn"), model="cnn")
