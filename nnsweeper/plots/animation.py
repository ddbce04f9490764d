"""A game as an animated GIF: the board before each move, coloured by the player's P(mine).

:func:`animate_game` only draws frames computed elsewhere, such as those
:func:`nnsweeper.solvers.replay.game_frames` makes by replaying a solver's game.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from nnsweeper.fileio import atomic_path
from nnsweeper.plots._common import check_board, check_empty_figure, check_probabilities
from nnsweeper.plots.boards import board_cmap, board_colorbar, board_figure, draw_board

__all__ = ["animate_game"]


def animate_game(frames, path: str | os.PathLike, *, fps=2, cmap="magma_r", title=None,
                 dpi=100, fig=None, progress=False) -> Path:
    """Write a game as an animated GIF (or MP4): one frame per move, coloured by the solver's P(mine).

    Each frame is drawn like one panel of :func:`~nnsweeper.plots.plot_probability_boards`,
    with a cyan outline on the cell revealed next and the frame's label as the panel
    title. The file is written atomically (temporary file in the same folder, then
    rename) with :class:`matplotlib.animation.PillowWriter` (GIF) or
    :class:`matplotlib.animation.FFMpegWriter` (MP4, when ffmpeg is on the PATH).

    Parameters
    ----------
    frames : sequence of dict
        One dict per move, in order, with the keys ``"grid"`` (the visible board before
        the move), ``"probabilities"`` (the solver's P(mine) map then, or None when it
        had none: covered cells are then plain tiles), ``"move"`` (the ``(row, col)``
        revealed next, or None) and optionally ``"flags"`` (bool array) and
        ``"label"`` (a short string such as ``"move 3: guess at (4, 5), P=0.21"``).
        Every grid has the first one's shape.
    path : str or os.PathLike
        Target file, ending in ``.gif`` or ``.mp4``. Parent folders are created.
    fps : float, default=2
        Frames per second.
    cmap : str or matplotlib.colors.Colormap, default="magma_r"
        Colours of P(mine) from 0 to 1.
    title : str, optional
        Title above every frame; it may hold several lines (the figure grows to fit).
    dpi : int, default=100
        Resolution of the frames.
    fig : matplotlib.figure.Figure, optional
        An empty figure to draw the frames on (its size is set here, as for a new one);
        it is left holding the last frame. A new figure (through pyplot), closed once
        the file is written, when omitted.
    progress : bool, default=False
        Show a progress bar of the frames drawn (tqdm, on stderr): drawing is most of the
        time of a long game (most of a second per frame of an expert board).

    Returns
    -------
    pathlib.Path
        ``path``: the result is the file; the figure is the one given, if any.

    Raises
    ------
    ValueError
        A path not ending in ``.gif`` or ``.mp4`` (or ``.mp4`` without ffmpeg); no
        frames; a frame that is not a dict, lacks a
        key, or holds a bad grid, flags or P(mine) map (as for
        :func:`~nnsweeper.plots.plot_probability_boards`), a move that is not a
        covered cell of the board, a label that is not a string, or a grid of another
        shape than the first; ``fps`` not a positive number; ``dpi`` not a positive
        integer; ``fig`` not an empty figure; an unknown colormap.

    Notes
    -----
    Pillow merges consecutive identical frames into one longer frame, so frames that
    differ in nothing (not even the label) give fewer frames in the file.
    """
    from nnsweeper.errors import check_int

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"path must end in .gif or .mp4; got {str(path)!r}")
    from matplotlib import animation
    from tqdm.auto import tqdm

    if suffix == ".mp4" and not animation.writers.is_available("ffmpeg"):
        raise ValueError(f"writing {str(path)!r} needs ffmpeg on the PATH; write a .gif instead")
    if (isinstance(fps, bool) or not isinstance(fps, numbers.Real) or not np.isfinite(fps)
            or fps <= 0):
        raise ValueError(f"fps must be a positive number; got {fps!r}")
    dpi = check_int("dpi", dpi, 1)
    checked = _check_frames(frames)
    cm = board_cmap(cmap)
    own = fig is None
    if not own:
        check_empty_figure(fig)

    rows, cols = checked[0]["grid"].shape
    label_lines = max(fr["label"].count("\n") + 1 if fr["label"] else 1 for fr in checked)
    title_lines = 0 if title is None else str(title).count("\n") + 1
    fig, (ax,), cax = board_figure(1, rows, cols, title_lines=label_lines - 1 + title_lines,
                                    min_width=4.0, dpi=dpi, fig=fig)
    try:
        board_colorbar(fig, cm, cax=cax)
        if title is not None:
            fig.suptitle(title)
        writer = animation.PillowWriter(fps=fps) if suffix == ".gif" else animation.FFMpegWriter(fps=fps)
        # atomic_path keeps the target's suffix, so the temporary name ends in .gif (or
        # .mp4) as the writer needs to pick the format.
        with atomic_path(path) as tmp:
            writer.setup(fig, tmp, dpi=dpi)
            for frame in tqdm(checked, disable=not progress, desc="drawing frames", unit="frame"):
                ax.clear()
                draw_board(ax, frame["grid"], frame["probabilities"], frame["flags"], cmap=cm,
                            move=frame["move"])
                ax.set_title(frame["label"] or "", fontsize=9)
                writer.grab_frame()
            writer.finish()
    finally:
        if own:
            import matplotlib.pyplot as plt

            plt.close(fig)
    return path


def _check_frames(frames) -> list[dict]:
    """The frames of :func:`animate_game`, checked, with every key filled in."""
    if isinstance(frames, (Mapping, str, bytes)):
        raise ValueError(f"frames must be a sequence of dicts; got {type(frames).__name__}")
    try:
        frames = list(frames)
    except TypeError:
        raise ValueError(f"frames must be a sequence of dicts; got {type(frames).__name__}") from None
    if not frames:
        raise ValueError("frames must hold at least one frame; got none")
    checked = []
    for i, frame in enumerate(frames):
        where = f"frames[{i}]"
        if not isinstance(frame, Mapping):
            raise ValueError(
                f"{where} must be a dict with keys grid, probabilities and move; "
                f"got {type(frame).__name__}"
            )
        missing = [k for k in ("grid", "probabilities", "move") if k not in frame]
        if missing:
            raise ValueError(
                f"{where} lacks {', '.join(map(repr, missing))}; "
                "a frame needs grid, probabilities and move"
            )
        try:
            g, f, _ = check_board(frame["grid"], frame.get("flags"), None)
        except ValueError as err:
            raise type(err)(f"{where}: {err}") from err
        if checked and g.shape != checked[0]["grid"].shape:
            raise ValueError(
                f"{where}['grid'] has shape {g.shape}; every frame must have the first "
                f"frame's shape {checked[0]['grid'].shape}"
            )
        p = frame["probabilities"]
        if p is not None:
            p = check_probabilities(f"{where}['probabilities']", p, g.shape)
        move = frame["move"]
        if move is not None:
            move = _check_move(f"{where}['move']", move, g)
        label = frame.get("label")
        if label is not None and not isinstance(label, str):
            raise ValueError(f"{where}['label'] must be a string; got {type(label).__name__}")
        checked.append({"grid": g, "flags": f, "probabilities": p, "move": move, "label": label})
    return checked


def _check_move(name: str, move, g: np.ndarray) -> tuple[int, int]:
    """``move`` as ``(row, col)`` of a covered cell of ``g``, or an error naming it."""
    try:
        r, c = move
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None or a (row, col) pair; got {move!r}") from None
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) for v in (r, c)):
        raise ValueError(f"{name} must be a pair of integers (row, col); got {move!r}")
    r, c = int(r), int(c)
    rows, cols = g.shape
    if not (0 <= r < rows and 0 <= c < cols):
        raise ValueError(f"{name} {(r, c)} lies outside the {rows}x{cols} board")
    if g[r, c] != -1:
        raise ValueError(f"{name} {(r, c)} must be a covered cell; it shows {int(g[r, c])}")
    return r, c
