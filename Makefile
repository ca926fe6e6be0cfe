# The two commands: `make book` and `make test`. Each bootstraps .venv from nothing.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LIBHASH := _build/.libhash

.PHONY: book book-student test lab clean venv bench stress pdf tex

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" >/dev/null
	@touch $@

# Build the book in full mode. The execution cache is keyed on code cells only, so it is cleared
# whenever the library changes; --all re-reads every page (a numbered reference in an unchanged page would
# otherwise keep an old number); -W turns any warning or failing cell into a failed build.
book: $(STAMP)
	@mkdir -p _build
	@h=$$(find lib/dpmia -name '*.py' | sort | xargs cat _config.yml | sha256sum | cut -c1-16); \
	  if [ "$$(cat $(LIBHASH) 2>/dev/null)" != "$$h" ]; then rm -rf _build/.jupyter_cache _build/.doctrees; fi; \
	  echo $$h > $(LIBHASH)
	$(BIN)/jupyter-book build -W -n --keep-going --all .
	@echo "Book built: _build/html/index.html"

# The whole book as one PDF (Jupyter Book's LaTeX builder with XeLaTeX, which typesets the
# book's Unicode). Not part of `make book`; reuses its execution cache when the chapters are
# unchanged. `make tex` installs Debian's TeX packages and fonts when xelatex or latexmk is missing
# (CI runs it, so that the PDF check in `make test` runs there).
TEX_PKGS := texlive-xetex texlive-latex-extra texlive-latex-recommended texlive-fonts-recommended \
            latexmk fonts-freefont-otf fonts-dejavu-core lmodern tex-gyre poppler-utils
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
tex:
	@if ! command -v xelatex >/dev/null || ! command -v latexmk >/dev/null || ! command -v pdftotext >/dev/null; then \
	  echo "Installing Debian's TeX packages: $(TEX_PKGS)"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(TEX_PKGS); fi

pdf: $(STAMP) tex
	$(BIN)/jupyter-book build --builder pdflatex .
	@cp _build/latex/book.pdf _build/what-does-epsilon-say.pdf
	@echo "PDF built: _build/what-does-epsilon-say.pdf"

# The student edition: the same book without the exercises' solutions (book/_ext/student_edition.py writes
# its source tree), built into _build/student/_build/html from the main build's execution cache.
STUDENT := _build/student
book-student: $(STAMP)
	$(BIN)/python book/_ext/student_edition.py $(STUDENT)
	$(BIN)/jupyter-book build -W -n --keep-going --all $(STUDENT)
	@echo "Student edition built: $(STUDENT)/_build/html/index.html"

# The linter, then the unit and property tests with every docstring example of the library, every
# chapter executed with papermill (FAST=True), then nbval on the notebooks as stored (FAST through DPMIA_FAST=1).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest --doctest-modules -q -p no:cacheprovider lib/dpmia
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
