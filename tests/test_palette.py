"""One colour and marker per solver name: fixed for the shipped solvers, derived from the name otherwise."""

import os
import subprocess
import sys

import pytest

from nnsweeper.plots import solver_color, solver_style
from nnsweeper.plots.palette import FIXED_STYLES, OTHER_COLORS, OTHER_MARKERS

SHIPPED = ("single_point", "csp", "cnn", "gnn", "hybrid-cnn", "hybrid-gnn")
OTHERS = [f"solver{k}" for k in range(300)] + ["mygnn", "runs/gnn/best.pt", "CSP", "Gnn", "é"]


def test_shipped_solvers_have_fixed_distinct_styles():
    assert tuple(FIXED_STYLES) == SHIPPED
    styles = {name: solver_style(name) for name in SHIPPED}
    assert styles["csp"] == {"color": "#000000", "marker": "o"}
    assert styles["gnn"] == {"color": "#009e73", "marker": "^"}
    assert len({s["color"] for s in styles.values()}) == len({s["marker"] for s in styles.values()}) == 6
    assert all(solver_color(name) == styles[name]["color"] for name in SHIPPED)


def test_other_names_get_colours_apart_from_the_fixed_ones():
    fixed = {color for color, _ in FIXED_STYLES.values()}
    assert not fixed & set(OTHER_COLORS)
    styles = [solver_style(name) for name in OTHERS]
    assert all(s["color"] in OTHER_COLORS and s["marker"] in OTHER_MARKERS for s in styles)
    assert {s["color"] for s in styles} == set(OTHER_COLORS)  # every colour is used
    assert len({(s["color"], s["marker"]) for s in styles}) > 60  # names spread over the pairs
    # Names are taken as written: another case is another name.
    assert solver_color("CSP") != solver_color("csp")


def test_a_style_is_the_same_in_every_process():
    assert solver_style("mygnn") == {"color": "#8c510a", "marker": "o"}
    code = ("from nnsweeper.plots.palette import solver_style\n"
            "print(*(sorted(solver_style(n).values()) for n in ('mygnn', 'solver7', 'é')))")
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    here = " ".join(str(sorted(solver_style(n).values())) for n in ("mygnn", "solver7", "é"))
    assert outputs == {here + "\n"}


def test_markers_are_matplotlib_markers():
    from matplotlib.markers import MarkerStyle

    for marker in (*OTHER_MARKERS, *(m for _, m in FIXED_STYLES.values())):
        MarkerStyle(marker)


@pytest.mark.parametrize("name, shown", [("", "''"), (None, "NoneType"), (3, "int")])
def test_bad_names(name, shown):
    with pytest.raises(ValueError, match=f"name must be a non-empty string; got {shown}"):
        solver_style(name)
