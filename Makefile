# Entry points: `make run` (set up and launch the app on its embedded defaults, for this computer only), `make serve`
# (the same, served to this network with an owner and visitors) and `make test` (set up and run the tests). All skip
# work already done.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
# pytest-xdist workers: one per core (a third on two cores was slower, docs/architecture.md#tests)
TEST_WORKERS ?= auto

.PHONY: run serve test shots lint setup setup-dev browser native

# --no-compile: Python compiles what it imports on first use, not all of every package (half the install's time).
$(VENV)/.app: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.app requirements-dev.txt
	$(PY) -m pip install --quiet --no-compile -r requirements-dev.txt
	touch $@

setup: $(VENV)/.app
	$(PY) -m core setup

# The tests index a small default corpus of their own (docs/architecture.md#tests): no whole index to build.
setup-dev: $(VENV)/.dev
	$(PY) -m core setup --skip-index

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

# A room's laptop: the studio on this network in shared mode (an owner and visitors), set up as `make run` sets it up;
# prints the address to open, its QR code and the owner's passcode (docs/serving.md).
serve: $(VENV)/.app
	$(PY) -m core setup --skip-index
	$(PY) -m core serve --port $(PORT)

# Optional: rebuild the embedded model's server (xllamacpp's llama.cpp) for this machine's CPU. PyPI's wheel is
# compiled for AVX2 so it runs on any x86-64 CPU; with AVX-512 compiled in, prompts read about 30% faster
# (docs/performance.md). Compiles for about 6 minutes on two cores; needs cmake and a C++ compiler (from Debian
# when missing).
native: $(VENV)/.app
	@command -v cmake >/dev/null && command -v g++ >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ >/dev/null; }
	CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_LLGUIDANCE=OFF -DLLAMA_BUILD_BORINGSSL=OFF -DLLAMA_OPENSSL=OFF" \
	  $(PY) -m pip install --force-reinstall --no-deps --no-binary xllamacpp \
	  "$$(grep -oE '^xllamacpp==[^ ;#]+' requirements.txt)"
	$(PY) -c "import xllamacpp; print(xllamacpp.get_system_info())"

# Each test module whole on one worker (its app and browser are module-wide).
test: setup-dev browser
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The browser tests taking their screenshots (artifacts/screenshots/), for a person to look at; `make test` takes none.
shots: setup-dev browser
	MEDRAG_TEST_SHOTS=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m browser $(PYTEST_ARGS)

# The checks CI runs before the tests: lint, the format, and docs drawn from benchmarks/results/ as they stand.
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m tools.docs --check
