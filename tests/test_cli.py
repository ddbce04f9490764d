"""The nnsweeper command, run in-process."""

import io
import json
import threading
import warnings

import numpy as np
import pytest

import nnsweeper as ns
from nnsweeper.cli import main
from nnsweeper.evaluation import EvalTable, format_summary


def one_error_line(capsys, code, *fragments):
    """Assert exit code 2 and exactly one 'nnsweeper: error:' line holding the fragments."""
    assert code == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("nnsweeper: error: ")
    for f in fragments:
        assert f in lines[0]
    assert "Traceback" not in err
    return lines[0]


def test_eval_writes_table_json_and_plot(tmp_path, capsys):
    prefix = tmp_path / "results" / "run"
    code = main(["eval", "--solvers", "single_point,csp", "--rows", "5", "--cols", "6",
                 "--mines", "2,5", "--trials", "6", "--jobs", "1", "--base-seed", "4",
                 "--start", "corner", "--out", str(prefix), "--quiet"])
    assert code == 0
    out, err = capsys.readouterr()
    assert err == ""  # --quiet: no progress bar
    files = sorted(p.name for p in prefix.parent.iterdir())
    assert files == ["run.csv", "run.games", "run.json", "run.png"]
    # Every game is kept, per solver and board, for a rerun to continue from.
    jobs = sorted(p.name for p in (prefix.parent / "run.games").iterdir() if p.is_dir())
    assert jobs == ["csp-5x6x2", "csp-5x6x5", "single_point-5x6x2", "single_point-5x6x5"]
    table = EvalTable.from_json(prefix.with_suffix(".json"))
    # The answer, not the table: per board, each solver and its paired gap to csp.
    assert out == format_summary(table) + "\n"
    assert out.splitlines()[0].startswith("5x6, safe first click in the corner, 2 to 5 mines (2 counts), "
                                          "6 games each")
    assert "reference" in out and "single_point" in out
    assert [(r["solver"], r["mines"], r["games"]) for r in table] == [
        ("single_point", 2, 6), ("single_point", 5, 6), ("csp", 2, 6), ("csp", 5, 6)]
    meta = table.metadata
    assert meta["command"].startswith("nnsweeper eval --solvers single_point,csp")
    assert meta["arguments"]["base_seed"] == 4
    assert "start='corner'" in meta["solvers"]["csp"]
    header = prefix.with_suffix(".csv").read_text().splitlines()[0]
    assert header.startswith("solver,board,rows,cols,mines")
    assert prefix.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def png_size(path):
    from PIL import Image

    with Image.open(path) as image:
        return image.size


def test_eval_json_keeps_every_game_and_the_plot_has_a_difference_panel(tmp_path, capsys):
    prefix = tmp_path / "run"
    assert main(["eval", "--solvers", "single_point,csp", "--rows", "5", "--cols", "5",
                 "--mines", "3,5", "--trials", "9", "--out", str(prefix), "--quiet"]) == 0
    alone = tmp_path / "alone"
    assert main(["eval", "--solvers", "single_point", "--rows", "5", "--cols", "5",
                 "--mines", "3,5", "--trials", "9", "--out", str(alone), "--quiet"]) == 0
    capsys.readouterr()
    doc = json.loads(prefix.with_suffix(".json").read_text())
    assert all(len(r["outcomes"]) == 4 and r["base_seed"] == 0 for r in doc["rows"])  # 9 games, 2 bytes
    assert "outcomes" not in prefix.with_suffix(".csv").read_text()
    table = EvalTable.from_json(prefix.with_suffix(".json"))
    assert all(d["paired"] for d in table.difference("single_point"))
    # Two panels (win rate, difference from csp) against one without csp: a taller figure.
    assert png_size(prefix.with_suffix(".png"))[1] > 1.4 * png_size(alone.with_suffix(".png"))[1]


def test_plot_redraws_a_saved_table(tmp_path, capsys):
    prefix = tmp_path / "run"
    assert main(["eval", "--solvers", "single_point,csp", "--rows", "5", "--cols", "5",
                 "--mines", "3,5", "--trials", "6", "--out", str(prefix), "--quiet"]) == 0
    capsys.readouterr()
    png = prefix.with_suffix(".png")
    first = png.read_bytes()
    png.unlink()
    assert main(["plot", str(prefix.with_suffix(".json"))]) == 0
    assert capsys.readouterr().out == f"wrote {png}\n"
    assert png.read_bytes()[:4] == b"\x89PNG" and png_size(png) == png_size_of(first)
    other = tmp_path / "figs" / "against_single_point.png"
    assert main(["plot", str(prefix.with_suffix(".json")), "--out", str(other),
                 "--reference", "single_point"]) == 0
    capsys.readouterr()
    assert png_size(other)[1] == png_size(png)[1]  # two panels as well
    # A table from before the outcomes were saved still plots (unpaired intervals).
    doc = json.loads(prefix.with_suffix(".json").read_text())
    for r in doc["rows"]:
        del r["outcomes"], r["base_seed"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    assert main(["plot", str(old)]) == 0
    assert (tmp_path / "old.png").exists()


@pytest.mark.parametrize("board", [["--board", "5x6:2,5"], ["--board", "5x6:2", "--board", "6x5:3"],
                                   ["--preset", "beginner"]])
def test_plot_draws_the_axis_eval_drew(board, tmp_path, capsys):
    # eval draws a mines axis for one board size given as --board (9x9:5-25/5), and the boards
    # side by side for presets or several sizes; plot of its table draws the same figure.
    prefix = tmp_path / "run"
    assert main(["eval", "--solvers", "single_point,csp", *board, "--trials", "3",
                 "--out", str(prefix), "--quiet"]) == 0
    again = tmp_path / "again.png"
    assert main(["plot", str(prefix.with_suffix(".json")), "--out", str(again)]) == 0
    capsys.readouterr()
    assert again.read_bytes() == prefix.with_suffix(".png").read_bytes()


def png_size_of(data: bytes):
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return image.size


@pytest.mark.parametrize(
    ("make", "extra", "fragments"),
    [
        (None, [], ["cannot read table", "no such file"]),
        ("{\"a\": 1}", [], ["is not an evaluation table"]),
        ("[1, 2", [], ["is not valid JSON"]),
        ("{\"rows\": [{\"solver\": \"csp\"}]}", [], ["is not an evaluation table", "lacks column(s)"]),
        ("{\"rows\": []}", [], ["holds no rows to plot"]),
        ("TABLE", ["--reference", "gnn"],
         ["--reference must be one of the tables' solvers (single_point, csp)", "got 'gnn'"]),
    ],
)
def test_plot_refuses_bad_input(make, extra, fragments, tmp_path, capsys):
    source = tmp_path / "t.json"
    if make == "TABLE":
        assert main(["eval", "--solvers", "single_point,csp", "--rows", "4", "--cols", "4", "--mines", "2",
                     "--trials", "2", "--out", str(tmp_path / "t"), "--quiet"]) == 0
        capsys.readouterr()
        (tmp_path / "t.png").unlink()
    elif make is not None:
        source.write_text(make)
    one_error_line(capsys, main(["plot", str(source), *extra]), *fragments)
    assert not list(tmp_path.glob("*.png"))


def test_plot_names_a_file_that_is_not_a_table(tmp_path, capsys):
    # A chunk of eval's game store (a zip archive), an empty file and JSON of another shape
    # each end in one line naming the file and what plot reads (the chunk's bytes were a
    # bare "'utf-8' codec can't decode byte 0xa1").
    prefix = tmp_path / "run"
    assert main(["eval", "--solvers", "single_point", "--rows", "5", "--cols", "5", "--mines", "3",
                 "--trials", "4", "--out", str(prefix), "--quiet"]) == 0
    capsys.readouterr()
    chunk = sorted(prefix.with_suffix(".games").glob("*/*.npz"))[0]
    empty = tmp_path / "empty.json"
    empty.write_text("")
    other = tmp_path / "other.json"
    other.write_text("{}")
    expected = "it is not an evaluation table (JSON written by eval or compare): "
    for source, why in [(chunk, "it is a zip archive"), (empty, "the file is empty"),
                        (other, "it has no list of rows")]:
        one_error_line(capsys, main(["plot", str(source)]), f"cannot read table {str(source)!r}: ",
                       expected + why)
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n")
    one_error_line(capsys, main(["plot", str(binary)]), f"cannot read table {str(binary)!r}: ",
                   expected + "it is not UTF-8 text (byte 0x89 at offset 0)")
    assert sorted(tmp_path.rglob("*.png")) == [binary, prefix.with_suffix(".png")]  # no figure drawn


def test_loky_restarting_a_worker_prints_nothing_across_the_progress_bar(tmp_path, capsys):
    # loky replaces a worker that grew by 300 MB, with this notice from its own thread; the
    # games are unaffected, so the workers eval starts leave the notice silent.
    restart = ("A worker stopped while some jobs were given to the executor. This can be caused by a "
               "too short worker timeout or by a memory leak.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["eval", "--solvers", "csp", "--board", "5x5:3", "--trials", "8", "--jobs", "2",
                     "--out", str(tmp_path / "run"), "--quiet"]) == 0
        for message in (restart, "another notice"):  # from a thread of its own, as loky warns
            thread = threading.Thread(target=warnings.warn, args=(message, UserWarning, 1))
            thread.start()
            thread.join()
    assert [str(w.message) for w in caught] == ["another notice"]
    capsys.readouterr()


def test_eval_classic_presets(tmp_path, capsys):
    prefix = tmp_path / "classic"
    assert main(["eval", "--preset", "classic", "--solvers", "csp", "--trials", "2",
                 "--out", str(prefix), "--quiet"]) == 0
    capsys.readouterr()
    doc = json.loads(prefix.with_suffix(".json").read_text())
    assert [(r["board"], r["rows"], r["cols"], r["mines"]) for r in doc["rows"]] == [
        ("beginner", 9, 9, 10), ("intermediate", 16, 16, 40), ("expert", 16, 30, 99)]
    assert prefix.with_suffix(".png").exists()



def test_help_for_each_command(capsys):
    assert main(["--help"]) == 0
    assert "analyze" in capsys.readouterr().out
    assert main(["eval", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--trials" in out and "--preset" in out and "path prefix" in out
    assert main(["analyze", "--help"]) == 0
    assert "--mines" in capsys.readouterr().out
    assert main(["plot", "--help"]) == 0
    out = capsys.readouterr().out
    assert "TABLE.json" in out and "--reference" in out
    assert main(["generate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "ROWSxCOLS:MINES" in out and "--record" in out and "--backend" in out
    assert main(["train", "--help"]) == 0  # the config keys, read when the help is shown, come last
    out = capsys.readouterr().out
    assert "example: nnsweeper train" in out and "\n\nconfig keys (section.key = default" in out


def test_train_value_help_gives_the_defaults_it_fills_in(capsys):
    assert main(["train-value", "--help"]) == 0
    out = capsys.readouterr().out
    assert '  model.arch = "value-gnn"\n      The architecture: value-gnn, value-cnn (gnn means' in out
    assert "required: cnn, gnn" not in out and 'with arch = "gnn"' not in out
    assert '  with arch = "value-gnn":' in out and '  with arch = "value-cnn":' in out
    assert "  train.epochs = 8\n" in out and "  train.warmup = 0.1\n" in out
    assert ('  output.dir = "runs/value_gnn"\n      The run folder (new or empty; --resume continues the run '
            "in it).\n") in out
    assert main(["train", "--help"]) == 0  # train's keep theirs
    out = capsys.readouterr().out
    assert "  model.arch = none\n      The architecture, required: cnn, gnn." in out
    assert "  train.epochs = 10\n" in out and "  output.dir = none\n" in out


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        ([], ["required: COMMAND"]),
        (["play"], ["play needs a terminal"]),
        # --out has a default: a misspelt solver is the first mistake reported.
        (["eval", "--solvers", "csx"], ["unknown solver 'csx'", "csp"]),
        (["eval", "--mines", "5,x", "--out", "o"], ["--mines", "5,x"]),
        (["eval", "--trials", "0", "--out", "o"], ["--trials", "positive integer; got 0"]),
        (["eval", "--jobs", "0", "--out", "o"], ["--jobs", "non-zero integer"]),
        (["eval", "--first-click", "lucky", "--out", "o"], ["--first-click", "'lucky'"]),
        (["eval", "--solvers", "nope", "--out", "o"], ["unknown solver 'nope'", "csp"]),
        (["eval", "--mines", "99", "--out", "o"], ["mines must be between 1 and 98", "got 99"]),
        (["eval", "--preset", "classic", "--mines", "5", "--out", "o"],
         ["--preset", "--mines"]),
        (["eval", "--start", "middle", "--out", "o"], ["--start", "'middle'"]),
        (["generate", "out", "10x10:5:3", "--policy", "greedy"], ["--policy", "'greedy'"]),
        (["generate", "out", "10x10:99:3"], ["impossible configuration 10x10 with 99 mines"]),
        (["generate", "out", "10x10:5:3", "--splits", "0.5,0.5"], ["three fractions"]),
        (["generate", "out", "10x10:5:3", "--scheduler", "tcp://x:1"], ["scheduler", "dask"]),
        (["eval", "--dataset", "nowhere", "--out", "o"], ["no dataset manifest", "nowhere"]),
        # Huge or degenerate requests: refused up front, before any allocation or worker.
        (["eval", "--solvers", "csp", "--rows", "100000", "--cols", "100000", "--mines", "5", "--trials", "1",
          "--out", "r"], ["argument --rows: must be at most 1000", "got 100000"]),
        (["eval", "--solvers", "csp", "--rows", "9", "--cols", "9", "--mines", "10", "--trials", "1000000000",
          "--out", "r"], ["argument --trials: must be at most 10000000", "got 1000000000"]),
        (["generate", "out", "100000x100000:5:1"], ["rows must be at most 1000; got 100000"]),
        (["generate", "out", "200x200:5:1"], ["at most 10000 cells", "200x200 = 40000"]),
        (["generate", "out", "100x100:1500:20"], ["shard_games=50 is too many for 100x100 boards"]),
        (["generate", "out", "10x10:5", "--games", "2000000"], ["--games: must be at most 1000000"]),
        (["generate", "out", "10x10:5:9", "--shard-games", "0"], ["--shard-games", "positive integer"]),
        (["generate", "out", "10x10:5:9", "--jobs", "100000"], ["--jobs", "non-zero integer from -"]),
        (["eval", "--jobs", "100000", "--out", "o"], ["--jobs", "got 100000"]),
        (["eval", "--mines", "1-100000000000", "--out", "o"], ["--mines", "at most 10000 values"]),
        (["eval", "--solvers", "single_point,csp", "--mines", "5-30", "--trials", "10000000", "--out", "o"],
         ["at most 100000000 games", "10000000 x 26 x 2"]),
        (["eval", "--start", "50,50", "--trials", "2", "--out", "o"], ["start row", "[0, 10)", "got 50"]),
        (["compare", "--cols", "1001", "--out", "o"], ["--cols: must be at most 1000"]),
        (["evaluate-model", "--model", "cnn", "--data", "d", "--out", "o", "--batch-size", "0"],
         ["--batch-size", "positive integer"]),
        (["evaluate-model", "--model", "cnn", "--data", "d", "--out", "o", "--max-batches", "-1"],
         ["--max-batches", "non-negative integer"]),
    ],
)
def test_bad_arguments_give_one_line_and_exit_code_2(argv, fragments, capsys, tmp_path,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_error_line(capsys, main(argv), *fragments)
    assert "usage:" not in line
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_eval_refuses_seeds_of_a_dataset(tmp_path, capsys):
    manifest = {"seed_streams": [{"split": "test", "seeds": [1826701614]}]}  # game_seeds(0, 1)[0]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    one_error_line(capsys, main(["eval", "--mines", "3", "--rows", "5", "--cols", "5", "--trials", "2",
                                 "--quiet", "--dataset", str(path), "--out", str(tmp_path / "r")]),
                   "1 evaluation game seed(s) are also in the dataset's 'test' split")
    assert not list(tmp_path.glob("r.*"))


def test_eval_out_must_be_a_prefix(tmp_path, capsys):
    one_error_line(capsys, main(["eval", "--mines", "3", "--trials", "1", "--quiet",
                                 "--out", str(tmp_path)]), "path prefix")


@pytest.mark.parametrize(
    ("text", "mines", "fragments"),
    [
        ("1 . .\n. x .\n", "2", ["line 2, column 3", "'x'"]),
        ("1 . .\n. .\n", "2", ["line 2: row has 2 cells but line 1 has 3"]),
        ("", "2", ["empty"]),
        ("4 .\n. .\n", "3", ["cannot be satisfied"]),  # a 4 with three neighbours
        ("1 .\n. .\n", "9", ["do not fit"]),
    ],
)
def test_analyze_bad_boards(text, mines, fragments, tmp_path, capsys):
    board = tmp_path / "b.txt"
    board.write_text(text)
    one_error_line(capsys, main(["analyze", str(board), "--mines", mines]), *fragments)


def test_analyze_missing_file(tmp_path, capsys):
    one_error_line(capsys, main(["analyze", str(tmp_path / "none.txt"), "--mines", "3"]),
                   "cannot read board file", "No such file")


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_analyze_refuses_huge_and_binary_input(source, tmp_path, capsys, monkeypatch):
    # The cap is 16 MiB; a smaller one here shows that reading stops there.
    monkeypatch.setattr("nnsweeper.boardtext.MAX_TEXT_CHARS", 64)
    where = "stdin" if source == "stdin" else "board file"

    def run(data: bytes):
        if source == "stdin":
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
            return main(["analyze", "-", "--mines", "2"])
        path = tmp_path / "board.txt"
        path.write_bytes(data)
        return main(["analyze", str(path), "--mines", "2"])

    one_error_line(capsys, run(b". " * 40), where, "more than 64 bytes", "not read further")
    one_error_line(capsys, run(b"\x89PNG\r\n\x1a\n\x00\xff"), where, "is not UTF-8 text")
    one_error_line(capsys, run(b"1 .\n\x00 .\n"), "line 2, column 1", "'\\x00'")
    assert run(b"1 . .\n. . .\n") == 0
    capsys.readouterr()


def test_analyze_refuses_a_frontier_beyond_the_engine_bound(tmp_path, capsys):
    # An 8x8 board with 16 mines and 40% of its safe cells revealed at random: one
    # frontier component of 30 cells, whose program needs more than 16 states at a box.
    board = tmp_path / "scattered.txt"
    board.write_text("1..0.12.\n.3.1.1.3\n.4......\n2....1..\n.......1\n1.2.3...\n..3.....\n1.3.4...\n")
    assert main(["analyze", str(board), "--mines", "16"]) == 0
    capsys.readouterr()
    one_error_line(capsys, main(["analyze", str(board), "--mines", "16", "--max-states", "16"]),
                   "frontier component of 30 cells around (0, 0)", "max_states=16")
    one_error_line(capsys, main(["analyze", str(board), "--mines", "16", "--max-states", "0"]),
                   "--max-states", "positive integer")


def test_analyze_board_size_is_bounded(tmp_path, capsys):
    board = tmp_path / "wide.txt"
    board.write_text("." * 1001 + "\n")
    one_error_line(capsys, main(["analyze", str(board), "--mines", "2"]), "line 1", "at most 1000 cells")
    board.write_text(".\n" * 1001)
    one_error_line(capsys, main(["analyze", str(board), "--mines", "2"]), "at most 1000 rows; got 1001")


def test_generate_refuses_a_second_writer(tmp_path, capsys):
    from filelock import FileLock

    from nnsweeper.datasets.generate import LOCK_NAME

    out = tmp_path / "data"
    out.mkdir()
    with FileLock(str(out / LOCK_NAME)):
        line = one_error_line(capsys, main(["generate", str(out), "5x5:3:4", "--jobs", "1", "--quiet"]),
                              f"another process is writing dataset '{out}'")
    assert "resumes" in line
    assert main(["generate", str(out), "5x5:3:4", "--jobs", "1", "--quiet"]) == 0


# --------------------------------------------------------------------------- compare
@pytest.fixture(scope="module")
def tiny_checkpoints(tmp_path_factory):
    """Small CNN and GNN checkpoints (random weights) with recorded training seeds."""
    import torch

    from nnsweeper.evaluation import game_seeds
    from nnsweeper.models import MineModel, save_checkpoint

    folder = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    held_out = {"data_seed_streams": [{"split": "train", "seeds": [2**62 + 5]}]}
    clash = {"data_seed_streams": [{"split": "val", "seeds": [int(game_seeds(0, 4)[2])]}]}
    paths = {}
    configs = {"cnn": {"arch": "cnn", "channels": 4, "blocks": 1},
               "gnn": {"arch": "gnn", "hidden": 8, "layers": 1}}
    for arch, config in configs.items():
        model = MineModel.from_config(config)
        paths[arch] = save_checkpoint(folder / f"{arch}.pt", model, extra=held_out)
        paths[f"{arch}-clash"] = save_checkpoint(folder / f"{arch}-clash.pt", model, extra=clash)
    return paths


def test_compare_plays_every_solver_with_given_models(tmp_path, capsys, tiny_checkpoints):
    prefix = tmp_path / "cmp"
    code = main(["compare", "--mines", "3-4", "--rows", "5", "--cols", "5", "--trials", "4",
                 "--model", f"cnn={tiny_checkpoints['cnn']}", "--model", f"gnn={tiny_checkpoints['gnn']}",
                 "--out", str(prefix), "--quiet"])
    assert code == 0
    out, _ = capsys.readouterr()
    table = EvalTable.from_json(prefix.with_suffix(".json"))
    assert table.solvers == ["single_point", "csp", "search", "cnn", "gnn", "hybrid-cnn", "hybrid-gnn"]
    assert [r["mines"] for r in table.select(solver="gnn")] == [3, 4]
    assert all(r["games"] == 4 for r in table)
    assert table.metadata["arguments"]["held_out_from"] == [f"{n}: training data" for n in
                                                            ("cnn", "gnn", "hybrid-cnn", "hybrid-gnn")]
    assert table.metadata["command"].startswith("nnsweeper compare --mines 3-4")
    assert "hybrid-gnn" in out and (prefix.with_suffix(".png")).stat().st_size > 0


def test_compare_defaults(capsys):
    from nnsweeper.cli import build_parser

    args = build_parser().parse_args(["compare"])
    assert args.solvers is None  # the default list, then the solvers of each named --model
    assert args.default_solvers == ["single_point", "csp", "search", "cnn", "gnn", "hybrid-cnn", "hybrid-gnn"]
    assert args.default_mines == list(range(5, 31)) and args.mines is None
    assert args.out is None and args.model == [] and args.jobs == -1
    from nnsweeper.cli.evaluation import compare_out

    assert compare_out(args) == "compare"  # the main job: compare.csv, .json, .png and .games


@pytest.mark.parametrize(("options", "name"), [
    ([], "compare"),
    (["--board", "10x10:5-30"], "compare"),  # the main job's boards, written another way
    (["--rows", "10", "--cols", "10", "--mines", "5-30"], "compare"),
    (["--board", "9x9:10"], "compare-9x9"),
    (["--rows", "9", "--cols", "9"], "compare-9x9"),
    (["--mines", "10,20"], "compare-10x10"),
    (["--preset", "classic"], "compare-classic"),
    (["--board", "classic"], "compare-classic"),
    (["--board", "expert"], "compare-expert"),
    (["--preset", "beginner"], "compare-beginner"),
    (["--board", "12x12:20-30/5", "--board", "expert"], "compare-12x12-expert"),
    (["--board", "9x9:10", "--out", "compare"], "compare"),  # an --out given is kept
])
def test_compare_names_its_output_by_the_boards_it_plays(options, name):
    from nnsweeper.cli import build_parser
    from nnsweeper.cli.evaluation import compare_out

    args = build_parser().parse_args(["compare", *options])
    assert (args.out or compare_out(args)) == name


def test_compare_on_other_boards_leaves_the_main_jobs_files_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # What `make compare` wrote before: its table and its store of games.
    (tmp_path / "compare.json").write_text("the main job's table")
    (tmp_path / "compare.games").mkdir()
    (tmp_path / "compare.games" / "store.json").write_text("{}")
    assert main(["compare", "--solvers", "single_point,csp", "--board", "5x5:3", "--trials", "2",
                 "--jobs", "1"]) == 0
    out, err = capsys.readouterr()
    assert "continuing from" not in err
    assert "wrote compare-5x5.csv, compare-5x5.json, compare-5x5.png" in out
    assert "every game is kept in compare-5x5.games" in out
    assert (tmp_path / "compare.json").read_text() == "the main job's table"
    assert sorted(p.name for p in (tmp_path / "compare.games").iterdir()) == ["store.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "compare-5x5.csv", "compare-5x5.games", "compare-5x5.json", "compare-5x5.png", "compare.games",
        "compare.json"]
    # The same command again continues from its own store.
    assert main(["compare", "--solvers", "single_point,csp", "--board", "5x5:3", "--trials", "2",
                 "--jobs", "1"]) == 0
    assert ("continuing from the 4 games of these solvers and boards recorded in compare-5x5.games"
            in capsys.readouterr().err)
    # Another board into the same --out continues from nothing, and says nothing of it.
    assert main(["eval", "--solvers", "csp", "--board", "6x6:3", "--trials", "2", "--jobs", "1",
                 "--out", "compare-5x5"]) == 0
    assert "continuing" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--solvers", "csp,cnnx"], ["unknown solver 'cnnx'"]),
        (["--solvers", "gnn", "--model", "gnn=missing.pt"], ["'missing.pt' is neither a bundled model name"]),
        (["--solvers", "cnn", "--model", "cnn=GNN_FILE"], ["expected", "cnn"]),
        (["--solvers", "hybrid-gnn", "--model", "gnn=CLASH"], ["evaluation (solver 'hybrid-gnn')",
                                                               "'val' split", "held-out seeds"]),
        (["--solvers", "gnn", "--model", "mlp=x.pt"],
         ["'mlp' in 'mlp=x.pt' is not an architecture", "cnn, gnn"]),
        (["--solvers", "gnn", "--model", "gnn"], ["expected ARCH=PATH"]),
        (["--solvers", "gnn", "--model", "gnn=a.pt", "--model", "gnn=b.pt"],
         ["--model names 'gnn' more than once"]),
        (["--mines", "5-x"], ["ranges such as 5,10,15 or 5-30"]),
    ],
)
def test_compare_refuses_bad_input(extra, fragments, tmp_path, capsys, tiny_checkpoints, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = {"GNN_FILE": str(tiny_checkpoints["gnn"]), "CLASH": str(tiny_checkpoints["gnn-clash"])}
    extra = [e.split("=")[0] + "=" + files[e.split("=")[1]] if "=" in e and e.split("=")[1] in files else e
             for e in extra]
    code = main(["compare", "--rows", "5", "--cols", "5", "--mines", "3", "--trials", "4", "--quiet",
                 "--out", str(tmp_path / "x"), *extra])
    one_error_line(capsys, code, *fragments)
    assert not list(tmp_path.glob("x.*"))


def test_generate_option_defaults_are_those_of_generate(capsys):
    import inspect

    from nnsweeper.cli import build_parser
    from nnsweeper.cli.data import _GENERATE_OPTIONS
    from nnsweeper.datasets import generate

    args = build_parser().parse_args(["generate", "out", "10x10:5"])
    signature = inspect.signature(generate).parameters
    for name in _GENERATE_OPTIONS:
        assert getattr(args, name) == signature[name].default, name
    assert args.jobs == -1  # the command's own default: every core
    assert main(["generate", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {signature['games'].default})" in help_text
    assert "(default: 0.8,0.1,0.1)" in help_text


def test_generate_values_option_defaults_are_those_of_generate_values(capsys):
    import inspect

    from nnsweeper.cli import build_parser
    from nnsweeper.cli.data import _GENERATE_VALUES_OPTIONS
    from nnsweeper.datasets.values import generate_values

    args = build_parser().parse_args(["generate-values", "out", "expert"])
    signature = inspect.signature(generate_values).parameters
    for name in _GENERATE_VALUES_OPTIONS:
        assert getattr(args, name) == signature[name].default, name
    assert main(["generate-values", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"reference policy (default: {signature['policy'].default})" in help_text


# ------------------------------------------------------------- analyze: marks and moves
EXAMPLE_BOARD = __import__("pathlib").Path(__file__).resolve().parent.parent / "examples" / "board.txt"


def analyze_rows(out, n):
    """The first ``n`` grid rows of analyze's output, split into tokens."""
    return [line.split() for line in out.splitlines()[1:1 + n]]


def test_example_board_parses_and_analyze_runs_on_it(capsys):
    from nnsweeper import analyze, parse_observation

    board = parse_observation(EXAMPLE_BOARD.read_text(), 10)
    a = analyze(board)
    assert board.shape == (9, 9) and board.n_flags == 1
    assert a.safe.any() and a.mines.any()
    assert ((a.probabilities > 0) & (a.probabilities < 1) & a.unknown).any()  # a real guess left
    assert main(["analyze", str(EXAMPLE_BOARD), "--mines", "10"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert analyze_rows(out, 1) == [["0", "11.0", "11.0", "11.0", "52.9", "[2]", "[1]", "[0]", "[0]", "[0]"]]
    assert analyze_rows(out, 6)[5] == ["5", "11.0", "11.0", "11.0", "5.7",
                                       "safe", "safe", "mine", "mine", "safe"]
    assert out.splitlines()[10].startswith("legend: [n] revealed number | F flag")
    assert "consistent layouts: 2592513 (exactly)" in out
    assert "mines left: 9 (10 on the board, 1 flagged)" in out
    assert "interior P(mine): 0.1098 (11.0%)" in out
    assert "next move of each solver (row, col from 0; solver seed 0):" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "(5, 4)  proven safe by the engine" in lines["csp"]
    assert "guess: no local rule applies" in lines["single_point"]
    assert "\x1b[" not in out  # not a terminal: no colour


def test_analyze_marks_hand_computed_probabilities(tmp_path, capsys):
    # A 1 in the corner of a 3x3 board with 2 mines: 1/3 next to it, 1/5 elsewhere.
    board = tmp_path / "board.txt"
    board.write_text("1 . .\n. . .\n. . .\n")
    assert main(["analyze", str(board), "--mines", "2", "--solvers", "csp"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert analyze_rows(out, 3) == [["0", "[1]", "33.3", "20.0"], ["1", "33.3", "33.3", "20.0"],
                                    ["2", "20.0", "20.0", "20.0"]]
    assert "interior P(mine): 0.2 (20.0%) for each of the 5 cells" in out
    assert "consistent layouts: 15 (exactly)" in out
    # Of the five cells at 1/5, the corners (0, 2), (2, 0) and (2, 2) have 3 covered neighbours, the
    # edge cells 5; of the corners the far one is likeliest to be a zero.
    assert out.splitlines()[-1] == ("  csp  (2, 2)  guess: lowest P(mine) = 0.2 (shared by 5 cells), "
                                    "ties broken by fewest covered neighbours, then chance of a zero")


def test_analyze_reads_stdin_and_marks_proven_cells(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("1 F .\n. . .\n"))
    assert main(["analyze", "-", "--mines", "2", "--solvers", "single_point,csp"]) == 0
    out = capsys.readouterr().out
    assert analyze_rows(out, 2) == [["0", "[1]", "F", "50.0"], ["1", "safe", "safe", "50.0"]]
    assert "proven: 2 safe, 0 mines" in out
    assert out.splitlines()[-2:] == [
        "  single_point  (1, 0)  local rule (single point): the 1 at (0, 0) has its 1 mine flagged already",
        "  csp           (1, 0)  local rule (single point): the 1 at (0, 0) has its 1 mine flagged already",
    ]


def test_analyze_colours_only_a_terminal_without_no_color(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("1 F .\n. . .\n"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    assert main(["analyze", "-", "--mines", "2", "--solvers", "csp"]) == 0
    assert "\x1b[32msafe\x1b[0m" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("1 F .\n. . .\n"))
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["analyze", "-", "--mines", "2", "--solvers", "csp"]) == 0
    assert "\x1b[" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--mines", "10", "--solvers", "csp,nope"], ["unknown solver 'nope'", "choose one of", "csp"]),
        (["--mines", "-1"], ["--mines", "expected a non-negative integer; got -1"]),
        (["--mines", "10", "--seed", "x"], ["--seed", "non-negative integer", "'x'"]),
        (["--mines", "80"], ["79 mines left", "do not fit in 56 covered unflagged cells"]),
    ],
)
def test_analyze_refuses_bad_solvers_seeds_and_counts(extra, fragments, capsys):
    one_error_line(capsys, main(["analyze", str(EXAMPLE_BOARD), *extra]), *fragments)


# ------------------------------------------------------------ messages, board syntax, named models
@pytest.mark.parametrize("command", ["eval", "compare", "plot", "generate", "train", "evaluate-model",
                                     "analyze"])
def test_help_texts_show_percent_signs_once(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "%%" not in out and "%(" not in out


def test_an_unknown_flag_points_to_the_subcommand_help_and_the_close_option(capsys):
    one_error_line(capsys, main(["compare", "--trails", "5"]),
                   "compare does not take --trails 5", "did you mean --trials?",
                   "(see 'nnsweeper compare --help')")
    one_error_line(capsys, main(["eval", "--out", "x", "surplus"]),
                   "eval does not take surplus (see 'nnsweeper eval --help')")
    # Options in a group (--board / --preset) and options of every command are known too.
    one_error_line(capsys, main(["play", "--bord", "expert"]),
                   "play does not take --bord expert; did you mean --board?", "(see 'nnsweeper play --help')")
    one_error_line(capsys, main(["generate-values", "out", "--shrd-games", "3"]),
                   "did you mean --shard-games?", "(see 'nnsweeper generate-values --help')")
    one_error_line(capsys, main(["eval", "--hlp"]), "did you mean --help?")


def test_top_level_help_lists_every_command(capsys):
    from nnsweeper.cli import COMMANDS, build_parser

    parser = build_parser()
    assert len(parser.commands) == len(COMMANDS) == 15
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("    ") and line[4] != " "]
    assert listed == list(parser.commands)


def test_eval_needs_no_out_and_reports_a_misspelt_solver_first(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_error_line(capsys, main(["eval", "--solvers", "single_point,cps"]), "unknown solver 'cps'")
    assert list(tmp_path.iterdir()) == []
    assert main(["eval", "--help"]) == 0
    assert "(default: nnsweeper-eval, in the current" in capsys.readouterr().out
    # Without --out, eval writes nnsweeper-eval.* into the current folder.
    assert main(["eval", "--solvers", "csp", "--board", "5x5:3", "--trials", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "nnsweeper-eval.csv", "nnsweeper-eval.games", "nnsweeper-eval.json", "nnsweeper-eval.png"]


def test_board_syntax_plays_the_boards_it_names(tmp_path, capsys):
    out = tmp_path / "b"
    assert main(["eval", "--solvers", "csp", "--board", "6x6:3-5/2", "--board", "beginner", "--trials", "3",
                 "--out", str(out), "--quiet"]) == 0
    table = EvalTable.from_json(out.with_suffix(".json"))
    assert [(r["board"], r["rows"], r["cols"], r["mines"]) for r in table] == [
        ("6x6", 6, 6, 3), ("6x6", 6, 6, 5), ("beginner", 9, 9, 10)]
    capsys.readouterr()
    one_error_line(capsys, main(["eval", "--board", "6x6", "--out", str(out)]),
                   "a board must be ROWSxCOLS:MINES", "got '6x6'")
    one_error_line(capsys, main(["eval", "--board", "6x6:40", "--out", str(out)]), "40")
    one_error_line(capsys, main(["eval", "--board", "expert", "--mines", "5", "--out", str(out)]),
                   "--board sets the board; do not combine it with --mines")


@pytest.mark.parametrize("command", ["eval", "compare"])
def test_board_syntax_takes_the_first_click_rule(command, tmp_path, capsys):
    # 80 mines on 81 cells need no protected cell, as --rows 9 --cols 9 --mines 80 already ran;
    # an opening protects the 3x3 block of the first click.
    for rule, board, mines in [("none", "9x9:80", 80), ("zero", "9x9:71", 71)]:
        out = tmp_path / rule
        code = main([command, "--solvers", "single_point", "--board", board, "--first-click", rule,
                     "--trials", "1", "--jobs", "1", "--out", str(out), "--quiet"])
        assert code == 0, capsys.readouterr().err
        table = EvalTable.from_json(out.with_suffix(".json"))
        assert [(r["rows"], r["cols"], r["mines"], r["first_click"], r["games"]) for r in table] == [
            (9, 9, mines, rule, 1)]
    capsys.readouterr()


def test_board_syntax_refuses_more_mines_than_its_rule_allows(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for rule, board, fragments in [
        ("safe", "9x9:80", ["between 1 and 79", "9x9 board with a safe first click", "got 80"]),
        ("zero", "9x9:72", ["between 1 and 71", "9x9 board with an opening (zero) first click", "got 72"]),
        ("zero", "3x3:1", ["3x3 board with an opening (zero) first click has no room for mines"]),
        # Beyond every rule's limit, read before the rule is known: each rule's limit is named.
        ("none", "9x9:81", ["between 1 and 79 for a 9x9 board with a safe first click, the default",
                            "80 with --first-click none", "got 81"]),
    ]:
        for command in ("eval", "compare"):
            one_error_line(capsys, main([command, "--solvers", "single_point", "--board", board,
                                         "--first-click", rule, "--trials", "1", "--jobs", "1"]), *fragments)
    assert list(tmp_path.iterdir()) == []  # refused before any game


def test_one_board_is_the_scripts_board_type():
    import argparse

    from nnsweeper.cli import one_board

    assert one_board("10x10:20") == (10, 10, 20) and one_board("expert") == (16, 30, 99)
    with pytest.raises(argparse.ArgumentTypeError, match="expected one board.*names 3"):
        one_board("classic")


def test_a_named_checkpoint_plays_beside_the_bundled_model_and_plots_with_it(tmp_path, capsys):
    from pathlib import Path

    import nnsweeper.models

    weights = str(Path(nnsweeper.models.__file__).parent / "weights" / "gnn.pt")
    common = ["--board", "6x6:4", "--trials", "4", "--jobs", "1", "--quiet"]
    assert main(["compare", "--solvers", "csp,gnn", *common, "--out", str(tmp_path / "a")]) == 0
    assert main(["compare", "--solvers", "mygnn,hybrid-mygnn", "--model", f"mygnn=gnn:{weights}", *common,
                 "--out", str(tmp_path / "b")]) == 0
    b = EvalTable.from_json(tmp_path / "b.json")
    assert b.solvers == ["mygnn", "hybrid-mygnn"]
    recorded = b.metadata["solvers"]["mygnn"]
    assert recorded.startswith("GNNSolver(") and weights in recorded
    # The same checkpoint under another name plays the same games the same way.
    a = EvalTable.from_json(tmp_path / "a.json")
    assert a.rows[1]["outcomes"] == b.rows[0]["outcomes"]
    capsys.readouterr()
    a_json, b_json = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    assert main(["plot", a_json, b_json, "--out", str(tmp_path / "ab.png")]) == 0
    assert (tmp_path / "ab.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    # Without --solvers, a named checkpoint joins the default list.
    from nnsweeper.cli import build_parser
    from nnsweeper.cli.evaluation import _play_solvers

    args = build_parser().parse_args(["compare", "--model", f"mine=gnn:{weights}"])
    assert list(_play_solvers(args))[-2:] == ["mine", "hybrid-mine"]
    one_error_line(capsys, main(["plot", a_json, a_json, "--out", str(tmp_path / "x.png")]),
                   "solver 'csp' has results for 6x6 with 4 mines in both")
    one_error_line(capsys, main(["plot", a_json, b_json]),
                   "plotting several tables needs --out PNG")
    one_error_line(capsys, main(["compare", "--model", "csp=gnn:x.pt", "--out", str(tmp_path / "c")]),
                   "'csp' is a registered solver; choose another NAME")


def test_table_flag_prints_every_row_after_the_summary(tmp_path, capsys):
    assert main(["eval", "--solvers", "single_point,csp", "--board", "5x5:3", "--trials", "3", "--table",
                 "--out", str(tmp_path / "t"), "--quiet"]) == 0
    out = capsys.readouterr().out
    table = EvalTable.from_json(tmp_path / "t.json")
    assert out == format_summary(table) + "\n\n" + str(table) + "\n"


def test_train_overrides_may_stand_on_both_sides_of_an_option(monkeypatch):
    seen = {}
    monkeypatch.setattr("nnsweeper.cli.training._cmd_train", lambda args, argv: seen.update(vars(args)) or 0)
    assert main(["train", "--config", "c.toml", "output.dir=x", "--resume", "train.epochs=4"]) == 0
    assert seen["overrides"] == ["output.dir=x", "train.epochs=4"] and seen["resume"]


# ----------------------------------------------------------------- watch
def test_watch_writes_the_game_it_plays(tmp_path, capsys):
    from PIL import Image

    from nnsweeper.solvers.replay import game_frames

    out = tmp_path / "game.gif"
    assert main(["watch", "csp", "--board", "6x6:7", "--min-guesses", "4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    # Game 5 of the evaluation seeds is the first 6x6/7 game where csp guesses at least 4
    # times (games 0 to 4 have 3, 1, 1, 0 and 1 guesses; game 5 has 9).
    assert printed[0] == "game 5 of the evaluation games (game_seeds(0, 1000)): seed 87989972"
    solver = ns.get_solver("csp")
    seed = 87989972
    frames = game_frames(solver, ns.MinesweeperEnv(6, 6, 7, seed=seed), np.random.default_rng(seed))
    record = solver.last_record
    assert printed[1].endswith(f"{len(frames)} frames; {'won' if record.won else 'lost'} after "
                               f"{len(record.moves)} moves ({record.guesses} guesses)")
    assert record.guesses == 9
    with Image.open(out) as gif:
        assert gif.n_frames == len(frames)
    # The frames follow the record: each frame's outlined cell is the next recorded move.
    moves = [m.cell for m in record.moves]
    outlined = [f["move"] for f in frames if f["move"] is not None]
    assert outlined[0] == moves[0] and set(outlined) <= set(moves)
    assert main(["watch", "csp", "--preset", "beginner", "--seed", "3", "--exact", "--out",
                 str(tmp_path / "b.gif")]) == 0


def test_watch_shows_the_frames_it_draws_unless_quiet(tmp_path, capsys):
    # Drawing is most of watch's time (most of a second a frame on an expert board).
    argv = ["watch", "csp", "--preset", "beginner", "--seed", "3", "--out", str(tmp_path / "b.gif")]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.strip() == f"wrote {tmp_path / 'b.gif'}: 8 frames; won after 21 moves (2 guesses)"
    assert "drawing frames: 100%" in err and "8/8" in err
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("argv, message", [
    (["watch", "nope", "--out", "x.gif"], "unknown solver 'nope'"),
    (["watch", "csp", "--out", "x.png"], "--out must end in .gif or .mp4"),
    (["watch", "csp", "--board", "3x3:9", "--out", "x.gif"], "mines"),
    (["watch", "csp", "--seed", "-1", "--out", "x.gif"], "seed"),
    (["watch", "csp", "--fps", "0", "--seed", "1", "--board", "4x4:2", "--out", "x.gif"], "fps must be"),
    (["watch", "csp", "--board", "4x4:1", "--min-guesses", "10000", "--out", "x.gif"], "give --seed"),
])
def test_watch_refuses_bad_input_in_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not list(tmp_path.iterdir())


def test_analyze_draws_the_position(tmp_path, capsys):
    from PIL import Image

    board = tmp_path / "b.txt"
    board.write_text("1...\n....\n....\n")
    out = tmp_path / "pos.png"
    assert main(["analyze", str(board), "--mines", "2", "--solvers", "csp,search", "--png", str(out)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"wrote {out}")
    with Image.open(out) as image:
        assert image.format == "PNG" and image.size[0] > 300


@pytest.mark.parametrize("png, text, message", [
    ("pos.xyz", "1...\n....\n", "the suffix must name an image format"),
    ("pos", "1...\n....\n", "the suffix must name an image format"),
    ("pos.png", ("." * 101 + "\n") * 100, "--png draws boards of at most 10000 cells; got 100x101"),
])
def test_analyze_refuses_a_bad_picture_in_one_line(png, text, message, tmp_path, capsys):
    board = tmp_path / "b.txt"
    board.write_text(text)
    assert main(["analyze", str(board), "--mines", "2", "--png", str(tmp_path / png)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / png).exists()


def test_analyze_reads_a_minesweeperprob_board_and_its_mine_count(tmp_path, capsys):
    # WIDTHxHEIGHTxMINES, then H covered, M flagged mine, m covered, digits.
    prob = tmp_path / "b.txt"
    prob.write_text("4x3x2\n1HHH\nHMHH\nHHmH\n")
    plain = tmp_path / "plain.txt"
    plain.write_text("1...\n.F..\n....\n")
    assert main(["analyze", str(prob), "--solvers", "csp"]) == 0
    ours = capsys.readouterr().out
    assert main(["analyze", str(plain), "--mines", "2", "--solvers", "csp"]) == 0
    assert capsys.readouterr().out == ours
    assert main(["analyze", str(prob), "--mines", "2", "--solvers", "csp"]) == 0
    capsys.readouterr()
    for argv, message in (([str(prob), "--mines", "3"], "header says 2 mines; the count given is 3"),
                          ([str(plain)], "does not say how many mines")):
        assert main(["analyze", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err
