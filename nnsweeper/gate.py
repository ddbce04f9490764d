"""The gate before any weights ship: candidate weights against the bundled ones, cell by cell.

:func:`run_gate` measures two mine-probability models of one architecture on the
same games and positions, and puts each figure side by side in a grid of cells
(:class:`GateReport`). New weights ship only if no cell is worse than the bundled
weights' beyond its noise (``report.passed``); ``train/gate.py`` runs it from the
command line and writes the grid the model card shows.

The families of cells:

``games``
    The win rate of the pure and the hybrid solver with each model, per board: the
    10x10 board at every mine count of the sweep and the classic boards, on the same
    games (the game seeds of :data:`SELECTION_SEED`, held apart from the record and
    ``compare`` seeds, and checked against the models' training seeds before a game is
    played). A cell is the candidate's win rate minus the bundled one's with their
    paired interval (Newcombe); each solver's gap to ``csp`` stands beside it.
``openings``
    The position right after the first click when it shows *k* (every *k* the board
    allows but 0, whose flood fill makes another position), at every mine count: the
    exact risk of the cell the model rates safest (interior pooled, as the solvers
    play; ties within the solvers' tolerance averaged) minus the lowest exact risk of
    the position: the regret of its first guess. One cell per board, the worst *k*.
    These positions are fixed, so there is no sampling noise: a candidate is worse
    when its regret exceeds the bundled one's by more than :data:`OPENING_TOLERANCE`.
``calibration``
    Positions of ``csp``'s games on the same seeds, once with its proven mines flagged
    and once without flags: per band of mine density, region (frontier, interior) and
    flags, the bias (mean model probability minus mean exact probability over the
    region's cells). Worse: a larger absolute bias, beyond a bootstrap over positions.
``decisions``
    The same positions with no proven-safe cell (guess positions), per board and flags:
    the mean regret of the model's safest cell against the exact risks, paired position
    by position (normal interval).
``log-loss``
    The same positions, per board and flags: the frontier cells' excess log-loss over
    the exact engine's (the mean Kullback-Leibler divergence from the exact
    probabilities, nats per cell), paired position by position.
``symmetry``
    The positions of the first :data:`SYMMETRY_GAMES` of those games per board, with
    and without flags, each read in every symmetry of its board: the largest change of
    a covered cell's P(mine) between a position and one of its rotations or mirror
    images (mapped back; :func:`~nnsweeper.models.symmetry_gaps`). No sampling noise:
    worse when the candidate's exceeds both the bundled weights' and the margin.

"Beyond its noise" is an interval at 95% family-wise confidence: each interval of the
grid is taken at ``1 - 0.05 / m`` for the ``m`` cells that have one (Bonferroni), so a
candidate no better and no worse than the bundled weights fails the gate in at most
5% of runs, and a real loss of a few points on one board still shows. A position
family's cell counts as worse only when its whole interval lies beyond a small margin
(:data:`MARGINS`): tens of thousands of positions measure changes far below what moves a
game (a bias of 0.0008), and every retrained network has some.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from nnsweeper.errors import check_int
from nnsweeper.evaluation.harness import evaluate, game_seeds
from nnsweeper.evaluation.stats import newcombe_paired_interval, normal_quantile
from nnsweeper.game import PRESETS, Rules
from nnsweeper.grid import dilate, neighbours
from nnsweeper.models.digest import model_weights

__all__ = ["CONFIDENCE", "FAMILIES", "GateCell", "GateError", "GateReport", "MARGINS", "OPENING_TOLERANCE",
           "SELECTION_SEED", "SWEEP_MINES", "opening_positions", "run_gate"]

#: Base seed of the gate's games and positions: no record run (2026), no ``compare``
#: default (0) and no dataset's seed stream uses it.
SELECTION_SEED = 77
#: Family-wise confidence of the gate's intervals (Bonferroni over the cells that have one).
CONFIDENCE = 0.95
#: A first guess after the opening costs this much more exact risk before it counts as worse.
OPENING_TOLERANCE = 0.005
#: The mine counts of the 10x10 sweep.
SWEEP_MINES = tuple(range(5, 31))
#: The families of cells, in the order the grid shows them.
FAMILIES = ("games", "openings", "calibration", "decisions", "log-loss", "symmetry")
#: Games per board whose positions the symmetry family reads (each position 4 or 8 times).
SYMMETRY_GAMES = 10
#: Mine density bands of the calibration cells (upper ends, inclusive).
DENSITY_BANDS = (0.10, 0.15, 0.20, 0.25, 1.0)
#: Resamples of the calibration cells' bootstrap (its generator's seed is fixed).
BOOTSTRAP = 400
#: Model probabilities closer than this are one choice (the neural solvers' ``tolerance``).
TIE = 1e-3
#: The gate's margins: per family, the smallest change that counts against the candidate, fixed
#: before any candidate of the plan (train/plan.py) was judged and never moved after seeing a grid.
#: A cell is worse only when its whole interval lies beyond its margin: a win rate lower by more
#: than ``games`` points (0: any loss beyond the noise counts, since the win rate is what users
#: see); a bias larger in size by more than ``calibration`` (a bias of 0.002 moves the solvers'
#: choice between a frontier and an interior cell only where their risks differ by less, at most
#: that much exact risk per guess); a mean regret on guess positions higher by more than
#: ``decisions`` (a tenth of a point of exact risk per guess); a frontier excess log-loss higher by
#: more than ``log-loss`` nats per cell; a symmetry gap above ``symmetry`` (a change of a tenth
#: of a point of P(mine) under a rotation, the solvers' tie tolerance) and above the bundled
#: weights'. The opening cells have no noise and their own
#: :data:`OPENING_TOLERANCE`. Tens of thousands of positions measure changes far below these,
#: and every retrained network has some.
MARGINS = {"games": 0.0, "calibration": 0.002, "decisions": 0.001, "log-loss": 0.002, "symmetry": 0.001}


@dataclass(frozen=True)
class GateCell:
    """One cell of the gate's grid: a figure of the candidate and of the bundled weights.

    ``difference`` is candidate minus bundled (percentage points for win rates), ``low``
    and ``high`` its interval (NaN where the cell has no noise), ``lower_is_better``
    says which way is worse, and ``worse`` whether the candidate is worse beyond the
    noise. ``extra`` holds what the card shows beside it (gaps to ``csp``, counts).
    """

    family: str
    name: str
    candidate: float
    bundled: float
    difference: float
    low: float
    high: float
    lower_is_better: bool
    worse: bool
    extra: dict = field(default_factory=dict)

    @property
    def better(self) -> bool:
        """Better beyond the noise (never for a cell without an interval)."""
        if math.isnan(self.low):
            return False
        return self.high < 0 if self.lower_is_better else self.low > 0


class GateError(ValueError):
    """Weights that may not ship: their gate failed, or it judged other weights."""


@dataclass
class GateReport:
    """The gate's grid: every cell, and whether the candidate passes (no cell worse).

    ``weights`` names the two models' weights by digest (``{"candidate": {name: sha256},
    "bundled": {...}}``, :func:`nnsweeper.models.digest.model_weights`), so that a grid
    clears only the weights it measured (:meth:`clears`).
    """

    arch: str
    candidate: str
    bundled: str
    cells: list[GateCell]
    settings: dict
    weights: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not any(c.worse for c in self.cells)

    @property
    def failed(self) -> list[GateCell]:
        return [c for c in self.cells if c.worse]

    def family(self, name: str) -> list[GateCell]:
        return [c for c in self.cells if c.family == name]

    def to_dict(self) -> dict:
        return {"arch": self.arch, "candidate": self.candidate, "bundled": self.bundled,
                "passed": self.passed, "weights": self.weights, "settings": self.settings,
                "cells": [asdict(c) for c in self.cells]}

    def to_json(self) -> str:
        def plain(v):
            return None if isinstance(v, float) and math.isnan(v) else v

        d = self.to_dict()
        d["cells"] = [{k: plain(v) for k, v in c.items()} for c in d["cells"]]
        return json.dumps(d, indent=1, default=lambda o: o.item())  # numpy scalars as Python ones

    @classmethod
    def from_json(cls, text: str) -> GateReport:
        """A report as :meth:`to_json` wrote it."""
        d = json.loads(text)

        def number(v):
            return math.nan if v is None else v

        cells = [GateCell(**{k: number(v) if k in ("low", "high") else v for k, v in c.items()})
                 for c in d["cells"]]
        return cls(d["arch"], d["candidate"], d["bundled"], cells, d["settings"], d.get("weights") or {})

    def judged(self) -> GateReport:
        """The same figures judged by the gate's one rule (:data:`MARGINS`,
        :data:`OPENING_TOLERANCE`): :func:`run_gate` judges every cell so, and a grid measured
        before a margin changed is read again with it without playing anything."""
        cells = []
        for c in self.cells:
            if c.family == "games":
                worse = c.high < -MARGINS["games"]
            elif c.family == "openings":
                worse = max(n - o for o, n in c.extra["by_k"].values()) > OPENING_TOLERANCE
            elif c.family == "symmetry":
                worse = c.candidate > max(c.bundled, MARGINS["symmetry"])
            else:
                worse = not math.isnan(c.low) and c.low > MARGINS[c.family]
            cells.append(dataclasses.replace(c, worse=bool(worse)))
        settings = {**self.settings, "opening_tolerance": OPENING_TOLERANCE, "margins": dict(MARGINS)}
        return GateReport(self.arch, self.candidate, self.bundled, cells, settings, self.weights)

    def clears(self, candidate: str, bundled: str) -> GateReport:
        """Check that this grid lets the weights of digest ``candidate`` replace those of digest
        ``bundled`` (SHA-256 of each checkpoint, :func:`nnsweeper.models.digest.weights_digest`).

        Returns
        -------
        GateReport
            The grid judged by today's rule (:meth:`judged`), which passed.

        Raises
        ------
        GateError
            When the grid (judged by today's rule) failed, was measured on other weights than
            either, or does not name its weights (a grid written before it did).
        """
        judged = self.judged()
        for role, digest in (("candidate", candidate), ("bundled", bundled)):
            measured = list((self.weights.get(role) or {}).values())
            if not measured:
                raise GateError(f"the gate's grid does not name its {role} weights by digest: "
                                "run the gate again")
            if measured != [digest]:
                raise GateError(f"the gate measured other {role} weights ({measured[0][:12]}) than these "
                                f"({digest[:12]}): run the gate on them")
        if not judged.passed:
            raise GateError(f"the gate failed: {len(judged.failed)} cells worse ("
                            + ", ".join(f"{c.family} {c.name}" for c in judged.failed[:3])
                            + (", ..." if len(judged.failed) > 3 else "") + ")")
        return judged

    def summary(self) -> str:
        """One line per family: cells, worse, better, and the worst cell."""
        lines = [f"gate: {self.candidate} against {self.bundled} ({self.arch}): "
                 + ("PASSED" if self.passed else f"FAILED ({len(self.failed)} cells worse)")]
        for fam in FAMILIES:
            cells = self.family(fam)
            if not cells:
                continue
            worse = [c for c in cells if c.worse]
            better = [c for c in cells if c.better]
            sign = 1 if cells[0].lower_is_better else -1
            worst = max(cells, key=lambda c: sign * c.difference)
            lines.append(f"  {fam:11s} {len(cells):3d} cells, {len(worse)} worse, {len(better)} better; "
                         f"least favourable: {worst.name} {_fmt(fam, worst.difference, signed=True)}"
                         + (" WORSE" if worst.worse else ""))
        return "\n".join(lines)

    def rule(self) -> str:
        """The rule the grid was judged by: each family's margin (the smallest change that counts)."""
        margins = self.settings.get("margins") or MARGINS
        tolerance = self.settings.get("opening_tolerance", OPENING_TOLERANCE)
        parts = [f"{fam} {margins[fam]:.2f} points" if fam == "games" else f"{fam} {margins[fam]:.4f}"
                 for fam in FAMILIES if fam in margins]
        return ("  rule: a cell is worse when its whole interval lies beyond its margin ("
                + ", ".join(parts) + f"; openings: a regret higher by more than {tolerance:.4f})")

    def format(self) -> str:
        """The whole grid as text tables, one per family."""
        out = [self.summary(), self.rule(), ""]
        for fam in FAMILIES:
            cells = self.family(fam)
            if not cells:
                continue
            out.append(f"{fam} ({_UNITS[fam]}):")
            head = f"  {'cell':36s} {'bundled':>9s} {'candidate':>9s} {'difference':>10s} {'interval':>19s}"
            if fam == "games":
                head += f" {'bundled-csp':>11s} {'cand.-csp':>9s}"
            out.append(head)
            for c in cells:
                ci = ("" if math.isnan(c.low)
                      else f"{_fmt(fam, c.low, signed=True)} to {_fmt(fam, c.high, signed=True)}")
                line = (f"  {c.name:36s} {_fmt(fam, c.bundled):>9s} {_fmt(fam, c.candidate):>9s} "
                        f"{_fmt(fam, c.difference, signed=True):>10s} {ci:>19s}")
                if fam == "games":
                    line += f" {c.extra['bundled_gap']:+11.2f} {c.extra['candidate_gap']:+9.2f}"
                out.append(line + ("  WORSE" if c.worse else "  better" if c.better else ""))
            out.append("")
        return "\n".join(out).rstrip() + "\n"


_UNITS = {"games": "win rate, %; difference in points, paired",
          "openings": "regret of the first guess",
          "calibration": "bias: mean model minus mean exact P(mine); difference: change of its size",
          "decisions": "mean regret on guess positions",
          "log-loss": "frontier excess log-loss, nats per cell",
          "symmetry": "largest change of a cell's P(mine) under a rotation or mirror image"}


def _fmt(family: str, v: float, signed: bool = False) -> str:
    v = 0.0 if abs(v) < 5e-7 else v  # no "-0.0000"
    if family == "games":
        return f"{v:+.2f}" if signed else f"{v:.2f}"
    return f"{v:+.4f}" if signed else f"{v:.4f}"


# ------------------------------------------------------------------ positions
def _predict(model, grids: np.ndarray, totals: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """The model's P(mine) maps with the interior pooled, as the neural solvers see them."""
    from nnsweeper.observation import Observation
    from nnsweeper.solvers.neural import ModelRequest, NeuralSolver

    solver = NeuralSolver(model)
    requests = [ModelRequest(Observation.of(g, int(t), f))
                for g, t, f in zip(grids, totals, flags, strict=True)]
    out = []
    for k in range(0, len(requests), 256):
        out += solver.predict_requests(requests[k:k + 256])
    return np.stack([solver.interior_values(np.array(p, dtype=float), g, f, int(t))
                     for p, g, f, t in zip(out, grids, flags, totals, strict=True)])


def opening_positions(rows: int, cols: int, mines: int) -> list[tuple[int, np.ndarray]]:
    """The positions right after a first click at the centre that shows ``k``, for every ``k``
    from 1 the board allows: ``[(k, grid), ...]`` (grid: -1 covered, ``k`` at the centre)."""
    i, j = rows // 2, cols // 2
    around = len(neighbours(i, j, rows, cols))
    rest = rows * cols - 1 - around
    out = []
    for k in range(1, around + 1):
        if k <= mines and mines - k <= rest:
            grid = np.full((rows, cols), -1, dtype=np.int8)
            grid[i, j] = k
            out.append((k, grid))
    return out


def _pick_regret(p_model: np.ndarray, p_exact: np.ndarray, candidates: np.ndarray) -> float:
    """Exact risk of the model's safest candidate (ties within :data:`TIE` averaged) minus the least."""
    pm, pe = p_model[candidates], p_exact[candidates]
    tied = pm <= pm.min() + TIE
    return float(pe[tied].mean() - pe.min())


def _openings(models: dict, boards: Sequence[tuple[str, Rules]]) -> list[GateCell]:
    from nnsweeper.engine import analyze

    cells = []
    for name, rules in boards:
        positions = opening_positions(rules.rows, rules.cols, rules.mines)
        if not positions:
            continue
        grids = np.stack([g for _, g in positions])
        flags = np.zeros(grids.shape, dtype=bool)
        totals = np.full(len(grids), rules.mines)
        exact = np.stack([analyze(g, rules.mines).probabilities for g in grids])
        regret = {}
        for who, model in models.items():
            pm = _predict(model, grids, totals, flags)
            regret[who] = [_pick_regret(pm[n], exact[n], grids[n] < 0) for n in range(len(grids))]
        worst = int(np.argmax(regret["candidate"]))
        worst_old = int(np.argmax(regret["bundled"]))
        new, old = regret["candidate"][worst], regret["bundled"][worst_old]
        by_k = {str(k): [o, n] for (k, _), o, n in zip(positions, regret["bundled"], regret["candidate"],
                                                        strict=True)}
        cells.append(GateCell("openings", name, new, old, new - old, math.nan, math.nan, True,
                              False, {"worst_k": positions[worst][0], "by_k": by_k}))
    return cells


def _recorded_positions(boards, seeds) -> list[tuple[str, Rules, dict[str, np.ndarray]]]:
    """Every decision position of ``csp``'s games on ``seeds``, its flags kept, with exact labels:
    per board and game, ``(name, rules, arrays)`` with the arrays of
    :func:`~nnsweeper.datasets.policies.record_game`."""
    from nnsweeper.datasets.policies import record_game

    parts = []
    for name, rules in boards:
        for seed in seeds:
            arrays, _ = record_game(rules, int(seed), "csp", record="all", start="center", flags="all")
            if len(arrays["grid"]):
                parts.append((name, rules, arrays))
    return parts


def _position_cells(models: dict, boards, seeds) -> tuple[list, list, list, list]:
    """The calibration, decision, log-loss and symmetry figures of both models on csp's positions."""
    calib_rows, decision_rows, loss_rows = [], [], []
    played = _recorded_positions(boards, seeds)
    symmetry_rows = _symmetry_rows(models, played)
    for flags_mode in ("all", "none"):
        # csp flags proven mines only: without its flags the exact probabilities are the same
        # (recorded_flags), so the games are played and labelled once.
        for name, rules, a in played:
            if flags_mode == "none":
                a = {**a, "flags": np.zeros_like(a["flags"])}
            preds = {who: _predict(m, a["grid"], a["total_mines"], a["flags"]) for who, m in models.items()}
            density = rules.mines / rules.cells
            band = next(b for b in DENSITY_BANDS if density <= b + 1e-12)
            unknown = (a["grid"] < 0) & ~a["flags"]
            frontier = unknown & dilate(a["grid"] >= 0)
            interior = unknown & ~frontier
            exact = a["prob"].astype(float)
            for n in range(len(exact)):
                e, u, fr = exact[n], unknown[n], frontier[n]
                for region, mask in (("frontier", fr), ("interior", interior[n])):
                    if mask.any():
                        calib_rows.append(((band, region, flags_mode), int(mask.sum()), float(e[mask].sum()),
                                           {w: float(p[n][mask].sum()) for w, p in preds.items()}))
                # A guess position: no unknown cell proven safe.
                if u.any() and not (u & (e <= 1e-9)).any():
                    decision_rows.append(((name, flags_mode),
                                          {w: _pick_regret(p[n], e, u) for w, p in preds.items()}))
                if fr.any():
                    loss_rows.append(((name, flags_mode),
                                      {w: _kl(e[fr], p[n][fr]) for w, p in preds.items()}))
    return calib_rows, decision_rows, loss_rows, symmetry_rows


def _symmetry_rows(models: dict, played) -> list:
    """Per game among the first :data:`SYMMETRY_GAMES` of each board, with and without flags: each
    model's largest symmetry gap over the game's positions."""
    from nnsweeper.models import symmetry_gaps

    rows, seen = [], {}
    for name, _, a in played:
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > SYMMETRY_GAMES:
            continue
        for flags in (a["flags"], np.zeros_like(a["flags"])):
            rows.append((name, {w: float(symmetry_gaps(m, list(a["grid"]), list(a["total_mines"]),
                                                       list(flags)).max(initial=0.0))
                                for w, m in models.items()}))
    return rows


def _symmetry_cells(rows) -> list[GateCell]:
    cells = []
    for name in dict.fromkeys(k for k, _ in rows):
        new = max(r["candidate"] for k, r in rows if k == name)
        old = max(r["bundled"] for k, r in rows if k == name)
        cells.append(GateCell("symmetry", name, new, old, new - old, math.nan, math.nan, True, False,
                              {"positions_of_games": sum(1 for k, _ in rows if k == name) // 2}))
    return cells


def _kl(q: np.ndarray, p: np.ndarray) -> float:
    """Mean KL divergence of Bernoulli(p) from Bernoulli(q) over cells (nats)."""
    p = np.clip(p, 1e-6, 1 - 1e-6)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(q > 0, q * np.log(q / p), 0.0)
        b = np.where(q < 1, (1 - q) * np.log((1 - q) / (1 - p)), 0.0)
    return float((a + b).mean())


def _paired_cells(family: str, rows, z: float) -> list[GateCell]:
    """Cells of per-position figures (lower is better), paired position by position."""
    keys = list(dict.fromkeys(k for k, _ in rows))
    cells = []
    for key in keys:
        new = np.array([r["candidate"] for k, r in rows if k == key])
        old = np.array([r["bundled"] for k, r in rows if k == key])
        d = new - old
        mean = float(d.mean())
        # One position has no noise to measure: the cell then has no interval, and fails nothing.
        half = z * d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else math.nan
        cells.append(GateCell(family, f"{key[0]} flags {key[1]}", float(new.mean()), float(old.mean()), mean,
                              mean - half, mean + half, True, False, {"positions": len(d)}))
    return cells


def _calibration_cells(rows, z: float) -> list[GateCell]:
    keys = sorted(dict.fromkeys(k for k, *_ in rows))
    gen = np.random.default_rng(0)
    tail = 1 - (2 * (1 - _phi(z)))  # the two-sided level of z, as a quantile pair
    cells = []
    for key in keys:
        sel = [r for r in rows if r[0] == key]
        n = np.array([r[1] for r in sel], dtype=float)
        e = np.array([r[2] for r in sel])
        new = np.array([r[3]["candidate"] for r in sel])
        old = np.array([r[3]["bundled"] for r in sel])
        b_new, b_old = (new.sum() - e.sum()) / n.sum(), (old.sum() - e.sum()) / n.sum()
        idx = gen.integers(0, len(sel), size=(BOOTSTRAP, len(sel)))
        ns, es = n[idx].sum(1), e[idx].sum(1)
        boot = np.abs((new[idx].sum(1) - es) / ns) - np.abs((old[idx].sum(1) - es) / ns)
        low, high = np.quantile(boot, [(1 - tail) / 2, (1 + tail) / 2])
        band, region, flags_mode = key
        where = f"density<={band:.2f}" if band < 1 else f"density>{DENSITY_BANDS[-2]:.2f}"
        name = f"{where} {region} flags {flags_mode}"
        cells.append(GateCell("calibration", name, float(b_new), float(b_old), float(abs(b_new) - abs(b_old)),
                              float(low), float(high), True, False, {"positions": len(sel)}))
    return cells


def _phi(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


# ---------------------------------------------------------------------- games
def _game_rows(models: dict, arch: str, boards, trials: dict, n_jobs: int, store, progress: bool) -> list:
    """Play the pure and hybrid solver with each model and csp; per kind and board, the
    difference rows candidate - bundled, candidate - csp and bundled - csp."""
    from nnsweeper.solvers import get_solver
    from nnsweeper.solvers.neural import NeuralSolver

    rows = []
    groups: dict[int, list] = {}
    for name, rules in boards:
        groups.setdefault(trials[name], []).append((name, rules))
    for n, group in groups.items():
        solvers = {"csp": get_solver("csp")}
        for who, model in models.items():
            solvers[f"{arch}-{who}"] = NeuralSolver(model)
            solvers[f"hybrid-{arch}-{who}"] = NeuralSolver(model, hybrid=True)
        table = evaluate(solvers, boards=[(r.rows, r.cols, r.mines) for _, r in group], trials=n,
                         base_seed=SELECTION_SEED, n_jobs=n_jobs, progress=progress,
                         store=None if store is None else f"{store}-{n}")
        for kind in (arch, f"hybrid-{arch}"):
            for (name, _), d, dn, do in zip(group, table.difference(f"{kind}-candidate", f"{kind}-bundled"),
                                            table.difference(f"{kind}-candidate", "csp"),
                                            table.difference(f"{kind}-bundled", "csp"), strict=True):
                rows.append((f"{kind} {name}", d, dn, do))
    return rows


def _game_cell(row, confidence: float) -> GateCell:
    name, d, dn, do = row
    both = d["wins"] - d["solver_only"]
    neither = d["games"] - both - d["solver_only"] - d["reference_only"]
    low, high = newcombe_paired_interval(both, d["solver_only"], d["reference_only"], neither,
                                         confidence=confidence)
    return GateCell("games", name, 100 * d["wins"] / d["games"],
                    100 * d["reference_wins"] / d["reference_games"], 100 * d["difference"],
                    100 * low, 100 * high, False, False,
                    {"games": d["games"], "candidate_gap": 100 * dn["difference"],
                     "bundled_gap": 100 * do["difference"]})


# ----------------------------------------------------------------------- gate
def run_gate(candidate, bundled, arch: str, *, sweep_mines: Sequence[int] = SWEEP_MINES,
             sweep_size: tuple[int, int] = (10, 10), classic: Sequence[str] = tuple(PRESETS),
             trials: int = 1000, classic_trials: int = 300, positions: int = 60, n_jobs: int = 1,
             store=None, progress: bool = False, notify: Callable[[str], None] | None = None,
             families: Sequence[str] = FAMILIES) -> GateReport:
    """Measure ``candidate`` against ``bundled`` on the gate's grid (see the module).

    Parameters
    ----------
    candidate, bundled : str, path or MineModel
        The two models (bundled names, checkpoint paths or model objects), one architecture.
    arch : str
        Their architecture's name, for the solvers' names in the grid ("gnn", "cnn").
    sweep_mines, sweep_size
        The sweep's mine counts and board size (default: 10x10 with 5 to 30 mines).
    classic : sequence of str
        Preset boards played and measured beside the sweep.
    trials, classic_trials : int
        Games per solver on each sweep board and on each classic board.
    positions : int
        Games of ``csp`` per board whose positions the position families read (the
        first of the same seeds; at most ``trials``).
    n_jobs, store, progress
        As for :func:`~nnsweeper.evaluation.evaluate` (``store``: a path prefix; the
        games of each size of run go to ``STORE-TRIALS``, so a killed gate resumes).
    notify : callable, optional
        Called with a line as each family starts.
    families : sequence of str
        The families to measure (default: all).
    """
    trials = check_int("trials", trials, 1)
    classic_trials = check_int("classic_trials", classic_trials, 1)
    positions = check_int("positions", positions, 0)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise ValueError(f"families must be some of {', '.join(FAMILIES)}; got {unknown}")
    rows, cols = sweep_size
    boards = [(f"{rows}x{cols}/{m}", Rules(rows, cols, int(m))) for m in sweep_mines]
    boards += [(name, Rules.preset(name)) for name in classic]
    n_trials = {name: trials if name not in classic else classic_trials for name, _ in boards}
    models = {"candidate": _loaded(candidate, arch), "bundled": _loaded(bundled, arch)}
    say = notify or (lambda _line: None)
    # Games first: evaluate() checks the models' training seeds against these seeds before
    # a game is played, and the positions below are those of the same games.
    game_rows = []
    if "games" in families:
        say(f"games: pure and hybrid {arch} with each model and csp on {len(boards)} boards")
        game_rows = _game_rows(models, arch, boards, n_trials, n_jobs, store, progress)
    opening_cells = []
    if "openings" in families:
        say("openings: the first click showing k on every board")
        opening_cells = _openings(models, boards)
    calib, decisions, losses, symmetry = [], [], [], []
    if positions and {"calibration", "decisions", "log-loss", "symmetry"} & set(families):
        say(f"positions: csp's games on {positions} seeds per board, with and without flags")
        for name, rules in boards:
            c, d, lo, sy = _position_cells(models, [(name, rules)],
                                           game_seeds(SELECTION_SEED, min(positions, n_trials[name])))
            symmetry += sy if "symmetry" in families else []
            calib += c if "calibration" in families else []
            decisions += d if "decisions" in families else []
            losses += lo if "log-loss" in families else []
    # Bonferroni over every cell with an interval.
    m = (len(game_rows) + len({k for k, *_ in calib}) + len({k for k, _ in decisions})
         + len({k for k, _ in losses}))
    confidence = 1 - (1 - CONFIDENCE) / max(m, 1)
    z = normal_quantile(1 - (1 - confidence) / 2)  # two-sided
    cells = [_game_cell(r, confidence) for r in game_rows] + opening_cells
    if calib:
        cells += _calibration_cells(calib, z)
    if decisions:
        cells += _paired_cells("decisions", decisions, z)
    if losses:
        cells += _paired_cells("log-loss", losses, z)
    if symmetry:
        cells += _symmetry_cells(symmetry)
    settings = {"selection_seed": SELECTION_SEED, "sweep": f"{rows}x{cols} {list(sweep_mines)}",
                "classic": list(classic), "trials": trials, "classic_trials": classic_trials,
                "positions": positions, "confidence": CONFIDENCE, "cell_confidence": confidence,
                "cells_with_noise": m, "opening_tolerance": OPENING_TOLERANCE, "margins": dict(MARGINS)}
    weights = {"candidate": model_weights(candidate), "bundled": model_weights(bundled)}
    # Every cell is judged by the one rule of GateReport.judged.
    return GateReport(arch, _name(candidate), _name(bundled), cells, settings, weights).judged()


def _loaded(model, arch: str):
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        from nnsweeper.models import load_model

        return load_model(model, arch=arch)
    return model


def _name(model) -> str:
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        return str(model)
    return type(model).__name__
