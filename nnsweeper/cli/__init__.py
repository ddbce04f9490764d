"""The ``nnsweeper`` command line.

``nnsweeper eval`` plays solvers on fixed game seeds and writes a table (CSV and
JSON) and a win-rate plot; ``nnsweeper compare`` does the same with the logic,
neural and hybrid solvers on every 10x10 mine count from 5 to 30; ``nnsweeper plot``
draws the figure of saved tables (one or several); ``nnsweeper analyze`` prints the exact
mine probability of every cell of a board typed as text, its number of consistent
layouts and the move each solver would make there; ``generate``, ``train`` and
``evaluate-model`` make datasets and models. Bad input ends with one line on stderr,
``nnsweeper: error: <message>``, and exit code 2.

One module per group of commands: :mod:`~nnsweeper.cli.evaluation` (eval, compare,
plot), :mod:`~nnsweeper.cli.data` (generate, generate-values),
:mod:`~nnsweeper.cli.training` (train, train-value, resume, evaluate-model) and
:mod:`~nnsweeper.cli.look` (analyze, play, watch, grade, serve); :mod:`~nnsweeper.cli.core` holds the
parser, error handling and the option types several commands share. In each module a
command is a function ``add_NAME(sub)`` that adds its parser, options and handler,
followed by the handler; the work itself lives in the modules the handlers call.

To add a command, write its ``add_NAME(sub)`` and handler in the module of its group
(or a new module) and list ``add_NAME`` in :data:`COMMANDS`.
"""

from __future__ import annotations

from nnsweeper.cli import data, evaluation, look, training
from nnsweeper.cli.core import Parser, make_parser, one_board, run

__all__ = ["COMMANDS", "build_parser", "main", "one_board"]

#: Every command of ``nnsweeper``, in the order ``nnsweeper --help`` lists them: each adds
#: its parser (``sub.add_parser(NAME, ...)``), its options and its handler, and returns the parser.
COMMANDS = (
    evaluation.add_eval,             # eval
    evaluation.add_compare,          # compare
    evaluation.add_plot,             # plot
    data.add_generate,               # generate
    data.add_boards,                 # boards
    training.add_train,              # train
    training.add_evaluate_model,     # evaluate-model
    data.add_generate_values,        # generate-values
    training.add_train_value,        # train-value
    training.add_resume,             # resume
    look.add_watch,                  # watch
    look.add_play,                   # play
    look.add_analyze,                # analyze
    look.add_grade,                  # grade
    look.add_serve,                  # serve
)


def build_parser() -> Parser:
    """The argument parser of the ``nnsweeper`` command."""
    return make_parser(COMMANDS)


def main(argv=None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    return run(build_parser(), argv)
