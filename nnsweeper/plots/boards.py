"""Boards coloured by P(mine): one panel per map, and the drawing every animation frame reuses.

:func:`plot_probability_boards` draws one board once per P(mine) map, side by side;
the helpers here draw one board on an axes, lay out board figures and make their
colorbar and colormap, for :mod:`nnsweeper.plots.animation` too.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from nnsweeper.plots._common import check_board, check_empty_figure, check_probabilities, new_figure

__all__ = ["plot_position", "plot_probability_boards"]

_MAX_TEXT_COLS = 16  # boards wider than this get no probability text
_REVEALED_COLOR = "0.82"  # revealed cells
_TILE_COLOR = "0.6"  # covered cells without a colour: flagged, or no P(mine) map
_FLAG_COLOR = "red"
_MINE_COLOR = "#16a34a"  # outline of a covered mine in the true layout
_MOVE_COLOR = "cyan"  # outline of the cell revealed next
_SAFE_COLOR = "#2563eb"  # dashed outline of a cell the exact engine proves safe
_NUMBER_COLORS = {
    1: "#1f3fbf", 2: "#1a7f1a", 3: "#d01c1c", 4: "#1a237e",
    5: "#7f1a1a", 6: "#00838f", 7: "black", 8: "0.35",
}

# Layout of a figure made here, in inches.
_CELL_MAX_IN = 0.45  # largest cell
_PANEL_MAX_IN = 5.0  # longest side of one board
_LEFT_IN, _GAP_IN, _BOTTOM_IN = 0.35, 0.35, 0.15
_TOP_IN = 0.5  # column numbers and the panel title
_LINE_IN = 0.25  # each further title line
_CBAR_GAP_IN, _CBAR_IN, _RIGHT_IN = 0.2, 0.15, 0.65


def plot_probability_boards(grid, maps, *, flags=None, mines=None, axes=None, fig=None, title=None,
                            cmap="magma_r"):
    """Draw one board several times, side by side, coloured by each P(mine) map.

    Covered unflagged cells are coloured by P(mine) on one scale 0..1 shared by all
    panels (one colorbar for the figure), with the value written in the cell (``0.12``)
    on boards at most 16 columns wide. Revealed cells are light grey with their number
    (none for 0); flagged cells are grey tiles with a red ``F``. With ``mines``, every
    covered cell that is a mine gets a green outline, so the colours can be judged
    against the true layout (a flagged cell without one is a wrong flag).

    Parameters
    ----------
    grid : array_like of int, shape (rows, cols)
        The visible board: -1 covered, 0..8 revealed.
    maps : dict
        ``{label: P(mine) array of shape (rows, cols)}``, one panel per entry in dict
        order, titled by its label. Values on revealed and flagged cells are not drawn.
    flags : array_like of bool, shape (rows, cols), optional
        Covered cells known to be mines.
    mines : array_like of bool, shape (rows, cols), optional
        The true mine layout.
    axes : sequence of matplotlib.axes.Axes, optional
        One Axes per map, all in one figure; the colorbar takes its room from them.
    fig : matplotlib.figure.Figure, optional
        An empty figure to fill instead (its size is set here, as for a new one).
        Without ``axes`` or ``fig``, a new figure (through pyplot), its width growing
        with the number of panels and the board's width.
    title : str, optional
        Figure title.
    cmap : str or matplotlib.colors.Colormap, default="magma_r"
        Colours of P(mine) from 0 to 1.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the panels.

    Raises
    ------
    ValueError
        A grid that is not 2-D or holds values outside -1..8; flags (on revealed
        cells, or not boolean) or mines not of the grid's shape; ``maps`` empty or not a
        dict; a map not of the grid's shape or with a value that is not finite or lies
        outside [0, 1]; ``axes`` not one Axes per map in one figure; ``fig`` not an
        empty figure, or given with ``axes``; an unknown colormap.
    """
    g, f, m = check_board(grid, flags, mines)
    if not isinstance(maps, Mapping):
        raise ValueError(f"maps must be a dict {{label: P(mine) array}}; got {type(maps).__name__}")
    if not maps:
        raise ValueError("maps must hold at least one P(mine) map; got an empty dict")
    panels_data = [(str(label), check_probabilities(f"maps[{label!r}]", p, g.shape))
                   for label, p in maps.items()]
    cm = board_cmap(cmap)
    if axes is not None and fig is not None:
        raise ValueError(
            f"fig must be None when axes are given (the panels' figure is theirs); got {type(fig).__name__}"
        )
    if axes is not None:
        from matplotlib.axes import Axes

        panels = list(np.ravel(np.asarray(axes, dtype=object)))
        odd = [type(a).__name__ for a in panels if not isinstance(a, Axes)]
        if odd:
            raise ValueError(f"axes must hold matplotlib Axes; got {odd[0]}")
        if len(panels) != len(panels_data):
            raise ValueError(
                f"axes must hold one Axes per map ({len(panels_data)}); got {len(panels)}"
            )
        fig = panels[0].figure
        if any(a.figure is not fig for a in panels):
            raise ValueError("axes must all belong to one figure; got Axes of several figures")
        board_colorbar(fig, cm, ax=panels)
    else:
        if fig is not None:
            check_empty_figure(fig)
        fig, panels, cax = board_figure(len(panels_data), *g.shape,
                                         title_lines=int(title is not None), fig=fig)
        board_colorbar(fig, cm, cax=cax)
    if title is not None:
        fig.suptitle(title)
    for ax, (label, p) in zip(panels, panels_data, strict=True):
        draw_board(ax, g, p, f, cmap=cm, mines=m)
        ax.set_title(label, fontsize=10)
    return fig


def plot_position(observation, analysis, suggestions=(), *, ax=None, fig=None, title=None, cmap="magma_r"):
    """Draw a position as a picture: the exact P(mine) of every covered cell, and the moves.

    Covered cells are coloured by ``analysis.probabilities`` with the value written in
    each (``0.12``) on boards of any width (the figure grows with the board); the cells
    the engine proves safe get a blue dashed outline, those it proves mines a green one
    (as true mines are marked elsewhere); each solver's suggested cell gets the solver's
    marker and colour (:func:`~nnsweeper.plots.solver_style`), listed in the legend with
    the move's kind.

    Parameters
    ----------
    observation : Observation
        The position (grid, flags, total mines).
    analysis : BoardAnalysis
        The exact engine's analysis of it (:func:`nnsweeper.analyze`).
    suggestions : sequence of (str, Suggestion or None)
        ``(solver name, its move)`` pairs, as :func:`nnsweeper.suggest_move` gives them;
        None entries (nothing to reveal) are left out.
    ax : matplotlib.axes.Axes, optional
        Where to draw; without it, ``fig`` or a new figure (through pyplot), sized to
        the board.
    fig : matplotlib.figure.Figure, optional
        An empty figure to draw on (resized here); not with ``ax``.
    title : str, optional
        Axes title (default: the board size, the mines left and the layout count).
    cmap : str or matplotlib.colors.Colormap, default="magma_r"

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    from nnsweeper.plots.palette import solver_style

    g, f, _ = check_board(observation.grid, observation.flags, None)
    p = check_probabilities("analysis.probabilities", analysis.probabilities, g.shape)
    cm = board_cmap(cmap)
    rows, cols = g.shape
    moves = [(name, move) for name, move in suggestions if move is not None]
    legend_rows = -(-(len(moves) + 2) // 3)
    if ax is not None and fig is not None:
        raise ValueError(f"fig must be None when ax is given; got {type(fig).__name__}")
    if ax is None:
        if fig is not None:
            check_empty_figure(fig)
        # Cells large enough for their probability text, up to about 40 inches a side.
        cell = min(0.42, 40 / max(rows, cols)) if cols > _MAX_TEXT_COLS else None
        fig, (ax,), cax = board_figure(1, rows, cols, title_lines=1, min_width=6.0, fig=fig,
                                        cell_inches=cell, bottom_lines=legend_rows)
        board_colorbar(fig, cm, cax=cax)
    else:
        fig = ax.figure
        board_colorbar(fig, cm, ax=ax)
    proven_mines = np.asarray(analysis.mines) & ~f
    draw_board(ax, g, p, f, cmap=cm, mines=proven_mines, values_text=max(rows, cols) <= 96)
    for r, c in np.argwhere(np.asarray(analysis.safe)):
        ax.add_patch(Rectangle((c - 0.44, r - 0.44), 0.88, 0.88, fill=False, edgecolor=_SAFE_COLOR,
                               linestyle="--", linewidth=1.5, zorder=2, gid="safe"))
    handles, seen = [], {}
    # Markers sit in the cell's corners, small enough to leave its P(mine) text in the
    # middle readable, however many solvers pick the same cell.
    size = float(np.clip(0.26 * _cell_points(ax, rows, cols), 3, 9))
    for name, move in moves:
        r, c = move.cell
        k = seen.get((r, c), 0)
        seen[(r, c)] = k + 1
        style = solver_style(name)
        dr, dc = [(-0.32, -0.32), (-0.32, 0.32), (0.32, -0.32), (0.32, 0.32)][k % 4]
        ax.plot(c + dc, r + dr, linestyle="none", marker=style["marker"], color=style["color"],
                markeredgecolor="white", markeredgewidth=0.6, markersize=size, zorder=3,
                gid=f"suggestion-{name}")
        handles.append(Line2D([], [], linestyle="none", marker=style["marker"], color=style["color"],
                              markeredgecolor="white", markersize=8,
                              label=f"{name}: ({r}, {c}) {move.kind}"))
    handles += [Rectangle((0, 0), 1, 1, fill=False, edgecolor=_SAFE_COLOR, linestyle="--",
                          label="proven safe"),
                Rectangle((0, 0), 1, 1, fill=False, edgecolor=_MINE_COLOR, label="proven mine")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.01), ncol=3, frameon=False,
              fontsize="small")
    if title is None:
        left = observation.total_mines - int(f.sum())
        n = analysis.layouts
        count = f"{n:,}" if n < 10**12 else f"about {float(n):.3g}"
        title = f"{rows}x{cols}, {left} mines left, {count} layouts: exact P(mine)"
    ax.set_title(title, fontsize=10)
    return fig


def _cell_points(ax, rows: int, cols: int) -> float:
    """The side of one drawn cell, in points."""
    box = ax.get_window_extent()
    return min(box.width / cols, box.height / rows) * 72 / ax.figure.dpi


def draw_board(ax, grid, probabilities, flags, *, cmap, mines=None, move=None, values_text=None):
    """Draw one checked board on ``ax``; return the P(mine) image.

    Covered unflagged cells take their colour from ``probabilities`` (0..1), with the
    value as text on boards at most ``_MAX_TEXT_COLS`` wide (``values_text`` True or
    False: always, never); the image is masked on
    every other cell, which shows ``cmap``'s "bad" colour (revealed cells) or a grey
    tile (flagged cells, and every covered cell when ``probabilities`` is None).
    Numbers 1..8 and flags (``F``) are written in their cells; covered cells that are
    mines in ``mines`` get a green outline and the cell ``move`` a cyan one.
    """
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import MaxNLocator

    rows, cols = grid.shape
    covered = grid == -1
    coloured = covered & ~flags if probabilities is not None else np.zeros(grid.shape, dtype=bool)
    values = probabilities if probabilities is not None else np.zeros(grid.shape)
    image = ax.imshow(np.ma.masked_array(values, mask=~coloured, copy=True), cmap=cmap,
                      vmin=0.0, vmax=1.0, interpolation="nearest")
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)

    # White borders between cells; row and column numbers on the left and top.
    ax.set_xticks(np.arange(cols + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(rows + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(which="both", length=0, labelsize=6, labeltop=True, labelbottom=False)
    for spine in ax.spines.values():
        spine.set_visible(False)

    # Text sizes follow the drawn cell size, in points.
    cell_pt = _cell_points(ax, rows, cols)
    small = float(np.clip(0.3 * cell_pt, 3, 9))
    large = float(np.clip(0.55 * cell_pt, 4, 14))
    centred = {"ha": "center", "va": "center"}

    for r, c in np.argwhere(covered & ~coloured):
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, facecolor=_TILE_COLOR, edgecolor="none",
                               gid="tile"))
    for r, c in np.argwhere(grid > 0):
        value = int(grid[r, c])
        ax.text(c, r, str(value), color=_NUMBER_COLORS[value], fontsize=large, fontweight="bold",
                **centred)
    for r, c in np.argwhere(flags):
        ax.text(c, r, "F", color=_FLAG_COLOR, fontsize=large, fontweight="bold", **centred)
    if values_text is None:
        values_text = cols <= _MAX_TEXT_COLS
    if probabilities is not None and values_text:
        for r, c in np.argwhere(coloured):
            p = float(probabilities[r, c])
            red, green, blue, _ = cmap(p)
            ink = "white" if 0.299 * red + 0.587 * green + 0.114 * blue < 0.5 else "black"
            ax.text(c, r, f"{p:.2f}", color=ink, fontsize=small, **centred)
    if mines is not None:
        for r, c in np.argwhere(covered & mines):
            ax.add_patch(Rectangle((c - 0.44, r - 0.44), 0.88, 0.88, fill=False,
                                   edgecolor=_MINE_COLOR, linewidth=1.5, zorder=2, gid="mine"))
    if move is not None:
        r, c = move
        ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor=_MOVE_COLOR,
                               linewidth=2.5, zorder=2.5, gid="move"))
    return image


def board_figure(n_panels, rows, cols, *, title_lines=0, min_width=0.0, dpi=None, fig=None,
                  cell_inches=None, bottom_lines=0):
    """A figure with ``n_panels`` board axes in a row and a colorbar axes.

    Returns ``(figure, list of axes, colorbar axes)``. The figure is ``fig`` (an empty
    one, resized here) or a new one (through pyplot). With ``dpi``, the figure's size
    is a whole number of pixels at that resolution. ``cell_inches`` fixes the side of
    a cell (default: as large as fits a panel of at most ``_PANEL_MAX_IN``), and
    ``bottom_lines`` leaves that many text lines of room below the panels (a legend).
    """
    cell = cell_inches or min(_CELL_MAX_IN, _PANEL_MAX_IN / max(rows, cols))
    panel_w, panel_h = cols * cell, rows * cell
    panels_w = n_panels * panel_w + (n_panels - 1) * _GAP_IN
    body = panels_w + _CBAR_GAP_IN + _CBAR_IN + _RIGHT_IN
    width = max(_LEFT_IN + body, min_width)
    bottom = _BOTTOM_IN + bottom_lines * _LINE_IN
    height = _TOP_IN + title_lines * _LINE_IN + panel_h + bottom
    if dpi is not None:
        width, height = np.ceil(width * dpi) / dpi, np.ceil(height * dpi) / dpi
    left = _LEFT_IN + (width - _LEFT_IN - body) / 2

    if fig is None:
        fig = new_figure((width, height))
    else:
        fig.set_size_inches(width, height)

    def box(x, w):
        return [x / width, bottom / height, w / width, panel_h / height]

    panels = [fig.add_axes(box(left + k * (panel_w + _GAP_IN), panel_w)) for k in range(n_panels)]
    cax = fig.add_axes(box(left + panels_w + _CBAR_GAP_IN, _CBAR_IN))
    return fig, panels, cax


def board_colorbar(fig, cmap, **where):
    """One colorbar of P(mine) from 0 to 1 on ``fig``; ``where`` is ``cax=`` or ``ax=``."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    bar = fig.colorbar(ScalarMappable(norm=Normalize(0.0, 1.0), cmap=cmap), **where)
    bar.set_label("P(mine)")
    return bar


def board_cmap(cmap):
    """``cmap`` (a name or a Colormap) with revealed cells' grey as its "bad" colour."""
    import matplotlib
    from matplotlib.colors import Colormap

    if not isinstance(cmap, Colormap):
        try:
            cmap = matplotlib.colormaps[cmap]
        except (KeyError, TypeError):
            raise ValueError(
                f"cmap must be a matplotlib colormap or the name of one; got {cmap!r}"
            ) from None
    return cmap.with_extremes(bad=_REVEALED_COLOR)
