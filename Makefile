# `make book` and `make test` set everything up themselves: a .venv with the pinned stack.
VENV  := .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export MPLBACKEND := Agg

.PHONY: book test bench venv clean

book: $(STAMP)  ## execute every notebook at the book profile and build _build/html
	$(VENV)/bin/benign book --profile book

test: $(STAMP)  ## the test suite (CI runs exactly this)
	$(PY) -m pytest

bench: $(STAMP)  ## speed benchmarks (ratios against the direct computation)
	$(PY) benchmarks/fast_trainer.py

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e .
	touch $(STAMP)

clean:
	rm -rf _build results
