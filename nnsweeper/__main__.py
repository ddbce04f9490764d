"""``python -m nnsweeper``: the same as the ``nnsweeper`` command."""

import sys

from nnsweeper.cli import main

sys.exit(main())
