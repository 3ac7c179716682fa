# The two set-up commands of the README: `make run` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# torch is installed first with this pin: here it is a CPU build on local disk; an unpinned
# requirement could pull a multi-GB CUDA build. pyproject keeps a broad range for real users.
TORCH_PIN ?= torch==2.13.0

.PHONY: run test install install-test assets bench bundle bundle-smoke wheel compat clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.torch: | $(PY)
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q "$(TORCH_PIN)"
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(PY) -m pip install -q -e .
	touch $@

# the TransformerLens extra too: its adapter's tests run in CI (they skip where it is not installed)
$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(PY) -m pip install -q -e ".[test,hf,transformerlens]"
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# Byte-compiled first (only what changed since; a wheel install does this too): with PYTHONDONTWRITEBYTECODE
# set, every launch would otherwise compile attnviz's ~300 modules again (~0.25 s before the first map).
run: install
	$(PY) -m compileall -q attnviz > /dev/null
	$(VENV)/bin/attnviz

test: install-test
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider

# Re-train every bundled model into assets/models (each task takes seconds to a couple of minutes on CPU).
assets: install
	$(PY) -m attnviz.training.make_assets

bench: install
	$(PY) -m compileall -q attnviz > /dev/null
	$(VENV)/bin/attnviz bench

# A wheel (with the bundled models as package data) in dist/.
wheel: install
	$(PY) -m pip wheel -q --no-deps -w dist .

# One-folder PyInstaller app in dist/attnviz/ (~6 min on two cores); its size is printed at the end.
bundle: install
	$(PY) -c "import PyInstaller" 2>/dev/null || $(PY) -m pip install -q "pyinstaller>=6.10"
	$(PY) -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller packaging/attnviz.spec
	@du -sh dist/attnviz
	@echo "largest parts:"; du -sh dist/attnviz/_internal/* | sort -rh | head -12

# Runs every bundled model in the built bundle, headless (not part of `make test`: needs `make bundle`).
bundle-smoke:
	$(PY) packaging/smoke_bundle.py dist/attnviz

# The lowest and the highest versions pyproject.toml allows of PySide6, pyqtgraph, torch, NumPy and transformers,
# each end in a fresh venv under build/compat running the GUI smoke, export and Hugging Face tests (not part of
# `make test` or CI: 1.6 + 6.2 GB of venvs, deleted after; ~5 min here with the wheels cached).
# ARGS="--ends high --keep", ARGS="--reference .venv/bin/python" etc.
compat:
	$(PYTHON) packaging/compat.py $(ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info
