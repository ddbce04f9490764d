"""The common interface of the neural mine predictors, and device selection.

:class:`MineModel` is what every model (:class:`~nnsweeper.models.cnn.MineCNN`,
:class:`~nnsweeper.models.gnn.MineGNN`) derives from. It fixes two interfaces:

* :meth:`MineModel.predict_proba`: visible boards in, P(mine) per cell out, the one
  entry point of everything that plays or evaluates a model;
* :meth:`MineModel.outputs`: a training batch in, one row per prediction out (logit,
  targets, weight, ...), the same for both architectures, so that losses and
  metrics are written once.

An architecture declares its settings once, as a frozen dataclass derived from
:class:`ModelConfig` (:attr:`MineModel.Config`: each key with its default, a ``#:``
comment and its rule); a model holds them typed as ``model.settings``. Its
``config`` is the same as a complete, JSON-able dict (every key with its value,
``"arch"`` first): :meth:`MineModel.from_config` rebuilds the same model from it,
which is how checkpoints (:mod:`nnsweeper.models.checkpoint`) are read back. A model
says which kind of input it reads (:attr:`MineModel.inputs`, ``"grid"`` or
``"graph"``, and :meth:`MineModel.input_options`); training takes the loader of that
kind from the datasets package (:func:`nnsweeper.datasets.make_loader`), so that
neither the trainer nor the models name a loader. An architecture that runs its
forward pass on boards held as tensors on the device (:mod:`nnsweeper.batched`)
defines a method ``predict_tensor(grids, total_mines, flags)`` that builds its inputs
there (:meth:`MineCNN.predict_tensor <nnsweeper.models.cnn.MineCNN.predict_tensor>`,
:meth:`MineGNN.predict_tensor <nnsweeper.models.gnn.MineGNN.predict_tensor>`); other
models are asked through :meth:`MineModel.predict_proba` on the host.
"""

from __future__ import annotations

import contextlib
import numbers
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch

from nnsweeper.errors import InconsistentBoardError, InvalidBoardError, check_int
from nnsweeper.grid import apply_symmetry, board_symmetries, invert_symmetry
from nnsweeper.models.config import ModelConfig, ModelError, make_settings
from nnsweeper.models.devices import cuda_unavailable
from nnsweeper.models.registry import all_architectures
from nnsweeper.observation import Observation, Observations, check_alone

__all__ = ["MineModel", "ModelConfig", "ModelError", "board_batches", "check_model_size", "resolve_device",
           "symmetry_gaps",
           "tensor_totals", "MAX_PARAMETERS", "TRAIN_BYTES_PER_PARAMETER"]


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
        raise ModelError(cuda_unavailable(str(device), torch.__version__))
    count = torch.cuda.device_count()
    if dev.index is not None and dev.index >= count:
        raise ModelError(f"device {str(device)!r} does not exist: this machine has {count} CUDA device(s)")
    return dev


# --------------------------------------------------------------------------- input normalisation
def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _as_boards(grids) -> tuple[list, str]:
    """The boards of ``grids`` as a list, and the kind of input: "single", "stack" or "list".

    A board is an :class:`~nnsweeper.observation.Observation` or a raw grid (unchecked).
    """
    if isinstance(grids, Observation):
        return [grids], "single"
    if isinstance(grids, Observations):
        return list(grids), "stack"
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
        if not isinstance(first, Observation) and np.ndim(first) == 1:  # one board as nested lists
            return [np.asarray(grids)], "single"
        boards = []
        for b, g in enumerate(grids):
            if isinstance(g, Observation):
                boards.append(g)
                continue
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
    """``total_mines`` as one entry per board (unchecked values), or an error naming its form."""
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
    """``flags`` as one entry per board (an array or None, unchecked), or an error naming its form."""
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


def _observations(boards: list, totals: list, flags: list) -> list[Observation]:
    """Every board as an :class:`~nnsweeper.observation.Observation`, each checked once.

    Observations are taken as they are (their entries of ``totals`` and ``flags``
    must be None). Raw grids are checked with their ``totals`` and ``flags``, the
    boards of one shape together in whole-array steps; when a group is refused, its
    boards are checked one by one, so that the error names the board at fault
    (:func:`board_error`).
    """
    n = len(boards)
    out: list[Observation | None] = [None] * n
    groups: dict[tuple, list[int]] = {}
    for b, board in enumerate(boards):
        if isinstance(board, Observation):
            try:
                check_alone("Observation", total_mines=totals[b], flags=flags[b])
            except InvalidBoardError as exc:
                raise board_error(exc, b, n) from None
            out[b] = board
        else:
            groups.setdefault(np.shape(board), []).append(b)
    for members in groups.values():
        try:
            g = np.stack([np.asarray(boards[b]) for b in members])
            f = np.stack([np.zeros(g.shape[1:], dtype=bool) if flags[b] is None else np.asarray(flags[b])
                          for b in members])
            checked = Observations.of(g, [totals[b] for b in members], f)
        except (InvalidBoardError, InconsistentBoardError, ValueError, TypeError):
            for b in members:
                try:
                    Observation.of(boards[b], totals[b], flags[b])
                except (InvalidBoardError, InconsistentBoardError) as exc:
                    raise board_error(exc, b, n) from None
            raise
        for k, b in enumerate(members):
            out[b] = checked[k]
    return out


def board_batches(observations: list, batch_size: int, build_batch):
    """Model inputs for many checked boards: boards of one shape together, ``batch_size`` at a time.

    Parameters
    ----------
    observations : list of Observation
        The boards, as :meth:`MineModel.predict_observations` receives them.
    batch_size : int
        Most boards per chunk.
    build_batch : callable
        ``build_batch(batch)`` makes the model's input from a chunk's
        :class:`~nnsweeper.observation.Observations`:
        :func:`~nnsweeper.features.encode_grids`, or a function that passes it on to
        :func:`~nnsweeper.features.build_graph_batch`.

    Yields
    ------
    (indices, grids, flags, inputs)
        The chunk's places in ``observations``, its grids (k, r, c) int8 and flags
        (k, r, c) bool, and ``build_batch``'s result; chunks of one shape in order of
        first appearance.
    """
    groups: dict[tuple, list[int]] = {}
    for b, obs in enumerate(observations):
        groups.setdefault(obs.shape, []).append(b)
    for members in groups.values():
        for start in range(0, len(members), batch_size):
            chunk = members[start : start + batch_size]
            batch = Observations.stack([observations[b] for b in chunk])
            yield chunk, batch.grids, batch.flags, build_batch(batch)


def tensor_totals(total_mines, n: int, device) -> torch.Tensor:
    """``total_mines`` (an int or one per board) as an int64 tensor (n,) on ``device``: the mine
    counts of boards given as tensors (:meth:`MineModel.predict_tensor`), not checked."""
    t = torch.as_tensor(total_mines, dtype=torch.int64, device=device)
    return t.expand(n) if t.dim() == 0 else t.reshape(n)


# --------------------------------------------------------------------------- the base class
#: The most parameters a model may have (8 GiB of float32 weights): far past any model of
#: this field, and a bound on what a typed config may ask for wherever it runs.
MAX_PARAMETERS = 2**31
#: Bytes a parameter takes while it trains: its float32 value, its gradient and AdamW's two moments.
TRAIN_BYTES_PER_PARAMETER = 16


def _machine_memory() -> int | None:
    """Bytes of physical memory of this machine, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):  # (no sysconf on Windows)
        return None


def check_model_size(config: Mapping, *, bytes_per_parameter: int = 4, doing: str = "hold") -> int:
    """The parameters of the model ``config`` describes, counted before any of its memory is taken.

    The model is built on PyTorch's ``meta`` device, which gives every tensor its shape and
    no storage (the random state is left as it was). It is refused when it has more than
    :data:`MAX_PARAMETERS` parameters, or when its parameters at ``bytes_per_parameter`` each
    (4 to hold float32 weights, :data:`TRAIN_BYTES_PER_PARAMETER` to train them) and its
    buffers would not fit in this machine's memory.

    Raises
    ------
    ModelError
        A bad configuration (as for :meth:`MineModel.from_config`), or a model too big,
        naming its config, its size and the bound.
    """
    cls = _model_class(config)
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        model = cls(config)
    parameters = sum(p.numel() for p in model.parameters())
    need = parameters * bytes_per_parameter + sum(b.numel() * b.element_size() for b in model.buffers())
    memory = _machine_memory()
    said = ", ".join(f"{k}={v!r}" for k, v in model.config.items())
    if parameters > MAX_PARAMETERS:
        raise ModelError(f"the model {said} has {parameters:,} parameters, more than the {MAX_PARAMETERS:,} "
                         f"a model may have; make it smaller")
    if memory is not None and need > memory:
        raise ModelError(f"the model {said} has {parameters:,} parameters: to {doing} them takes "
                         f"{need / 2**30:,.1f} GiB, more than this machine's {memory / 2**30:,.1f} GiB of "
                         f"memory; make it smaller")
    return parameters


def _model_class(config) -> type[MineModel]:
    """The model class that ``config["arch"]`` names (an architecture of either target)."""
    if not isinstance(config, Mapping):
        raise ModelError(f"a model config must be a dict; got {type(config).__name__}")
    archs = all_architectures()
    if "arch" not in config:
        raise ModelError(
            f"a model config needs an 'arch' key ({', '.join(archs)}); got keys {list(config)}"
        )
    arch = config["arch"]
    if not isinstance(arch, str) or arch not in archs:
        raise ModelError(
            f"config['arch'] must be one of {', '.join(map(repr, archs))}; got {arch!r}"
        )
    return archs[arch].model_class()


class MineModel(torch.nn.Module):
    """Base class of the mine predictors: configuration, prediction and training interface.

    Subclasses set :attr:`arch`, :attr:`Config` (a frozen dataclass derived from
    :class:`ModelConfig`: the keys, their defaults and rules) and :attr:`inputs`, call
    ``super().__init__(config)`` and implement :meth:`outputs` and
    :meth:`predict_observations`. A class is an architecture once it is in
    :data:`~nnsweeper.models.ARCHITECTURES` (:func:`~nnsweeper.models.register_architecture`):
    defining it registers nothing.

    Parameters
    ----------
    config : dict or Config, optional
        Architecture settings; missing keys take the defaults of :attr:`Config`. An
        ``"arch"`` key, when present, must name this class's architecture.

    Attributes
    ----------
    arch : str
        The architecture name (a key of :data:`~nnsweeper.models.ARCHITECTURES`).
    settings : Config
        The typed configuration (what the model's layers read).
    config : dict
        The complete configuration, ``"arch"`` first: JSON-able, and
        ``MineModel.from_config(model.config)`` builds the same architecture (what
        checkpoints record).

    Raises
    ------
    ModelError
        A configuration that is not a dict, has unknown keys, the wrong ``"arch"``,
        or values outside their rules.
    """

    arch: ClassVar[str] = ""
    #: The typed config of the architecture: a frozen :class:`ModelConfig` dataclass.
    Config: ClassVar[type[ModelConfig]] = ModelConfig
    #: Whether a batch may leave some parameters without a gradient (for instance a head
    #: that only some graphs use); ``DistributedDataParallel`` must then look for them.
    find_unused_parameters: ClassVar[bool] = False
    #: The kind of input it reads, which names the loader of its training batches in
    #: :data:`nnsweeper.datasets.LOADERS`: ``"grid"`` (the channels of
    #: :func:`~nnsweeper.features.encode_grids`) or ``"graph"`` (the graphs of
    #: :func:`~nnsweeper.features.build_graph`); empty: it does not say.
    inputs: ClassVar[str] = ""

    def __init__(self, config: Mapping | ModelConfig | None = None):
        super().__init__()
        self.settings = self.make_settings(config)

    # ----------------------------------------------------------------- configuration
    @property
    def config(self) -> dict[str, Any]:
        """The complete configuration as a fresh JSON-able dict, ``"arch"`` first."""
        return {"arch": self.arch, **self.settings.to_dict()}

    @classmethod
    def make_settings(cls, config: Mapping | ModelConfig | None) -> ModelConfig:
        """The typed config of ``config`` (a dict, possibly partial, or a :attr:`Config`).

        Raises
        ------
        ModelError
            As for the constructor.
        """
        return make_settings(cls.Config, cls.arch, config)

    @classmethod
    def check_config(cls, config: Mapping | ModelConfig | None) -> dict[str, Any]:
        """``config`` completed with the defaults and checked: a JSON-able dict, ``"arch"`` first.

        Raises
        ------
        ModelError
            As for the constructor.
        """
        return {"arch": cls.arch, **cls.make_settings(config).to_dict()}

    @staticmethod
    def complete_config(config: Mapping) -> dict[str, Any]:
        """The complete, checked config of the architecture ``config["arch"]``, building no model.

        Raises
        ------
        ModelError
            As for :meth:`from_config`.
        """
        return _model_class(config).check_config(config)

    @staticmethod
    def from_config(config: Mapping) -> MineModel:
        """Build the model that ``config["arch"]`` names, with that configuration.

        Parameters
        ----------
        config : dict
            A model config with an ``"arch"`` key (one of
            :data:`~nnsweeper.models.ARCHITECTURES`).

        Returns
        -------
        MineModel
            A freshly initialised model.

        Raises
        ------
        ModelError
            No ``"arch"``, an unknown architecture, a bad configuration, or a model too big
            for this machine (:func:`check_model_size`, before any of it is allocated).
        """
        check_model_size(config)
        return _model_class(config)(config)

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
    def outputs(self, batch, *, symmetric: bool = False) -> dict[str, torch.Tensor]:
        """Logits and targets of a training batch, one row per prediction.

        Parameters
        ----------
        batch
            A batch of the architecture's loader: the dict of
            :func:`nnsweeper.datasets.collate_grids` for the CNN, a ``HeteroData``
            batch of :class:`nnsweeper.datasets.GraphDataset` graphs for the GNN.
        symmetric : bool, default False
            The logits of the mean P(mine) over each board's symmetries, as
            :meth:`predict_proba` with ``symmetric=True`` (for scoring; an
            architecture whose inputs do not change under the symmetries may give
            its plain logits).

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

    def input_options(self) -> dict[str, Any]:
        """The dataset options its inputs depend on, passed to the loader of :attr:`inputs`
        (the GNN's ``cell_edges``); none by default."""
        return {}

    def predict_observations(self, observations: list, batch_size: int) -> list[np.ndarray]:
        """Per-board probabilities of checked boards: what an architecture implements.

        Parameters
        ----------
        observations : list of Observation
            Boards checked once by :meth:`predict_proba` (each carries its grid, flags
            and total mines); :func:`board_batches` batches them.
        batch_size : int
            Most boards per forward pass.

        Returns
        -------
        list of ndarray of float64
            One (rows, cols) array per board, in order: P(mine) at covered unflagged
            cells, exactly 0 at revealed cells and 1 at flags.

        Notes
        -----
        :meth:`predict_proba` calls it in eval mode under ``torch.inference_mode()``.
        """
        raise NotImplementedError

    # ----------------------------------------------------------------- prediction interface
    def predict_proba(self, grids, total_mines=None, flags=None, *, batch_size: int = 256,
                      symmetric: bool = False):
        """P(mine) for every cell of one or more visible boards.

        Parameters
        ----------
        grids : Observation, Observations, array_like of int, or list
            One board (an :class:`~nnsweeper.observation.Observation` or a grid
            (rows, cols)), a stack of boards (an
            :class:`~nnsweeper.observation.Observations` or grids (boards, rows,
            cols)), or a list of boards (Observations or grids) of possibly different
            sizes; a grid holds -1 covered, 0..8 revealed. Observations are not
            checked again, and carry their own mine counts and flags.
        total_mines : int or sequence of int
            Mines on each board given as a grid, flagged ones included (an int applies
            to every board); omitted when every board is an Observation.
        flags : array_like of bool, optional
            Covered cells known to be mines: one array for one board; a stack or a
            list of per-board arrays (or None) for several boards; omitted when every
            board is an Observation.
        batch_size : int, default 256
            Boards per forward pass.
        symmetric : bool, default False
            Average over the board's symmetries (8 for a square board, 4 otherwise;
            :func:`nnsweeper.grid.board_symmetries`): the model reads each transformed
            board, each answer is mapped back, and every cell gets the mean of its
            values, summed in sorted order. The output then transforms with the board
            (up to the model's own rounding), at 4 or 8 times the cost.

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
        observations, kind = _checked_boards(grids, total_mines, flags)
        batch_size = check_int("batch_size", batch_size, 1, ModelError)
        if not isinstance(symmetric, bool):
            raise ModelError(f"symmetric must be True or False; got {symmetric!r}")
        with _inference(self):
            out = (_symmetric_mean(self, observations, batch_size) if symmetric
                   else self.predict_observations(observations, batch_size))
        if kind == "single":
            return out[0]
        if kind == "stack":
            return np.stack(out)
        return out

    def symmetry_gap(self, grids, total_mines, flags=None, *, batch_size: int = 256) -> np.ndarray:
        """How far the model is from commuting with the board's symmetries, per board
        (:func:`symmetry_gaps` with this model)."""
        return symmetry_gaps(self, grids, total_mines, flags, batch_size=batch_size)


def symmetry_gaps(model, grids, total_mines, flags=None, *, batch_size: int = 256) -> np.ndarray:
    """How far a model is from commuting with the board's symmetries, per board.

    Each board is read in each of its symmetries (8 for a square board, 4 otherwise), each
    answer is mapped back onto the board, and the board's gap is the largest difference of one
    covered unflagged cell's P(mine) between two of them. A model symmetric by construction
    (:class:`~nnsweeper.models.MineGNN`, a :class:`~nnsweeper.models.MineCNN` with
    ``symmetric = true``, the exact engine) has gaps of float rounding.

    Parameters
    ----------
    model
        Anything with ``predict_proba(grids, totals, flags, batch_size=...)`` over lists of
        boards, as :meth:`MineModel.predict_proba`.
    grids : sequence of array_like of int (rows, cols)
        The boards, -1 covered.
    total_mines : int or sequence of int
    flags : sequence of array_like of bool, optional

    Returns
    -------
    ndarray of float64, (boards,)
    """
    grids = [np.asarray(g) for g in grids]
    totals = _per_board_totals(total_mines, len(grids), "list")
    fl = [np.zeros(g.shape, dtype=bool) if f is None else np.asarray(f, dtype=bool)
          for g, f in zip(grids, _per_board_flags(flags, len(grids), "list"), strict=True)]
    views, view_totals, view_flags, groups = [], [], [], []
    for g, t, f in zip(grids, totals, fl, strict=True):
        symmetries = board_symmetries(*g.shape)
        groups.append(symmetries)
        for s in symmetries:
            views.append(np.ascontiguousarray(apply_symmetry(g, s)))
            view_flags.append(np.ascontiguousarray(apply_symmetry(f, s)))
            view_totals.append(int(t))
    answers = model.predict_proba(views, view_totals, view_flags, batch_size=batch_size)
    gaps, k = [], 0
    for g, f, symmetries in zip(grids, fl, groups, strict=True):
        back = np.stack([invert_symmetry(np.asarray(answers[k + m], dtype=float), s)
                         for m, s in enumerate(symmetries)])
        k += len(symmetries)
        covered = (g < 0) & ~f
        gaps.append(float((back.max(axis=0) - back.min(axis=0))[covered].max(initial=0.0)))
    return np.array(gaps)


def _checked_boards(grids, total_mines, flags) -> tuple[list[Observation], str]:
    """The boards of :meth:`MineModel.predict_proba`'s arguments as checked observations, and
    the kind of input (``"single"``, ``"stack"`` or ``"list"``)."""
    boards, kind = _as_boards(grids)
    n = len(boards)
    if total_mines is None and flags is None and all(isinstance(b, Observation) for b in boards):
        totals, fl = [None] * n, [None] * n
    else:
        totals = _per_board_totals(total_mines, n, kind)
        fl = _per_board_flags(flags, n, kind)
    return _observations(boards, totals, fl), kind


@contextlib.contextmanager
def _inference(model: torch.nn.Module):
    """Eval mode and ``torch.inference_mode()``; every submodule's train/eval mode restored after.

    A model in eval mode throughout (as loaded) is left as it is: switching and restoring
    the modes walks every submodule through ``nn.Module.__setattr__``, a few milliseconds
    for the 16-layer GNN, once per call (once per move of the games a solver plays in
    lockstep).
    """
    # Only the modules found training are switched, and switched back.
    training = [m for m in model.modules() if m.training]
    try:
        if training:
            model.eval()
        with torch.inference_mode():
            yield
    finally:
        for m in training:
            m.training = True


def _symmetric_mean(model: MineModel, observations: list, batch_size: int) -> list[np.ndarray]:
    """``predict_observations`` averaged over each board's symmetries (``predict_proba(symmetric=True)``)."""
    views, groups = [], []
    for obs in observations:
        symmetries = board_symmetries(*obs.grid.shape)
        groups.append(symmetries)
        views.extend(Observation.from_checked(np.ascontiguousarray(apply_symmetry(obs.grid, s)),
                                              obs.total_mines,
                                              np.ascontiguousarray(apply_symmetry(obs.flags, s)))
                     for s in symmetries)
    answers = model.predict_observations(views, batch_size)
    out, k = [], 0
    for symmetries in groups:
        back = np.stack([invert_symmetry(answers[k + m], s) for m, s in enumerate(symmetries)])
        k += len(symmetries)
        # Sorted first, so the sum does not depend on which symmetry the board came in.
        out.append(np.sort(back, axis=0).mean(axis=0))
    return out
