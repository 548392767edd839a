# Two commands from a fresh clone: `make setup` then `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# torch==2.13.0 is the CPU build on the course machines. Elsewhere, for a CPU-only install:
#   make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
# The offline data mirror (tests and CI use it; a workshop room can too).
DATA_MIRROR ?= $(abspath ../shared/data)
ifneq ($(wildcard $(DATA_MIRROR)/README.md),)
export GPTCOURSE_DATA_MIRROR ?= $(DATA_MIRROR)
endif
SUBMISSIONS ?= submissions
OUT ?= grades
JOBS ?= 2
# Where `make dist` puts the student package's wheel (git-ignored).
DIST ?= dist

.PHONY: setup proxy test test-fast lab release dist workshop grade bench clean

# JupyterLab's "get notified about official Jupyter news?" pop-up off, in this environment's
# JupyterLab (gptcourse/lab_settings.py): written on every setup, so a .venv made before it gets it too.
setup: $(VENV)/.installed
	@$(PY) -m gptcourse.lab_settings

$(VENV)/.installed: pyproject.toml course/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e ./course -e ".[dev]"
	$(MAKE) --no-print-directory proxy
	@touch $@
	@echo "setup done: $(VENV) (activate with: source $(VENV)/bin/activate)"

# The course hub's proxy (python -m grader hub, docs/hub.md): configurable-http-proxy, JupyterHub's
# own, from npm into $(VENV)/proxy; where node is missing, its Python implementation from PyPI.
proxy:
	@if command -v npm >/dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix $(VENV)/proxy configurable-http-proxy@5 >/dev/null; \
	else \
		echo "npm not found: installing the Python implementation of configurable-http-proxy"; \
		$(PY) -m pip install --quiet configurable-http-proxy; \
	fi

# One process: the slow tests (notebooks, nbgrader, training) already keep both cores busy (torch's
# threads, the grader's two workers), and in two processes every test took about twice as long: the
# suite was no faster (36 min at best, against 34 in one process, in a fresh clone).
test: setup
	$(PY) -m pytest -q

# The edit loop: everything but the tests marked slow (notebooks run top to bottom, nbgrader,
# fresh virtual environments, clusters, browsers). make test runs those too, and CI runs make test.
# Two pytest processes (pytest-xdist), a test file each at a time: a file's shared fixtures (the
# corpus graded as one batch, say) are then made once; one process leaves a core idle while a grade
# run starts up; two fill it. The corpus file goes first: its batch is the longest fixture (over a
# minute), and started last it left the other process idle at the end (3:49 against 4:01).
TEST_WORKERS ?= 2
LONGEST_FAST_FILE = tests/grader/test_corpus.py
test-fast: setup
	$(PY) -m pytest -q -m "not slow" -n $(TEST_WORKERS) --dist loadfile $(LONGEST_FAST_FILE) tests

# A student's JupyterLab (gptcourse/lab_settings.py): Validate and the assignment list, not the
# instructor's nbgrader pieces (Create Assignment, the formgrader, the course list).
LAB_CONFIG = .lab-config
lab: setup
	@$(PY) -m gptcourse.lab_settings --student-config $(LAB_CONFIG)
	JUPYTER_CONFIG_PATH="$(CURDIR)/$(LAB_CONFIG)$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" $(VENV)/bin/jupyter lab course/

release: setup
	$(PY) -m grader build

# The student package as a wheel, DIST/gptcourse-<version>-py3-none-any.whl: what the notebooks'
# install cell installs when GPTCOURSE_INSTALL_FROM names it, and what a JupyterHub image
# installs (docs/publishing.md). Only course/gptcourse goes in: no grader, no solutions.
# setuptools' build folder is removed first: it keeps files deleted since the last build.
dist: setup
	rm -rf course/build $(DIST)/gptcourse-*.whl
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir $(DIST) ./course
	rm -rf course/build
	@ls $(DIST)/gptcourse-*.whl

# The workshop edition: the release with a collapsed answer after every task, in OUT
# (`make workshop OUT=dir`; default workshop/). It holds the solutions: hand it out with care.
workshop: setup
	$(PY) -m grader workshop --out $(if $(filter command line,$(origin OUT)),$(OUT),workshop)

grade: setup
	$(PY) -m grader grade $(SUBMISSIONS) --out $(OUT) --jobs $(JOBS)

bench: setup
	$(PY) benchmarks/grade_bench.py

clean:
	rm -rf $(VENV) .pytest_cache $(DIST) course/build
