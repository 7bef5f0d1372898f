# Two entry points: `make run` (set up and launch the app on its embedded defaults) and
# `make test` (set up and run the tests). Both skip work already done.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: run test setup setup-dev browser

$(VENV)/.app: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.app requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

setup: $(VENV)/.app
	$(PY) -m core setup

setup-dev: $(VENV)/.dev
	$(PY) -m core setup

# Debian's chromium for the browser tests (Playwright drives it through executablePath).
browser:
	@command -v chromium >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The app opens as soon as the model is ready and builds the default corpus index in the background
# (methods that need no corpus answer meanwhile); `make setup` builds it ahead instead.
run: $(VENV)/.app
	$(PY) -m core setup --skip-index
	$(VENV)/bin/streamlit run streamlit_app.py --server.address 127.0.0.1 --server.port $(PORT)

test: setup-dev browser
	$(PY) -m pytest $(PYTEST_ARGS)
