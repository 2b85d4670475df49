# The two commands a newcomer needs: `make run` and `make test`. Both set everything up.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint typecheck pytest install install-dev migrate bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

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

# pytest exits 5 when it collected nothing; that is not a failure of the suite.
pytest: install-dev
	$(BIN)/pytest $(PYTEST_ARGS) || [ $$? -eq 5 ]

## Run the full test suite: ruff, mypy, pytest.
test: lint typecheck pytest

bench: install-dev
	$(BIN)/python bench/perft.py
	$(BIN)/python bench/broker.py
	$(BIN)/python bench/accounts.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache checkers.db checkers.db-wal checkers.db-shm
