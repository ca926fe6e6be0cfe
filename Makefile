# The two commands: `make book` and `make test`. Each bootstraps .venv from nothing.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LIBHASH := _build/.libhash

.PHONY: book test lab clean venv bench stress

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" >/dev/null
	@touch $@

# Build the book in full mode. The execution cache is keyed on code cells only, so it is cleared
# whenever the library changes (with the doctrees, so that every chapter is re-read); -W turns any warning or failing cell into a failed build.
book: $(STAMP)
	@mkdir -p _build
	@h=$$(cat lib/dpmia/*.py _config.yml | sha256sum | cut -c1-16); \
	  if [ "$$(cat $(LIBHASH) 2>/dev/null)" != "$$h" ]; then rm -rf _build/.jupyter_cache _build/.doctrees; fi; \
	  echo $$h > $(LIBHASH)
	$(BIN)/jupyter-book build -W -n --keep-going .
	@echo "Book built: _build/html/index.html"

# Unit and property tests, every chapter executed with papermill (FAST=True), then nbval on the
# notebooks as stored (FAST through DPMIA_FAST=1).
test: $(STAMP)
	$(BIN)/python -m pytest tests
	DPMIA_FAST=1 $(BIN)/python -m pytest --nbval-lax --nbval-cell-timeout=600 -p no:cacheprovider notebooks

# JupyterLab on the chapters (jupyterlab-myst renders the MyST markup). Root, as in Docker and
# classroom images, needs --allow-root.
lab: $(STAMP)
	$(BIN)/jupyter lab notebooks $$([ "$$(id -u)" = 0 ] && echo --allow-root)

# Every chapter in FAST mode 5 times in a row; fails on any stalled or failed run.
stress: $(STAMP)
	$(BIN)/python tests/stress_chapters.py --rounds 5

bench:
	$(MAKE) -C benchmarks

clean:
	rm -rf _build $(VENV) .pytest_cache .hypothesis lib/*.egg-info build
