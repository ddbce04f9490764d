"""The repository scripts that turn results into committed tables."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module(relative: str):
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _region(ratio, mae, safe, cells=100.0, safe_cells=10.0):
    return {"log_loss_ratio": ratio, "mae_exact": mae, "safe_below_threshold": safe,
            "cells": cells, "safe_cells": safe_cells}


def _result(scale):
    by = {
        "16x30-m99-safe-csp": {"frontier": _region(1.2 * scale, 0.05, 0.9)},
        "10x10-m12-safe-csp": {"frontier": _region(1.1 * scale, 0.02, 0.995, safe_cells=0.0)},
        "10x10-m5-safe-csp": {"frontier": _region(1.0 * scale, 0.01, 1.0)},
    }
    return {"frontier": _region(1.05 * scale, 0.03, 0.95, cells=1234.0), "by": by}


def test_model_table_orders_boards_and_writes_markdown(tmp_path):
    mod = _module("eval/model_table.py")
    text = mod.table({"GNN": _result(1.0), "CNN": _result(1.01)})
    lines = text.splitlines()
    assert lines[0].startswith("| board | frontier cells | safe cells | GNN LL ratio |")
    assert lines[2] == "| **all** | 1,234 | 10 | 1.050 | 0.0300 | 95.0% | 1.060 | 0.0300 | 95.0% |"
    # Smaller boards first, then by mine count; no safe cells gives a dash.
    assert [row.split(" | ")[0] for row in lines[3:]] == ["| 10x10, 5 mines", "| 10x10, 12 mines",
                                                          "| 16x30, 99 mines"]
    assert lines[4].endswith("| 1.100 | 0.0200 | - | 1.111 | 0.0200 | - |")


def test_model_table_refuses_different_splits(tmp_path, monkeypatch, capsys):
    mod = _module("eval/model_table.py")
    other = _result(1.0)
    del other["by"]["10x10-m5-safe-csp"]
    for name, result in (("gnn", _result(1.0)), ("cnn", other)):
        (tmp_path / f"{name}_test_metrics.json").write_text(json.dumps(result))
    monkeypatch.setattr(mod, "WEIGHTS", tmp_path)
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 2
    assert "different test splits" in capsys.readouterr().err
    assert not (tmp_path / "t.md").exists()
    (tmp_path / "cnn_test_metrics.json").write_text(json.dumps(_result(1.0)))
    assert mod.main(["--out", str(tmp_path / "t.md")]) == 0
    assert "| 10x10, 5 mines |" in (tmp_path / "t.md").read_text()
