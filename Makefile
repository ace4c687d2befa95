# The README's two commands: `make demo` and `make test`. Both create .venv when missing.
VENV    ?= .venv
PYTHON  ?= python3
PY      := $(VENV)/bin/python
GRADCLI := $(VENV)/bin/gradcli
EXTRAS  ?= dev,all
comma   := ,
STAMP   := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
DEMO    ?= experiments/ste_sign_quantize_grad.yaml

.PHONY: demo test experiments figures sweep-example lint bench clean

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

# The README's figures, from bundled experiments and the bundled sweep results (commit what
# changes under docs/img/).
SWEEP_EXAMPLE := docs/examples/ste-binary-weights-sweep
figures: $(STAMP)
	$(GRADCLI) plot curve experiments/ste_sign_quantize_grad.yaml --output docs/img/curve-ste-sign.png
	$(GRADCLI) plot train experiments/clip_by_norm_sgd_step.yaml \
		experiments/clip_by_global_norm_sgd_step.yaml --set train.steps=25 --output docs/img/train-clip.png
	$(GRADCLI) plot sweep $(SWEEP_EXAMPLE) --x train.optimizer.lr --y final_loss \
		--hue override_map.Sign --output docs/img/sweep-ste-binary.png

# The sweep behind that figure, run again (96 short runs); commit its sweep.json and results.csv
# (runs/ holds every run's whole result, too big for the repository).
sweep-example: $(STAMP)
	rm -rf build/sweep-example
	$(GRADCLI) sweep docs/examples/ste-binary-weights.yaml --out build/sweep-example
	cp build/sweep-example/sweep.json build/sweep-example/results.csv $(SWEEP_EXAMPLE)/

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
