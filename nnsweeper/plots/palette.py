"""One colour and one marker per solver name, the same in every figure and every process.

A name's style depends on the name alone, never on the other solvers of a table, their
order or the reference solver, so a solver looks the same in every figure:

- the solvers that ship with nnsweeper have fixed styles (:data:`FIXED_STYLES`),
  colours of the Okabe-Ito palette (distinguishable with the common colour-vision
  deficiencies), ``csp`` in black;
- any other name (a user's solver, a checkpoint such as ``"mygnn"``, a solver
  registered later) gets a colour from a second palette that holds none of the fixed
  colours (:data:`OTHER_COLORS`) and a marker (:data:`OTHER_MARKERS`), both picked by
  a SHA-256 digest of the name: the same in every process and Python version, and
  unchanged when other solvers are added. Two such names may share a colour; they
  then rarely share the marker as well.

The models ``cnn`` and ``gnn`` share the styles of the solvers of those names, so a
reliability diagram labelled by model name matches the win-rate figures. Names are
taken as they are: ``"CNN"`` is another name than ``"cnn"``.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType

__all__ = ["FIXED_STYLES", "OTHER_COLORS", "OTHER_MARKERS", "solver_color", "solver_style"]

#: The styles of the solvers (and models) that ship with nnsweeper: name ->
#: ``(colour, marker)``.
FIXED_STYLES = MappingProxyType({
    "single_point": ("#0072b2", "X"),  # blue
    "csp": ("#000000", "o"),  # black
    "cnn": ("#d55e00", "s"),  # vermillion
    "gnn": ("#009e73", "^"),  # bluish green
    "hybrid-cnn": ("#cc79a7", "D"),  # reddish purple
    "hybrid-gnn": ("#e69f00", "v"),  # orange
})

#: Colours of every other name: the two Okabe-Ito colours left over (sky blue; not
#: its yellow, too faint on white) and colours of Paul Tol's palettes, none close to
#: a fixed colour.
OTHER_COLORS = ("#56b4e9", "#332288", "#882255", "#999933", "#8c510a", "#aa4499", "#44aa99",
                "#ee3377")

#: Markers of every other name.
OTHER_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "p", "<", ">")


def solver_style(name: str) -> dict[str, str]:
    """The colour and marker of a solver (or model) name, the same in every figure.

    Parameters
    ----------
    name : str
        A solver or model name as a table or a legend holds it, such as ``"csp"``
        or ``"mygnn"``.

    Returns
    -------
    dict
        ``{"color": "#rrggbb", "marker": m}`` (lower-case hex digits, as
        :func:`matplotlib.colors.to_hex` writes them) with a matplotlib marker ``m``: the fixed
        style of a solver that ships with nnsweeper, otherwise one picked from the
        name's SHA-256 digest (see the module notes).

    Raises
    ------
    ValueError
        ``name`` not a non-empty string.

    Examples
    --------
    >>> solver_style("csp")
    {'color': '#000000', 'marker': 'o'}
    >>> solver_style("mygnn") == solver_style("mygnn")
    True
    """
    if not isinstance(name, str) or not name:
        shown = repr(name) if isinstance(name, str) else type(name).__name__
        raise ValueError(f"name must be a non-empty string; got {shown}")
    if name in FIXED_STYLES:
        color, marker = FIXED_STYLES[name]
    else:
        digest = hashlib.sha256(name.encode("utf-8")).digest()
        color = OTHER_COLORS[int.from_bytes(digest[:8], "big") % len(OTHER_COLORS)]
        marker = OTHER_MARKERS[int.from_bytes(digest[8:16], "big") % len(OTHER_MARKERS)]
    return {"color": color, "marker": marker}


def solver_color(name: str) -> str:
    """The colour of a solver (or model) name: ``solver_style(name)["color"]``.

    Parameters
    ----------
    name : str
        A solver or model name.

    Returns
    -------
    str
        A colour as ``"#rrggbb"``.

    Raises
    ------
    ValueError
        ``name`` not a non-empty string.
    """
    return solver_style(name)["color"]
