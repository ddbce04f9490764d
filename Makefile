# Set-up, tests, lint, benchmarks and the reference evaluation.
#
#   make setup                 create .venv and install nnsweeper with its dev tools, every
#                              package at the version pinned in requirements.lock
#   make browser               Chromium for the browser tests (Debian's package, as root; make setup
#                              runs it)
#   make test                  lint (ruff), then the test suite on JOBS workers (JOBS=0: one process)
#   make lint                  ruff
#   make lock                  refresh requirements.lock: install the newest versions that
#                              pyproject.toml allows in a fresh environment, run the lint and
#                              the test suite there, and only then write what was installed
#   make bench                 every benchmarks/bench_*.py
#   make eval                  win rates of single_point and csp on 10x10 boards
#                              (TRIALS games per mine count, written to EVAL_OUT.*)
#   make figures               redraw every committed figure from its table, the gallery
#                              (docs/gallery), and measure the README's quoted timings
#                              again (eval/timings.json and the README's block)
#   make compare               the main job: nnsweeper compare (logic, neural and hybrid
#                              solvers on 10x10 boards with 5..30 mines), written to
#                              COMPARE_OUT.*
#   make docs                  the reference site (mkdocs: the docs/ pages and the API
#                              reference from the docstrings) into SITE_DIR, warnings as errors
#
# requirements.lock pins the whole dependency set (pip constraints: a package is only
# installed when nnsweeper or its extras ask for it, and then at the pinned version), so a
# fresh machine tests exactly what the suite last passed with. torch is pinned there without
# a build label, and installed in the same pip call as nnsweeper, so that pip never swaps in
# a different build. The default is whatever build pip finds for
# TORCH_VERSION (the CPU wheel where pip is configured with one). For a CUDA build:
#   make setup TORCH_INDEX=<address of PyTorch's CUDA wheel index for your CUDA version>
# or pass any other pip options in PIP_EXTRA.

PYTHON ?= python3
VENV ?= .venv
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?=
PIP_EXTRA ?=
JOBS ?= 2
LOCK ?= requirements.lock
LOCK_VENV ?= .lock-venv
TRIALS ?= 1000
EVAL_OUT ?= sweep_10x10
COMPARE_OUT ?= compare
SITE_DIR ?= site

PY := $(VENV)/bin/python
PIP_INDEX := $(if $(strip $(TORCH_INDEX)),--extra-index-url $(TORCH_INDEX),)

.PHONY: setup browser test lint lock bench eval compare figures docs

setup:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -c $(LOCK) "torch==$(TORCH_VERSION)" -e ".[dev,gym,play,rl,tensorboard,replays,docs,serve]" $(PIP_INDEX) $(PIP_EXTRA)
	@$(MAKE) --no-print-directory browser

# Chromium for the browser tests (tests/test_browser.py drives it with Playwright): Debian's
# package, installed when it is missing and this runs as root with apt-get; otherwise the
# tests skip and say how to run them.
browser:
	@if command -v chromium >/dev/null 2>&1 || [ -n "$$NNSWEEPER_CHROMIUM" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  (apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 \
	   || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1)) \
	  && echo "installed Debian's chromium for the browser tests" \
	  || echo "note: chromium could not be installed: the browser tests will skip"; \
	else echo "note: no chromium (Debian: apt-get install chromium): the browser tests will skip"; fi

test: lint
	$(PY) -m pytest -q -n $(JOBS)

lint:
	$(VENV)/bin/ruff check .

lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install "torch==$(TORCH_VERSION)" -e ".[dev,gym,play,rl,tensorboard,replays,docs,serve]" $(PIP_INDEX) $(PIP_EXTRA)
	$(LOCK_VENV)/bin/ruff check .
	$(LOCK_VENV)/bin/python -m pytest -q -n $(JOBS) -p no:cacheprovider
	{ echo "# The whole dependency set of nnsweeper[dev,gym,play,rl,tensorboard,replays,docs,serve] that the test suite last passed with,"; \
	  echo "# as pip constraints for make setup. Made by make lock with $$($(LOCK_VENV)/bin/python -V);"; \
	  echo "# do not edit by hand."; \
	  $(LOCK_VENV)/bin/pip freeze --exclude-editable | sed -E 's/^(torch==[^+]+)\+.*/\1/'; \
	} > $(LOCK).tmp
	mv $(LOCK).tmp $(LOCK)
	rm -rf $(LOCK_VENV)

bench:
	for script in benchmarks/bench_*.py; do $(PY) "$$script" || exit 1; done

eval:
	$(VENV)/bin/nnsweeper eval --solvers single_point,csp --rows 10 --cols 10 \
		--mines 5,10,15,20,25,30 --trials $(TRIALS) --jobs $(JOBS) --out $(EVAL_OUT)

compare:
	$(VENV)/bin/nnsweeper compare --out $(COMPARE_OUT)

docs:
	$(VENV)/bin/mkdocs build --strict --site-dir $(SITE_DIR)

figures:
	$(PY) eval/figures.py
