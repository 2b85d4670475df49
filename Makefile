# The two commands a newcomer needs: `make run` and `make test`. Both set everything up.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-fast coverage lint typecheck pytest screenshots install install-dev migrate bench clean

# pip's output (and setuptools' editable-install banner) goes to a log, shown only on failure.
PIP_LOG := $(VENV)/pip.log
PIP_INSTALL = $(BIN)/python -m pip install --disable-pip-version-check
QUIET = > $(PIP_LOG) 2>&1 || { cat $(PIP_LOG); exit 1; }

$(BIN)/python:
	@echo "creating $(VENV)"
	@$(PYTHON) -m venv $(VENV)
	@$(PIP_INSTALL) --upgrade pip $(QUIET)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@echo "installing the checkers server into $(VENV) (pip's log: $(PIP_LOG))"
	@$(PIP_INSTALL) -e . $(QUIET)
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	@echo "installing the checkers server and its test tools into $(VENV) (pip's log: $(PIP_LOG))"
	@$(PIP_INSTALL) -e '.[dev]' $(QUIET)
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

migrate: install
	$(BIN)/checkers migrate

## Run the server on the embedded default (SQLite file, in-process broker).
run: install migrate
	$(BIN)/checkers serve --host $(HOST) --port $(PORT)

lint: install-dev
	$(BIN)/ruff check app tests bench migrations
	$(BIN)/ruff format --check app tests bench migrations

typecheck: install-dev
	$(BIN)/mypy

# The suite runs on WORKERS processes (pytest-xdist; one more than the cores by default, since
# most tests spend much of their time waiting on sockets), each test file on one worker (so a
# module's shared fixtures, a browser, a seeded database or a server, are made once), then the
# tests that must run alone (marked `alone`: the multi-host deploy test) by themselves. pytest
# exits 5 when it collected nothing; that is not a failure. PYTEST_ARGS go to both runs (for
# example `--cov=app --cov-append`).
WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
# The 30 slowest tests are listed at the end of the parallel run: where the suite's time goes.
PYTEST_PARALLEL = $(BIN)/pytest -n $(WORKERS) --dist loadfile --durations=30
pytest: install-dev
	@echo "pytest: about fifteen minutes on two cores with PostgreSQL, Redis, Chromium and haproxy." \
		"What a missing component leaves out is skipped with the reason and counted at the end:" \
		"PostgreSQL without TEST_DATABASE_URL, Redis without a server at TEST_REDIS_URL" \
		"(default redis://127.0.0.1:6379/0), the browser tests without Chromium, the multi-host" \
		"test without root, network namespaces and haproxy, deep perft without PYTEST_ARGS=--runslow."
	@status=0; started=$$(date +%s); \
	$(PYTEST_PARALLEL) -m "not alone" $(PYTEST_ARGS) || [ $$? -eq 5 ] || status=1; \
	$(BIN)/pytest -m alone $(PYTEST_ARGS) || [ $$? -eq 5 ] || status=1; \
	echo "make pytest: $$(( $$(date +%s) - started )) s wall for both runs (each run's tests per tier are on its last line)"; \
	exit $$status

## Run the full test suite: ruff, mypy, pytest. Leaves the git tree as it was.
test: lint typecheck pytest

## The inner loop: the core and service tiers (pure cores, and use cases through the app in this
## process) on SQLite and the in-process broker, with ruff: no real server, browser, PostgreSQL,
## Redis or outage (CONTRIBUTING.md, the test tiers).
test-fast: install-dev
	$(BIN)/ruff check app tests bench migrations
	$(PYTEST_PARALLEL) --fast -q $(PYTEST_ARGS) || [ $$? -eq 5 ]

## Line coverage of app/ by the whole suite (a report in the terminal and htmlcov/).
coverage: install-dev
	rm -f .coverage .coverage.*
	$(MAKE) pytest PYTEST_ARGS="--cov=app --cov-append --cov-report= $(PYTEST_ARGS)"
	$(BIN)/coverage report --precision=1 | tail -n 1
	$(BIN)/coverage html -q

## Rewrite the README's screenshots in docs/screenshots (the browser test of a whole game).
screenshots: install-dev
	CHECKERS_SCREENSHOTS=1 $(BIN)/pytest tests/e2e/test_play.py -q

bench: install-dev
	$(BIN)/python bench/perft.py
	$(BIN)/python bench/broker.py
	$(BIN)/python bench/accounts.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage htmlcov checkers.db checkers.db-wal checkers.db-shm
