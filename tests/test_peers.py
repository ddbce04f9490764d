"""The harness that has DavidNHill's Java solver play our boards (benchmarks/peers/java_dnh.py).

Its pure-Python side: the layouts it exports, the results it reads back, its chunks and the
table row made of them, and reproduce.py skipping the row. None of it needs Java; the one test
that plays needs javac and a clone of the peer (NNSWEEPER_DNH_SOURCE), and is skipped without.
"""

import importlib.util
import json
import os
import shutil
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from nnsweeper import MinesweeperEnv
from nnsweeper.evaluation import EvalTable, game_seeds, pack_outcomes
from nnsweeper.game import draw_layout

ROOT = Path(__file__).resolve().parents[1]
INFO = {"sources": "a" * 64, "commit": "0806bb80042184e4f2b1413f4092c4e09526c237", "adapter": "b" * 64}


def _module(relative: str):
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def dnh():
    return _module("benchmarks/peers/java_dnh.py")


def _results_text(dnh, board, layouts, state, guesses, revealed, crc=None, cells=False) -> str:
    """What the adapter's PlayLayouts would write for these games."""
    crc = layouts.crc() if crc is None else crc
    lines = [f"{layouts.first_game + k} {state[k]} {guesses[k]} {revealed[k]} {1000 * (k + 1)} {crc[k]}"
             + (f" {layouts.cells(k)}" if cells else "") for k in range(len(layouts))]
    return "\n".join([f"nnsweeper-peer-results {dnh.FORMAT}", f"games {len(layouts)}", *lines]) + "\n"


def _games(dnh, board, n, seed):
    """Made-up results of ``n`` games: about two in five won."""
    rng = np.random.default_rng(seed)
    won = rng.random(n) < 0.4
    state = np.where(won, dnh.WON, dnh.LOST)
    revealed = np.where(won, board.safe_cells, rng.integers(1, board.safe_cells, n))
    return dnh.PeerGames(state, rng.integers(0, 9, n), revealed, rng.integers(10**6, 10**8, n))


def test_layouts_are_the_games_nnsweeper_plays(dnh):
    # The games of an evaluation with start="corner": the env of each seed, first click at (0, 0).
    board = dnh.board_arg("expert")
    seeds = game_seeds(2026, 200)
    layouts = dnh.export_layouts(board, seeds, first_game=0)
    for k, sd in enumerate(seeds):
        env = MinesweeperEnv(rows=16, cols=30, mines=99, seed=int(sd), first_click="safe")
        env.step(0)
        mines = env.mine_layout()
        assert np.array_equal(layouts.boards[k] < 0, mines) and np.array_equal(layouts.boards[k], env.board)
        assert np.array_equal(mines, draw_layout(board.rules, int(sd), (0, 0)))
        assert not mines[0, 0] and len(layouts.tiles[k]) == 99
    # The file the adapter reads: width (columns) first, tiles y * width + x = row * cols + col.
    text = dnh.layouts_text(board, layouts).splitlines()
    assert text[:4] == ["nnsweeper-layouts 1", "board 30 16 99", "start 0 0", "games 200"]
    index, seed, *tiles = map(int, text[4 + 7].split())
    assert (index, seed) == (7, int(seeds[7]))
    mine = np.zeros((16, 30), dtype=bool)
    for t in tiles:
        mine[t // 30, t % 30] = True  # y = row, x = col
    assert np.array_equal(mine, layouts.boards[7] < 0)
    # The CRC the adapter computes: the board's bytes row by row, -1 for a mine.
    assert layouts.crc()[3] == zlib.crc32(layouts.boards[3].astype(np.int8).tobytes())


def test_results_are_read_and_checked_game_by_game(dnh):
    board = dnh.board_arg("beginner")
    layouts = dnh.export_layouts(board, game_seeds(5, 6), first_game=12)
    state = [3, 2, 2, 1, 3, 2]
    revealed = [71, 30, 5, 40, 71, 1]
    text = _results_text(dnh, board, layouts, state, [0, 1, 2, 3, 4, 5], revealed, cells=True)
    got = dnh.parse_results(text, board, layouts, cells=True)
    assert got.won.tolist() == [True, False, False, False, True, False]
    assert got.guesses.tolist() == [0, 1, 2, 3, 4, 5] and got.nanos[0] == 1000
    assert got.cells[2] == layouts.cells(2)
    bad_crc = layouts.crc().copy()
    bad_crc[4] += 1

    def parse(state, revealed, crc=None):
        text = _results_text(dnh, board, layouts, state, [0] * 6, revealed, crc)
        return dnh.parse_results(text, board, layouts)

    with pytest.raises(dnh.PeerError, match=r"game 16 \(seed \d+\): the peer played another board"):
        parse(state, revealed, bad_crc)
    with pytest.raises(dnh.PeerError, match="game 13 .*revealed 71 of 71 safe cells, which does not fit"):
        parse(state, [71] * 6)
    with pytest.raises(dnh.PeerError, match="final state must be won .* got 0"):
        parse([3, 0, 2, 1, 3, 2], revealed)
    text = _results_text(dnh, board, layouts, state, [0] * 6, revealed)
    with pytest.raises(dnh.PeerError, match="not those of 6 games"):
        dnh.parse_results(text.rsplit("\n", 2)[0] + "\n", board, layouts)  # the last game missing
    lines = text.splitlines()
    lines[3], lines[4] = lines[4], lines[3]
    with pytest.raises(dnh.PeerError, match="out of order: game 14 where game 13"):
        dnh.parse_results("\n".join(lines), board, layouts)
    moved = _results_text(dnh, board, layouts, state, [0] * 6, revealed, cells=True).splitlines()
    last = moved[-1].split(" ")
    last[-1] = last[-1][1:] + last[-1][0]  # the board shifted by one cell
    moved[-1] = " ".join(last)
    with pytest.raises(dnh.PeerError, match=r"game 17 .*board differs from nnsweeper's at row \d, col \d"):
        dnh.parse_results("\n".join(moved), board, layouts, cells=True)


def _run_folder(dnh, tmp_path, board, base_seed=2026):
    folder = tmp_path / "run"
    folder.mkdir()
    run = {**dnh.new_run(board, base_seed, INFO), "runs": [
        {"started": "2026-11-28T00:00:00+00:00", "status": "finished", "games": 40, "wall_seconds": 3.5,
         "workers": 1, "cpus": 2, "machine": "test", "nnsweeper_version": "0", "java": "openjdk",
         "command": "python benchmarks/peers/java_dnh.py play --board expert --games 40"}]}
    (folder / dnh.RUN_FILE).write_text(json.dumps(run))
    return folder, run


def _write(dnh, folder, run, board, a, b, seed=0):
    seeds = game_seeds(run["base_seed"], b)[a:b]
    layouts = dnh.Layouts(a, seeds, np.zeros((b - a, board.mines), dtype=np.int32),
                          np.zeros((b - a, board.rows, board.cols), dtype=np.int8))
    games = _games(dnh, board, b - a, seed)
    return dnh.write_chunk(folder, run, layouts, games, {"run_started": "x", "wall_seconds": 1.0}), games


def test_chunks_read_back_into_a_paired_table_row(dnh, tmp_path):
    board = dnh.board_arg("expert")
    folder, run = _run_folder(dnh, tmp_path, board)
    _, g1 = _write(dnh, folder, run, board, 16, 40, seed=2)
    _, g0 = _write(dnh, folder, run, board, 0, 16, seed=1)
    assert sorted(p.name for p in folder.iterdir()) == ["000000000000-000000000016.npz",
                                                       "000000000016-000000000040.npz", "run.json"]
    won = np.concatenate([g0.won, g1.won])
    table = dnh.peer_table(folder)
    (row,) = table.rows
    assert row["solver"] == "java-dnh"
    assert (row["board"], row["games"], row["base_seed"]) == ("expert", 40, 2026)
    assert row["wins"] == int(won.sum()) and row["outcomes"] == pack_outcomes(won)
    assert row["mean_guesses"] == pytest.approx(np.concatenate([g0.guesses, g1.guesses]).mean())
    micros = np.round(np.concatenate([g0.nanos, g1.nanos]) / 1e3)
    assert row["mean_seconds"] == pytest.approx(micros.mean() / 1e6)
    assert row["median_seconds"] == pytest.approx(np.median(micros) / 1e6)
    lost = ~won
    cleared = np.concatenate([g0.revealed, g1.revealed])[lost] / board.safe_cells
    assert row["mean_cleared_lost"] == pytest.approx(cleared.mean())
    described = table.metadata["solvers"]["java-dnh"]
    assert described.startswith("Peer(start='corner', program='DavidNHill/Minesweeper'")
    assert table.metadata["runs"][0]["games"] == 40 and "command" not in table.metadata["runs"][0]

    # Into a table whose rows played the same 40 games: paired, game by game.
    other = {**row, "solver": "search", "outcomes": pack_outcomes(~won), "wins": int(lost.sum()),
             "win_rate": lost.mean()}
    meta = {"arguments": {"boards": [["expert", 16, 30, 99]], "trials": 40, "base_seed": 2026,
                          "first_click": "safe", "n_jobs": 2},
            "solvers": {"search": "SearchSolver(start='corner')"}, "command": "nnsweeper eval ..."}
    target = tmp_path / "t.json"
    EvalTable([other], meta).to_json(target)
    (tmp_path / "t.csv").write_text("")
    merged = dnh.into_table(folder, target)
    assert merged.solvers == ["search", "java-dnh"]
    again = EvalTable.from_json(target)
    assert again.solvers == ["search", "java-dnh"] and "java-dnh" in (tmp_path / "t.csv").read_text()
    (d,) = again.difference("java-dnh", "search")
    assert d["paired"] and d["solver_only"] == int(won.sum()) and d["reference_only"] == int(lost.sum())
    assert again.metadata["added"][0]["solvers"] == ["java-dnh"]
    # A second time the row is replaced, not added twice.
    assert dnh.into_table(folder, target).solvers == ["search", "java-dnh"]
    # Rows of other games are refused.
    EvalTable([{**other, "base_seed": 7}], meta).to_json(tmp_path / "u.json")
    with pytest.raises(dnh.PeerError, match="played games of base seed 7; the peer's run .* base seed 2026"):
        dnh.into_table(folder, tmp_path / "u.json")
    EvalTable([{**other, "games": 80, "outcomes": None}], meta).to_json(tmp_path / "v.json")
    with pytest.raises(dnh.PeerError, match="holds 40 of the 80 games the row needs"):
        dnh.into_table(folder, tmp_path / "v.json")


def test_bad_or_partial_chunks_are_refused(dnh, tmp_path):
    board = dnh.board_arg("expert")
    folder, run = _run_folder(dnh, tmp_path, board)
    p0, _ = _write(dnh, folder, run, board, 0, 16)
    p1, _ = _write(dnh, folder, run, board, 24, 40)
    # A gap: games 16-24 are missing, and play knows which to play.
    with pytest.raises(dnh.PeerError, match=r"holds games \[24, 40\) after 16 games"):
        dnh.peer_row(dnh.held_chunks(folder, run), run, 40)
    assert dnh.missing(dnh.held_chunks(folder, run), 48, 16) == [(16, 24), (40, 48)]
    assert dnh.missing([], 40, 16) == [(0, 16), (16, 32), (32, 40)]
    # A chunk cut short (a copy that stopped half-way) is named, with the way out.
    data = p1.read_bytes()
    p1.write_bytes(data[: len(data) // 2])
    with pytest.raises(dnh.PeerError, match=r"chunk .*000000000024-000000000040.npz' is damaged .*remove it"):
        dnh.held_chunks(folder, run)
    p1.unlink()
    # A chunk of other games (another base seed) or of another build of the peer.
    with pytest.raises(dnh.PeerError, match="holds games of another run: its base_seed is 2026, the run's 5"):
        dnh.read_chunk(p0, {**run, "base_seed": 5})
    with pytest.raises(dnh.PeerError, match="its sources is 'aaaa"):
        dnh.read_chunk(p0, {**run, "sources": "c" * 64})
    # A chunk renamed to other games.
    shutil.copy(p0, folder / "000000000016-000000000032.npz")
    with pytest.raises(dnh.PeerError, match=r"records games \[0, 16\], not \[16, 32\]"):
        dnh.held_chunks(folder, run)
    os.unlink(folder / "000000000016-000000000032.npz")
    # Overlapping chunks.
    _write(dnh, folder, run, board, 8, 24)
    with pytest.raises(dnh.PeerError, match="overlap; remove one"):
        dnh.held_chunks(folder, run)
    # Another run's folder: play refuses before it plays (and before it needs Java).
    with pytest.raises(dnh.PeerError, match="holds a run with base_seed 2026; this one has 9"):
        dnh.play({**INFO, "classes": "none"}, board, 40, 9, 16, folder)
    with pytest.raises(dnh.PeerError, match="chunk must be an integer from 1 to 100000; got 0"):
        dnh.play({**INFO, "classes": "none"}, board, 40, 2026, 0, folder)


def test_cli_refuses_bad_input_with_one_line(dnh, tmp_path, capsys):
    assert dnh.main(["build", "--source", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a clone of github DavidNHill/Minesweeper" in err
    assert dnh.main(["play", "--build", str(tmp_path), "--board", "expert", "--games", "10",
                     "--base-seed", "1", "--out", str(tmp_path / "o")]) == 2
    assert "no build of the peer in" in capsys.readouterr().err
    assert dnh.main(["table", "--out", str(tmp_path), "--into", str(tmp_path / "t.json")]) == 2
    assert "holds no run of the peer" in capsys.readouterr().err


def test_reproduce_skips_and_names_a_peer_row(dnh, tmp_path, capsys):
    reproduce = _module("eval/reproduce.py")
    table = json.loads((ROOT / "eval" / "results" / "compare_classic.json").read_text())
    (csp,) = [r for r in table["rows"] if r["solver"] == "csp" and r["board"] == "beginner"]
    run = dnh.new_run(dnh.board_arg("beginner"), csp["base_seed"], INFO)
    table["rows"] = [csp, {**csp, "solver": "java-dnh"}]
    table["metadata"]["solvers"] = {"csp": table["metadata"]["solvers"]["csp"], "java-dnh": dnh.describe(run)}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table))
    rows, played, mismatches, skipped = reproduce.replay(path, games=2, sample_seed=0)
    assert (rows, played, mismatches) == (1, 2, [])
    assert skipped == ["java-dnh beginner 10 mines: played by DavidNHill/Minesweeper 0806bb800421, a program "
                       "outside nnsweeper"]
    assert reproduce.main([str(path), "--games", "1"]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: 1 rows checked, 1 games replayed, 0 differ, 1 rows "
                                              "of outside programs skipped\n  skipped: java-dnh beginner")
    assert reproduce.outside_program("CSPSolver(start='corner')") is None


def test_the_peers_moves_are_read_as_clicks_of_ours(dnh):
    board = dnh.board_arg("expert")  # 30 wide (x, the column), 16 high (y, the row)
    clicks = dnh.parse_moves("0,0,1,1;29,15,1,0;3,2,3,1;4,1,1,1", board, "game 0")
    Click = dnh.Click
    assert clicks == [Click((0, 0), True), Click((15, 29), False), Click((1, 4), True)]  # the flag left out
    for bad, why in (("3,2,2,1", "cleared around"), ("30,0,1,1", "off the expert board"),
                     ("1,2,1", "is not x,y,action,certain"), ("1,2,4,1", "or unknown"), ("", "is not")):
        with pytest.raises(dnh.PeerError, match=why):
            dnh.parse_moves(bad, board, "game 0")
    # A results line with MOVES: parsed when asked for, refused as a line of another form when not.
    layouts = dnh.export_layouts(board, game_seeds(2026, 1))
    text = _results_text(dnh, board, layouts, [dnh.LOST], [1], [5]).rstrip("\n") + " 0,0,1,1;29,15,1,0\n"
    games = dnh.parse_results(text, board, layouts, moves=True)
    assert games.moves == [[Click((0, 0), True), Click((15, 29), False)]]
    with pytest.raises(dnh.PeerError, match="is not INDEX STATE GUESSES REVEALED NANOS CRC:"):
        dnh.parse_results(text, board, layouts)


@pytest.mark.skipif(shutil.which("javac") is None or not os.environ.get("NNSWEEPER_DNH_SOURCE"),
                    reason="needs javac and a clone of the peer (NNSWEEPER_DNH_SOURCE=PATH)")
def test_the_peer_plays_our_boards(dnh, tmp_path):
    dnh.build(os.environ["NNSWEEPER_DNH_SOURCE"], tmp_path / "build")
    info = dnh.load_build(tmp_path / "build")
    board = dnh.board_arg("beginner")
    dnh.play(info, board, 12, 3, 5, tmp_path / "run", warmup=0, log=lambda _: None)
    first = dnh.peer_table(tmp_path / "run")
    dnh.play(info, board, 12, 3, 5, tmp_path / "run", log=lambda _: None)  # nothing left to play
    again = dnh.peer_table(tmp_path / "run")
    assert first.rows[0]["outcomes"] == again.rows[0]["outcomes"] and first.rows[0]["games"] == 12
    assert dnh.check(info, board, 6, 3, 3, warmup=0, log=lambda _: None)
    own = dnh.own_boards(info, 5, 450637648, board, adapter=True, warmup=0)
    assert own["games"] == 5 and own["same"] == 5 and own["adapter_wins"] == own["wins"]
    # csp on the same 12 games; every game they end differently is classified.
    from nnsweeper import evaluate
    from nnsweeper.solvers.csp import CSPSolver

    table = evaluate({"csp": CSPSolver(start="corner")}, boards=["beginner"], trials=12, base_seed=3,
                     n_jobs=1, progress=False)
    table.to_json(tmp_path / "t.json")
    result = dnh.discord(info, tmp_path / "run", tmp_path / "t.json", "csp", warmup=0, log=lambda _: None)
    peer = dnh.unpack_outcomes(first.rows[0]["outcomes"], 12)
    ours = dnh.unpack_outcomes(table.rows[0]["outcomes"], 12)
    assert len(result["rows"]) == int((peer != ours).sum()) == result["peer_only"] + result["solver_only"]
    assert sum(k["first"] + k["second"] for k in result["kinds"].values()) == len(result["rows"])
    # Measured with the peer at 0806bb8: four such games, each parting at a guess of its own kind.
    assert sorted(r["kind"] for r in result["rows"]) == ["50/50", "dead cell", "first guess", "first guess"]
