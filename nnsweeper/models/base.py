"""The common interface of the neural mine predictors, and device selection.

:class:`MineModel` is what every model (:class:`~nnsweeper.models.cnn.MineCNN`,
:class:`~nnsweeper.models.gnn.MineGNN`) derives from. It fixes two interfaces:

* :meth:`MineModel.predict_proba`: visible boards in, P(mine) per cell out, the one
  entry point of everything that plays or evaluates a model;
* :meth:`MineModel.outputs`: a training batch in, one row per prediction out (logit,
  targets, weight, ...), the same for both architectures, so that losses and
  metrics are written once.

A model's ``config`` is a complete, JSON-able dict (every key with its value,
``"arch"`` included): :meth:`MineModel.from_config` rebuilds the same model from it,
which is how checkpoints (:mod:`nnsweeper.models.checkpoint`) are read back.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch

from nnsweeper.errors import InconsistentBoardError, InvalidBoardError, NnsweeperError, check_int

__all__ = ["ARCHS", "MineModel", "ModelError", "resolve_device"]

#: Architecture names that :meth:`MineModel.from_config` can build.
ARCHS: tuple[str, ...] = ("cnn", "gnn")

_REGISTRY: dict[str, type[MineModel]] = {}


class ModelError(NnsweeperError):
    """A model configuration, device or model input that does not fit the model."""


# --------------------------------------------------------------------------- devices
def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """The torch device that ``device`` names.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda", "cuda:N"} or torch.device, default "auto"
        ``"auto"`` is the first CUDA device when CUDA is available, else the CPU.

    Returns
    -------
    torch.device

    Raises
    ------
    ModelError
        An unknown device name, or a CUDA device when CUDA is not available (or the
        index is beyond the devices present).
    """
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not isinstance(device, str | torch.device):
        raise ModelError(
            f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or a torch.device; got {device!r}"
        )
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise ModelError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}") from None
    if dev.type == "cpu":
        return torch.device("cpu")
    if dev.type != "cuda":
        raise ModelError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}")
    if not torch.cuda.is_available():
        raise ModelError(
            f"device {str(device)!r} asks for CUDA, but CUDA is not available in this torch installation "
            f"(torch {torch.__version__}); use 'cpu' or 'auto'"
        )
    count = torch.cuda.device_count()
    if dev.index is not None and dev.index >= count:
        raise ModelError(f"device {str(device)!r} does not exist: this machine has {count} CUDA device(s)")
    return dev


# --------------------------------------------------------------------------- config checks
def config_int(config: Mapping, key: str, minimum: int) -> int:
    """``config[key]`` as an int, or a :class:`ModelError` naming the key and the rule."""
    return check_int(f"config[{key!r}]", config[key], minimum, ModelError)


def config_choice(config: Mapping, key: str, choices: Sequence[str]) -> str:
    """``config[key]``, which must be one of ``choices``."""
    value = config[key]
    if not isinstance(value, str) or value not in choices:
        raise ModelError(f"config[{key!r}] must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def config_bool(config: Mapping, key: str) -> bool:
    """``config[key]``, which must be a bool."""
    value = config[key]
    if not isinstance(value, bool | np.bool_):
        raise ModelError(f"config[{key!r}] must be true or false; got {value!r}")
    return bool(value)


# --------------------------------------------------------------------------- input normalisation
def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _as_boards(grids) -> tuple[list, str]:
    """The boards of ``grids`` as a list, and the kind of input: "single", "stack" or "list"."""
    if isinstance(grids, torch.Tensor):
        grids = grids.detach().cpu().numpy()
    if isinstance(grids, np.ndarray):
        if grids.ndim == 2:
            return [grids], "single"
        if grids.ndim == 3:
            return list(grids), "stack"
        raise InvalidBoardError(
            f"grids must be one board (rows, cols), a stack (boards, rows, cols) or a list of boards; "
            f"got an array of shape {grids.shape}"
        )
    if isinstance(grids, Sequence) and not isinstance(grids, str | bytes):
        if not grids:
            raise InvalidBoardError("grids must hold at least one board; got an empty list")
        first = grids[0]
        if isinstance(first, torch.Tensor):
            first = first.detach().cpu().numpy()
        if np.ndim(first) == 1:  # one board written as nested lists
            return [np.asarray(grids)], "single"
        boards = []
        for b, g in enumerate(grids):
            if isinstance(g, torch.Tensor):
                g = g.detach().cpu().numpy()
            if np.ndim(g) != 2:
                raise InvalidBoardError(
                    f"each board of a list must be 2-D (rows, cols); board {b} has shape {np.shape(g)}"
                )
            boards.append(g)
        return boards, "list"
    raise InvalidBoardError(
        f"grids must be an array of boards or a list of boards; got {type(grids).__name__}"
    )


def _per_board_totals(total_mines, n: int, kind: str) -> list:
    if isinstance(total_mines, torch.Tensor):
        total_mines = total_mines.detach().cpu().numpy()
    if _is_int(total_mines):
        return [int(total_mines)] * n
    if isinstance(total_mines, np.ndarray) and total_mines.ndim == 0:
        return [total_mines.item()] * n
    if kind == "single":
        raise InvalidBoardError(f"total_mines must be an integer for one board; got {total_mines!r}")
    if isinstance(total_mines, np.ndarray | Sequence) and not isinstance(total_mines, str | bytes):
        values = list(np.asarray(total_mines).reshape(-1)) if isinstance(total_mines, np.ndarray) else list(
            total_mines
        )
        if np.ndim(total_mines) != 1 or len(values) != n:
            raise InvalidBoardError(
                f"total_mines must be an integer or hold one integer per board ({n}); "
                f"got shape {np.shape(total_mines)}"
            )
        return [v.item() if isinstance(v, np.generic) else v for v in values]
    raise InvalidBoardError(
        f"total_mines must be an integer or a sequence of one integer per board; got {total_mines!r}"
    )


def _per_board_flags(flags, n: int, kind: str) -> list:
    if flags is None:
        return [None] * n
    if isinstance(flags, torch.Tensor):
        flags = flags.detach().cpu().numpy()
    if kind == "single":
        return [flags]
    if isinstance(flags, np.ndarray):
        if flags.ndim != 3 or flags.shape[0] != n:
            raise InvalidBoardError(
                f"flags must be None, an array (boards, rows, cols) or a list with one entry per board "
                f"({n}); got an array of shape {flags.shape}"
            )
        return list(flags)
    if isinstance(flags, Sequence) and not isinstance(flags, str | bytes):
        if len(flags) != n:
            raise InvalidBoardError(f"flags must have one entry per board ({n}); got {len(flags)}")
        return list(flags)
    raise InvalidBoardError(
        f"flags must be None, an array or a list of per-board flags; got {type(flags).__name__}"
    )


def board_error(exc: Exception, b: int, n: int) -> Exception:
    """``exc`` (a board error) with the board's number in front when there are several boards."""
    if n == 1 or not isinstance(exc, InvalidBoardError | InconsistentBoardError):
        return exc
    return type(exc)(f"board {b}: {exc}")


def board_batches(grids: list, totals: list, flags: list, batch_size: int, build_batch, build_one):
    """Model inputs for many boards: boards of one shape together, ``batch_size`` at a time.

    Yields ``(indices, grids (k, r, c), flags (k, r, c) bool, build_batch(grids, totals,
    flags))`` for chunks of boards of one shape, in order of first appearance. When
    ``build_batch`` refuses a chunk, ``build_one(grid, total, flags)`` is run on its
    boards one by one, so the error names the board at fault (:func:`board_error`).
    """
    n = len(grids)
    boards = [np.asarray(g) for g in grids]
    groups: dict[tuple, list[int]] = {}
    for b, g in enumerate(boards):
        groups.setdefault(g.shape, []).append(b)
    for members in groups.values():
        for start in range(0, len(members), batch_size):
            chunk = members[start : start + batch_size]
            try:
                g = np.stack([boards[b] for b in chunk])
                f = np.stack([np.zeros(g.shape[1:], dtype=bool) if flags[b] is None else np.asarray(flags[b])
                              for b in chunk])
                inputs = build_batch(g, [totals[b] for b in chunk], f)
            except (InvalidBoardError, InconsistentBoardError, ValueError, TypeError):
                for b in chunk:
                    try:
                        build_one(grids[b], totals[b], flags[b])
                    except (InvalidBoardError, InconsistentBoardError) as exc:
                        raise board_error(exc, b, n) from None
                raise
            yield chunk, g, f.astype(bool), inputs


# --------------------------------------------------------------------------- the base class
class MineModel(torch.nn.Module):
    """Base class of the mine predictors: configuration, prediction and training interface.

    Subclasses set :attr:`arch` and :attr:`DEFAULTS`, call ``super().__init__(config)``
    and implement :meth:`outputs` and :meth:`_predict_boards`.

    Parameters
    ----------
    config : dict, optional
        Architecture settings; missing keys take :attr:`DEFAULTS`. An ``"arch"`` key,
        when present, must name this class's architecture.

    Attributes
    ----------
    arch : str
        The architecture name (a key of :data:`ARCHS`).
    config : dict
        The complete configuration, ``"arch"`` included; JSON-able, and
        ``MineModel.from_config(model.config)`` builds the same architecture.

    Raises
    ------
    ModelError
        A configuration that is not a dict, has unknown keys, the wrong ``"arch"``,
        or values outside their rules.
    """

    arch: ClassVar[str] = ""
    DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.arch:
            _REGISTRY[cls.arch] = cls

    def __init__(self, config: Mapping | None = None):
        super().__init__()
        self.config: dict[str, Any] = self.check_config(config)

    # ----------------------------------------------------------------- configuration
    @classmethod
    def check_config(cls, config: Mapping | None) -> dict[str, Any]:
        """``config`` completed with :attr:`DEFAULTS` and checked; ``"arch"`` comes first.

        Raises
        ------
        ModelError
            As for the constructor.
        """
        if config is None:
            config = {}
        if not isinstance(config, Mapping):
            raise ModelError(f"a model config must be a dict; got {type(config).__name__}")
        arch = config.get("arch", cls.arch)
        if arch != cls.arch:
            raise ModelError(f"config['arch'] must be {cls.arch!r} for {cls.__name__}; got {arch!r}")
        unknown = [k for k in config if k != "arch" and k not in cls.DEFAULTS]
        if unknown:
            raise ModelError(
                f"unknown config key {unknown[0]!r} for a {cls.arch!r} model; "
                f"the keys are {', '.join(cls.DEFAULTS)}"
            )
        full = {"arch": cls.arch, **json.loads(json.dumps(cls.DEFAULTS))}
        for key, value in config.items():
            if key == "arch":
                continue
            if isinstance(value, tuple):
                value = list(value)
            full[key] = value
        cls._check_values(full)
        try:
            json.dumps(full, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"a model config must be JSON-able ({exc}); got {full!r}") from None
        return full

    @classmethod
    def _check_values(cls, config: dict[str, Any]) -> None:
        """Check (and normalise in place) the values of a complete config."""

    @staticmethod
    def from_config(config: Mapping) -> MineModel:
        """Build the model that ``config["arch"]`` names, with that configuration.

        Parameters
        ----------
        config : dict
            A model config with an ``"arch"`` key (one of :data:`ARCHS`).

        Returns
        -------
        MineModel
            A freshly initialised model.

        Raises
        ------
        ModelError
            No ``"arch"``, an unknown architecture, or a bad configuration.
        """
        if not isinstance(config, Mapping):
            raise ModelError(f"a model config must be a dict; got {type(config).__name__}")
        if "arch" not in config:
            raise ModelError(
                f"a model config needs an 'arch' key ({', '.join(ARCHS)}); got keys {list(config)}"
            )
        arch = config["arch"]
        if not isinstance(arch, str) or arch not in _REGISTRY:
            raise ModelError(f"config['arch'] must be one of {', '.join(map(repr, ARCHS))}; got {arch!r}")
        return _REGISTRY[arch](config)

    # ----------------------------------------------------------------- properties
    @property
    def device(self) -> torch.device:
        """The device of the model's parameters."""
        for p in self.parameters():
            return p.device
        return torch.device("cpu")

    @property
    def n_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    # ----------------------------------------------------------------- training interface
    def outputs(self, batch) -> dict[str, torch.Tensor]:
        """Logits and targets of a training batch, one row per prediction.

        Parameters
        ----------
        batch
            A batch of the architecture's loader: the dict of
            :func:`nnsweeper.datasets.collate_grids` for the CNN, a ``HeteroData``
            batch of :class:`nnsweeper.datasets.GraphDataset` graphs for the GNN.

        Returns
        -------
        dict of 1-D Tensor, all of one length (the rows), on the model's device
            ``"logit"`` float32, ``"prob"`` float32 (the exact P(mine) target),
            ``"mine"`` float32 (the truth, in [0, 1]), ``"weight"`` float32 (cells
            the row stands for), ``"frontier"`` bool, ``"graph"`` int64 (the
            board's place in the batch). The weighted binary cross-entropy of a row
            equals the sum of the cross-entropies of the cells it stands for.
        """
        raise NotImplementedError

    def _predict_boards(self, grids: list, totals: list, flags: list, batch_size: int) -> list[np.ndarray]:
        """Per-board probabilities (unchecked boards: subclasses validate them, naming the board).

        Called by :meth:`predict_proba` in eval mode under ``torch.inference_mode()``;
        returns one float64 (rows, cols) array per board, in order.
        """
        raise NotImplementedError

    # ----------------------------------------------------------------- prediction interface
    def predict_proba(self, grids, total_mines, flags=None, *, batch_size: int = 256):
        """P(mine) for every cell of one or more visible boards.

        Parameters
        ----------
        grids : array_like of int
            One board (rows, cols), a stack of boards (boards, rows, cols), or a list
            of boards of possibly different sizes; -1 covered, 0..8 revealed.
        total_mines : int or sequence of int
            Mines on each board, flagged ones included (an int applies to every board).
        flags : array_like of bool, optional
            Covered cells known to be mines: one array for one board; a stack or a
            list of per-board arrays (or None) for several boards.
        batch_size : int, default 256
            Boards per forward pass.

        Returns
        -------
        ndarray of float64, or list of them
            The input's shape (a list of (rows, cols) arrays for a list input): the
            sigmoid of the model's logit at covered unflagged cells (strictly between
            0 and 1 unless a logit is beyond about +-36), exactly 0.0 at revealed
            cells and 1.0 at flagged cells.

        Raises
        ------
        InvalidBoardError, InconsistentBoardError
            A malformed board, or mine counts or flags that no layout fits (the
            message names the board when there are several).

        Notes
        -----
        Runs under ``torch.inference_mode()`` on the model's device, in eval mode;
        the train/eval mode of every submodule is restored afterwards.
        """
        boards, kind = _as_boards(grids)
        n = len(boards)
        totals = _per_board_totals(total_mines, n, kind)
        fl = _per_board_flags(flags, n, kind)
        batch_size = check_int("batch_size", batch_size, 1, ModelError)

        modes = [(m, m.training) for m in self.modules()]
        try:
            self.eval()
            with torch.inference_mode():
                out = self._predict_boards(boards, totals, fl, batch_size)
        finally:
            for m, mode in modes:
                m.training = mode
        if kind == "single":
            return out[0]
        if kind == "stack":
            return np.stack(out)
        return out
