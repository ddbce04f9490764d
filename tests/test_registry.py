"""A solver or an architecture added from outside the package is a first-class citizen.

Everything here is defined in this file: nothing else is edited to make it work.
"""

import json

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.cli import build_parser, main
from nnsweeper.solvers import (
    SOLVERS,
    Solver,
    compare_solvers,
    register_solver,
    unregister_solver,
)


class FirstCoveredSolver(Solver):
    """Certain moves first; when stuck, the first covered unflagged cell in reading order."""

    name = "first-covered"

    def turn(self, game, flags, rng) -> bool:
        a = self.certain_moves(game, flags)
        if isinstance(a, bool):
            return a
        i, j = np.argwhere(a.unknown)[0]
        game.reveal(i, j, "guess", float(a.probabilities[i, j]))
        return True


@pytest.fixture
def toy_solver():
    register_solver("first-covered", FirstCoveredSolver)
    yield "first-covered"
    unregister_solver("first-covered")


def test_a_registered_solver_is_played_and_compared(toy_solver, tmp_path, capsys):
    assert SOLVERS[toy_solver] is FirstCoveredSolver
    assert compare_solvers()[-1] == toy_solver
    assert build_parser().parse_args(["compare"]).default_solvers[-1] == toy_solver
    solver = ns.get_solver(toy_solver, start="corner")
    rec = solver.play(ns.MinesweeperEnv(rows=6, cols=6, mines=5, seed=4), np.random.default_rng(4))
    assert rec.moves[0].cell == (0, 0) and rec.moves[0].kind == "first"
    # Its guesses are the first unknown cell: deterministic, so the same game twice gives one record.
    again = solver.play(ns.MinesweeperEnv(rows=6, cols=6, mines=5, seed=4), np.random.default_rng(99))
    assert again.to_dict() | {"seconds": 0} == rec.to_dict() | {"seconds": 0}
    code = main(["compare", "--solvers", f"csp,{toy_solver}", "--mines", "4,6", "--rows", "6", "--cols", "6",
                 "--trials", "20", "--jobs", "1", "--out", str(tmp_path / "t"), "--quiet"])
    assert code == 0
    rows = json.loads((tmp_path / "t.json").read_text())["rows"]
    assert [(r["solver"], r["mines"]) for r in rows] == [("csp", 4), ("csp", 6), (toy_solver, 4),
                                                         (toy_solver, 6)]
    # The table's games are the seed notebook's: replayed one by one, they give the same wins.
    for row in rows[2:]:
        wins = sum(FirstCoveredSolver()(ns.MinesweeperEnv(rows=6, cols=6, mines=row["mines"], seed=int(sd)),
                                        np.random.default_rng(sd))
                   for sd in ns.game_seeds(0, 20))
        assert row["wins"] == wins
    capsys.readouterr()


def test_a_solver_left_out_of_compare_is_still_evaluated():
    register_solver("first-covered-quiet", FirstCoveredSolver, compare=False)
    try:
        assert "first-covered-quiet" in SOLVERS and "first-covered-quiet" not in compare_solvers()
        table = ns.evaluate(["first-covered-quiet"], [3], rows=5, cols=5, trials=5)
        assert table.solvers == ["first-covered-quiet"] and table.rows[0]["games"] == 5
    finally:
        unregister_solver("first-covered-quiet")
    assert "first-covered-quiet" not in SOLVERS


def test_registry_refuses_taken_and_bad_names():
    with pytest.raises(ValueError, match="solver 'csp' is registered already"):
        register_solver("csp", FirstCoveredSolver)
    with pytest.raises(ValueError, match="without commas"):
        register_solver("a,b", FirstCoveredSolver)
    with pytest.raises(ValueError, match="solver 'nope' is not registered"):
        unregister_solver("nope")


# ----------------------------------------------------------------- an architecture
@pytest.fixture
def toy_arch():
    """A tiny model over the grid encoding, registered by one line (and removed after)."""
    from dataclasses import dataclass

    import torch
    from torch import nn

    from nnsweeper import features
    from nnsweeper.models import (
        MineModel,
        ModelConfig,
        board_batches,
        register_architecture,
        unregister_architecture,
    )

    @dataclass(frozen=True)
    class ToyConfig(ModelConfig):
        #: Channels of the one hidden 3x3 convolution.
        hidden: int = 4

        def __post_init__(self):
            self._int("hidden", 1)

    class ToyNet(MineModel):
        arch = "toy"
        Config = ToyConfig
        inputs = "grid"  # trained on the grid loader's batches

        def __init__(self, config=None):
            super().__init__(config)
            h = self.settings.hidden
            self.net = nn.Sequential(nn.Conv2d(len(features.GRID_CHANNELS), h, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(h, 1, 1))

        def forward(self, x):
            return self.net(x).squeeze(1)

        def outputs(self, batch):
            logits = self(batch["x"].float())
            unknown = batch["unknown"].bool()
            graph = torch.arange(logits.shape[0])[:, None, None].expand_as(logits)
            return {"logit": logits[unknown], "prob": batch["prob"].float()[unknown],
                    "mine": batch["mine"].float()[unknown], "weight": torch.ones(int(unknown.sum())),
                    "frontier": batch["frontier"].bool()[unknown], "graph": graph[unknown]}

        def predict_observations(self, observations, batch_size):
            out = [None] * len(observations)
            for chunk, g, f, x in board_batches(observations, batch_size, features.encode_grids):
                p = torch.sigmoid(self(torch.from_numpy(x)).double()).numpy()
                p = np.where(g < 0, p, 0.0)
                p[f] = 1.0
                for k, b in enumerate(chunk):
                    out[b] = p[k]
            return out

    register_architecture("toy", ToyNet)
    yield ToyNet
    unregister_architecture("toy")


def test_a_model_class_is_trainable_loadable_playable_and_compared(toy_arch, tmp_path, capsys):
    from pathlib import Path

    from nnsweeper.models import ARCHITECTURES, MineModel, load_model
    from nnsweeper.training import train

    assert ARCHITECTURES["toy"].model_class() is toy_arch
    assert MineModel.from_config({"arch": "toy", "hidden": 2}).settings.hidden == 2
    # Trainable: the training loop reads the architecture from the config alone.
    fixture = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "tiny"
    result = train({"data": {"path": str(fixture)}, "model": {"arch": "toy", "hidden": 3},
                    "train": {"epochs": 1, "batch_size": 16, "seed": 0, "threads": 1, "device": "cpu"},
                    "output": {"dir": str(tmp_path / "run")}}, progress=False)
    assert len(result.history) == 1 and np.isfinite(result.history[0]["val_loss"])
    # Loadable: a checkpoint of it comes back as the same class with the same weights.
    model = load_model(result.best, arch="toy")
    assert isinstance(model, toy_arch) and model.config == {"arch": "toy", "hidden": 3}
    grid = np.full((6, 6), -1, dtype=np.int8)
    grid[0, :3] = (0, 1, 1)
    p = model.predict_proba(grid, 5)
    assert p.shape == (6, 6) and p[0, 0] == 0.0 and 0 < p[5, 5] < 1
    # Playable: its two solvers exist and play with the checkpoint.
    assert {"toy", "hybrid-toy"} <= set(ns.SOLVERS)
    for name in ("toy", "hybrid-toy"):
        rec = ns.get_solver(name, model=str(result.best)).play(
            ns.MinesweeperEnv(rows=6, cols=6, mines=5, seed=2), np.random.default_rng(2))
        assert rec.moves and rec.model_calls >= 1
    # Compared: listed by compare by default (every model alone, then every hybrid), and played
    # with --model toy=PATH.
    compared = build_parser().parse_args(["compare"]).default_solvers
    assert compared[-4:] == ["toy", "hybrid-cnn", "hybrid-gnn", "hybrid-toy"]
    code = main(["compare", "--solvers", "csp,toy,hybrid-toy", "--model", f"toy={result.best}",
                 "--mines", "4", "--rows", "6", "--cols", "6", "--trials", "6", "--jobs", "1",
                 "--out", str(tmp_path / "c"), "--quiet"])
    assert code == 0
    table = ns.EvalTable.from_json(tmp_path / "c.json")
    assert table.solvers == ["csp", "toy", "hybrid-toy"] and all(r["games"] == 6 for r in table)
    # Without weights of its own, the command asks for them.
    assert main(["compare", "--solvers", "toy", "--mines", "4", "--rows", "6", "--cols", "6", "--trials", "2",
                 "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert "give --model toy=PATH" in capsys.readouterr().err


# ----------------------------------------------------------------- the value architectures
def test_value_networks_are_architectures_of_target_value_without_probability_solvers():
    from nnsweeper.models import (
        ARCHITECTURES,
        TARGETS,
        VALUE_ARCHITECTURES,
        all_architectures,
        get_architecture,
        register_architecture,
    )
    from nnsweeper.models.value import ValueCNN, ValueGNN

    assert TARGETS == ("probability", "value")
    assert list(VALUE_ARCHITECTURES) == ["value-gnn", "value-cnn"]
    assert VALUE_ARCHITECTURES["value-gnn"].model_class() is ValueGNN
    assert VALUE_ARCHITECTURES["value-cnn"].model_class() is ValueCNN
    assert VALUE_ARCHITECTURES["value-gnn"].bundled and not VALUE_ARCHITECTURES["value-cnn"].bundled
    assert all(a.target == "value" and a.solvers == () for a in VALUE_ARCHITECTURES.values())
    # The mine predictors' table, the one the solvers read, holds no value network.
    assert list(ARCHITECTURES)[:2] == ["cnn", "gnn"]
    assert all(a.target == "probability" for a in ARCHITECTURES.values())
    assert set(all_architectures()) == set(ARCHITECTURES) | set(VALUE_ARCHITECTURES)
    # Solvers: value-gnn is the value solver; no probability solver is derived from a value network.
    assert isinstance(ns.get_solver("value-gnn"), ns.solvers.ValueSolver)
    assert "hybrid-value-gnn" not in SOLVERS and "value-cnn" not in SOLVERS
    assert "hybrid-gnn" in SOLVERS and "hybrid-cnn" in SOLVERS
    with pytest.raises(ValueError, match="arch must be one of"):
        get_architecture("value-gnn")  # the default looks among the mine predictors only
    assert get_architecture("value-gnn", target=None).target == "value"
    assert get_architecture("value-cnn", target="value").model_class() is ValueCNN
    with pytest.raises(ValueError, match="registered already"):
        register_architecture("value-gnn", "nnsweeper.models.value:ValueCNN", target="value")
    with pytest.raises(ValueError, match="target must be one of"):
        register_architecture("other", "nnsweeper.models.gnn:MineGNN", target="policy")
    with pytest.raises(ValueError, match="lower-case letters, digits and '_'"):
        register_architecture("my-net", "nnsweeper.models.gnn:MineGNN")  # a solver class needs the name


def test_value_architectures_build_from_their_configs():
    from nnsweeper.models import MineModel, ModelError
    from nnsweeper.models.value import ValueCNN, ValueGNN, make_value_net

    gnn = MineModel.from_config({"arch": "value-gnn", "hidden": 8, "layers": 1})
    assert isinstance(gnn, ValueGNN) and gnn.config == {"arch": "value-gnn", "hidden": 8, "layers": 1,
                                                        "conv": "sage"}
    assert isinstance(make_value_net({"arch": "cnn", "hidden": 8, "layers": 1}), ValueCNN)  # the older name
    assert isinstance(make_value_net(), ValueGNN)
    with pytest.raises(ModelError, match="unknown config key"):
        MineModel.from_config({"arch": "value-gnn", "blocks": 3})
    with pytest.raises(ModelError, match="not P\\(mine\\)"):
        gnn.predict_proba(np.full((3, 3), -1), 1)
