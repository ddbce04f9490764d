"""The networks' plan (train/plan.py) at a tiny scale: every step, the chain of weights, the ledger."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = [sys.executable, str(ROOT / "train" / "plan.py")]


def _plan(*args, work):
    return subprocess.run([*PLAN, *args, "--scale", "0.001", "--chunks", "2", "--work", str(work)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_the_plan_at_a_tiny_scale(tmp_path):
    """Two chunks end to end, moving to a new machine half-way (the tests below share the run: a
    plan takes half a minute)."""
    proc = _plan("run", "--until", "gnn-01", "--jobs", "1", "--device", "cpu", work=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _a_new_machine_continues(tmp_path)
    _every_step_of_two_chunks_runs_and_the_weights_chain(tmp_path)
    _a_chunk_is_made_again_byte_for_byte_from_its_ledger_entry(tmp_path)
    _status_and_a_second_run_that_has_nothing_to_do(tmp_path)
    _a_network_ships_once_its_gate_passed(tmp_path)


def _a_new_machine_continues(work):
    """What a new machine holds: the ledger and the kept weights, no data and no run folders. The
    step left (cnn-01) is done there, its chunk's data made again first (that CPU counted too)."""
    import shutil

    assert (work / "data" / "chunk-01").is_dir()  # cnn-01 still needs it
    for path in work.iterdir():
        if path.name != "store":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    again = _plan("run", "--until", "cnn-01", "--jobs", "1", "--device", "cpu", work=work)
    assert again.returncode == 0, again.stderr
    ran = [line.split()[2] for line in again.stdout.splitlines() if line.startswith("== nnsweeper")]
    assert ran == ["generate", "train"]
    ledger = json.loads((work / "store" / "ledger.json").read_text())
    assert ledger["data-01"]["again_cpu_s"] > 0 and "cnn-01" in ledger


def _every_step_of_two_chunks_runs_and_the_weights_chain(tiny_plan):
    ledger = json.loads((tiny_plan / "store" / "ledger.json").read_text())
    assert sorted(ledger) == ["cnn-00", "cnn-01", "data-00", "data-01", "gnn-00", "gnn-01"]
    assert all(entry["cpu_s"] > 0 and entry["wall_s"] > 0 for entry in ledger.values())
    # Each step names the code it ran (a chunk's command makes its data again with the same code).
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert head.returncode == 0
    assert all(entry["code"].startswith(head.stdout.strip()) for entry in ledger.values())
    weights = tiny_plan / "store" / "weights"
    # Only the latest weights of each network are kept; the ledger has every step's digest.
    kept = sorted(p.name for p in weights.iterdir())
    assert kept == [f"{net}-01{suffix}" for net in ("cnn", "gnn")
                    for suffix in (".config.json", ".history.json", ".json", ".pt")]
    meta = {name: json.loads((weights / f"{name}.json").read_text()) for name in ("gnn-01", "cnn-01")}
    # Chunk 1 starts from chunk 0's weights, and carries the seeds of both chunks' games.
    init = meta["gnn-01"]["extra"]["init"]
    assert init["init"].endswith("gnn-00.pt") and init["sha256"] == ledger["gnn-00"]["weights_sha256"]
    from nnsweeper.fileio import file_sha256

    assert ledger["gnn-01"]["weights_sha256"] == file_sha256(weights / "gnn-01.pt")
    assert {s["entropy"] for s in meta["gnn-01"]["extra"]["data_seed_streams"]} == {6100, 6101}
    # The CNN of the plan is symmetric by construction; its peak learning rate falls by chunk.
    assert meta["cnn-01"]["config"]["symmetric"] is True
    assert "train.lr=0.002 " in ledger["gnn-00"]["command"]
    assert "train.lr=0.0005 " in ledger["gnn-01"]["command"]
    # Both networks read a chunk, then its data goes; the ledger keeps the command that makes it.
    assert not list((tiny_plan / "data").iterdir())
    assert str(ROOT) not in json.dumps(ledger)


def _a_chunk_is_made_again_byte_for_byte_from_its_ledger_entry(tiny_plan):
    ledger = json.loads((tiny_plan / "store" / "ledger.json").read_text())
    argv = shlex.split(ledger["data-00"]["command"])
    assert argv[:2] == ["nnsweeper", "generate"] and argv[argv.index("--seed") + 1] == "6100"
    argv[argv.index("--jobs") + 1] = "2"  # the output does not depend on it
    subprocess.run([sys.executable, "-m", "nnsweeper", *argv[1:]], check=True, cwd=ROOT, timeout=600)
    from nnsweeper.fileio import file_sha256

    assert file_sha256(Path(argv[2]) / "manifest.json") == ledger["data-00"]["manifest_sha256"]


def _status_and_a_second_run_that_has_nothing_to_do(tiny_plan):
    before = (tiny_plan / "store" / "ledger.json").read_text()
    again = _plan("run", "--until", "cnn-01", work=tiny_plan)
    assert again.returncode == 0 and "==" not in again.stdout  # no step ran
    assert (tiny_plan / "store" / "ledger.json").read_text() == before
    status = _plan("status", work=tiny_plan)
    lines = status.stdout.splitlines()
    assert lines[0].startswith("plan: 6 of 13 steps done, nothing running; ")
    assert "CPU hours spent, about" in lines[0]
    assert any(line.split()[:2] == ["gnn-01", "done"] and "val LL ratio" in line for line in lines)
    assert [line.split()[:2] for line in lines[-7:]] == [["gate-gnn", "left"], ["gate-cnn", "left"],
                                                         ["test-data", "left"], ["ship-gnn", "left"],
                                                         ["ship-cnn", "left"], ["replay-gnn", "left"],
                                                         ["replay-cnn", "left"]]


def _a_network_ships_once_its_gate_passed(tiny_plan):
    """After the gates (judged here by hand: the CNN passed, the GNN failed) the held-out data is
    made and the CNN's last weights ship, with their card, into the scaled plan's own folder; the
    GNN is held back."""
    from nnsweeper.fileio import file_sha256

    ledger_path = tiny_plan / "store" / "ledger.json"
    ledger = json.loads(ledger_path.read_text())
    ledger["gate-gnn"] = {"cpu_s": 1.0, "wall_s": 1.0, "passed": False, "command": "by hand"}
    ledger["gate-cnn"] = {"cpu_s": 1.0, "wall_s": 1.0, "passed": True, "command": "by hand"}
    ledger_path.write_text(json.dumps(ledger))
    # A new machine: the last run folder is gone; the store holds what the card reads.
    import shutil

    shutil.rmtree(tiny_plan / "cnn-01")
    done = _plan("run", "--jobs", "1", work=tiny_plan)
    assert done.returncode == 0, done.stderr
    assert "gnn does not ship: its gate failed" in done.stderr
    # The replays: the GNN's rows stay (it did not ship); a scaled plan's CNN ships into a folder
    # of its own, which no record plays with, and its ledger says so.
    assert "gnn's rows are not replayed: it has not shipped" in done.stderr
    bundled = tiny_plan / "store" / "bundled"
    assert sorted(p.name for p in bundled.glob("*.pt")) == ["cnn.pt"]
    ledger = json.loads(ledger_path.read_text())
    assert ledger["ship-cnn"]["weights_sha256"] == file_sha256(bundled / "cnn.pt")
    assert "ship-gnn" not in ledger and ledger["test-data"]["states"]["test"] > 0
    assert "replay-gnn" not in ledger and ledger["replay-cnn"]["replayed"] == []
    assert "not the package's" in ledger["replay-cnn"]["note"]
    assert "--seed 6199" in ledger["test-data"]["command"]
    card = (bundled / "cnn.md").read_text()
    assert "Held-out dataset `test`" in card and "deleted after training" in card
    shipped = json.loads((bundled / "cnn.json").read_text())
    assert {s["entropy"] for s in shipped["extra"]["data_seed_streams"]} == {6100, 6101}


def test_the_replays_cover_every_finished_table_of_a_networks_solvers():
    """replay-NET plays again each committed record and compare table's rows of the solvers the
    network decides (value-gnn too: its values are the GNN's), none of another's."""
    plan = _plan_module()
    from nnsweeper.evaluation import EvalTable

    for net in plan.NETS:
        found = plan.replays(net)
        assert found, net
        for name, solvers, table in found:
            assert table == ROOT / "eval" / "results" / f"{name}.json"
            assert set(solvers) == set(EvalTable.from_json(table).solvers) & set(plan.PLAYED_BY[net])
    assert ("record_expert_models", ("gnn", "hybrid-gnn", "value-gnn")) in [
        (n, s) for n, s, _ in plan.replays("gnn")]
    assert all("cnn" not in s for _, solvers, _ in plan.replays("gnn") for s in solvers)


def test_bad_arguments_are_refused_in_one_line(tmp_path):
    bad = _plan("run", "--until", "gnn-07", work=tmp_path)
    assert bad.returncode == 2 and "--until must be a step of the plan" in bad.stderr
    real = subprocess.run([*PLAN, "run", "--scale", "0.5"], capture_output=True, text=True, timeout=60)
    assert real.returncode == 2 and "needs its own --work folder" in real.stderr


def _plan_module():
    sys.path.insert(0, str(ROOT / "train"))
    try:
        import plan
    finally:
        sys.path.remove(str(ROOT / "train"))
    return plan


def test_the_gate_and_the_card_get_paths_inside_the_checkout_relative_to_it(tmp_path):
    """The plan's gate grid and the model card that quotes it are committed: they name the weights
    and the grid by paths relative to the checkout, never by where it lies on one machine."""
    plan = _plan_module()
    assert plan.Plan().gate_prefix("gnn") == Path("eval/results/gate/plan-gnn")
    assert plan.Plan(work=tmp_path, scale=0.001).gate_prefix("cnn") == tmp_path / "store" / "gate-cnn"
    # What is committed holds no absolute path that leads into a checkout.
    import re

    absolute = re.compile(r"(?<![\w.~-])/(?:[\w.-]+/)+(?:train/plan|eval/results|runs/plan|data/plan)/")
    committed = [*(ROOT / "eval" / "results" / "gate").glob("*.md"),
                 *(ROOT / "eval" / "results" / "gate").glob("*.json"),
                 *(ROOT / "nnsweeper" / "models" / "weights").glob("*.md"),
                 ROOT / "train" / "plan" / "ledger.json"]
    assert committed
    for path in committed:
        found = absolute.search(path.read_text(encoding="utf-8"))
        assert found is None, f"{path.name}: {found[0]}"
