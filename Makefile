# The README's two commands: `make demo` and `make test`. Both create .venv when missing.
VENV    ?= .venv
PYTHON  ?= python3
PY      := $(VENV)/bin/python
GRADCLI := $(VENV)/bin/gradcli
EXTRAS  ?= dev,all
comma   := ,
STAMP   := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
DEMO    ?= experiments/ste_sign_quantize_grad.yaml

.PHONY: demo test experiments figures lint bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	@touch $@

# The demo needs only gradcli's own dependencies (click, numpy, rich, pyyaml).
$(VENV)/.installed-base: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	@touch $@

demo: $(VENV)/.installed-base
	$(GRADCLI) run $(DEMO)

test: $(STAMP)
	$(PY) -m pytest -q
	$(GRADCLI) run --quiet experiments/*.yaml

experiments: $(STAMP)
	$(GRADCLI) run --quiet experiments/*.yaml

# The README's figures, from bundled experiments (commit what changes under docs/img/).
figures: $(STAMP)
	$(GRADCLI) plot curve experiments/ste_sign_quantize_grad.yaml --output docs/img/curve-ste-sign.png
	$(GRADCLI) plot train experiments/clip_by_norm_sgd_step.yaml \
		experiments/clip_by_global_norm_sgd_step.yaml --set train.steps=25 --output docs/img/train-clip.png

lint: $(STAMP)
	$(PY) -m ruff check gradcli tests bench

# The benchmark installs every peer it measures; it is never part of `make test`.
bench:
	$(MAKE) --no-print-directory EXTRAS=dev,all,bench bench-run

bench-run: $(STAMP)
	$(PY) bench/run.py --json bench/results.json --markdown bench/RESULTS.md
	$(PY) bench/sweep_w8.py --json bench/w8/results.json --markdown bench/w8/RESULTS.md

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
