# Two commands on a fresh Debian / Raspberry Pi OS machine:
#   make demo   - a whole board on a simulated table, live in the terminal
#   make test   - the test suite
#   make check  - ruff, mypy and the fast tier: the tests that start no broker, process or
#                 browser and are not marked slow (tests/tiers.py), for the edit-test loop
# Each installs what it needs: mosquitto (apt-get), a .venv with the project.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
STAMP  := $(VENV)/.installed
# the demo needs the package alone: no test toolchain (Playwright, mypy, hypothesis) on a Pi
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: test demo lint typecheck bench screenshots clean deps-demo deps-system deps-browser mypyc mypyc-clean bytecode compiled

# what the demo needs: the broker it starts and a Python that makes virtualenvs
deps-demo:
	@command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || { \
	  echo "installing mosquitto (apt-get)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq mosquitto; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3-venv; }

# and what the tests need on top: the OLED's CJK font, systemd-analyze (the units' checks),
# a C compiler and Debian's Python headers (the mypyc build the tests run against: compiled)
deps-system: deps-demo
	@[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || { \
	  echo "installing a CJK font, the OLED's Chinese (apt-get)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq fonts-wqy-microhei; }
	@command -v systemd-analyze >/dev/null 2>&1 || { \
	  echo "installing systemd-analyze (apt-get systemd)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq systemd; }
	@command -v cc >/dev/null 2>&1 || { \
	  echo "installing a C compiler for the mypyc build (apt-get gcc)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq gcc; }
	@inc="$$($(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['include'])")"; \
	  [ -f "$$inc/Python.h" ] || case "$$inc" in /usr/include/*) \
	  echo "installing Python's headers for the mypyc build (apt-get python3-dev)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3-dev;; esac

# the browser the web tests drive (Playwright's own browser download is not used)
deps-browser:
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || { \
	  echo "installing chromium (apt-get)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium; }

$(STAMP): pyproject.toml
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,test]'
	@touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	@touch $(DEMO_STAMP)

# the modules' bytecode written now, as a wheel install does: an editable install writes
# none, and where PYTHONDONTWRITEBYTECODE is set no command would, so each start would
# compile every module it imports again (0.1 CPU s of a replay's start-up); up-to-date
# files are skipped
bytecode: $(DEMO_STAMP)
	@$(PY) -m compileall -q controller firmware_bridge

# the Laws core and the engine's per-event modules compiled with mypyc, in place, where a C
# compiler and Python's headers are (controller/mypyc_core.py: about two minutes, once, and
# again after an edit of their sources; mypy, the compiler's front end, is installed for it).
# Elsewhere the sources run: the same output, slower. BRIDGE_TABLE_PURE=1 skips the build.
compiled: $(DEMO_STAMP)
	@[ "$$BRIDGE_TABLE_PURE" = 1 ] || $(PY) -c 'import mypyc' 2>/dev/null || \
	  ! command -v cc >/dev/null 2>&1 || $(PY) -m pip install -q 'mypy>=1.10'
	@$(PY) -m controller.mypyc_core ensure

test: deps-system deps-browser $(STAMP) compiled bytecode
	$(PY) -m ruff check controller firmware_bridge tests bench
	$(PY) -m mypy
	$(PY) -m pytest -q -n $${PYTEST_WORKERS:-2} --dist loadfile

# the fast tier (pytest --fast, tests/conftest.py): what -m "not broker and not processes and
# not browser and not fault and not slow" selects, and a test in it that starts a process
# anyway fails, naming the tier rule that missed it. make test and make check run pytest on
# two workers (pytest-xdist), each module's tests on one, in order (--dist loadfile): the
# module-scoped stacks (tests/test_broadcast_e2e.py's numbered tests go on from what the
# earlier ones left) start once and keep their order; PYTEST_WORKERS=0 runs them in this
# process, one after another
.PHONY: check
check: $(STAMP)
	$(PY) -m ruff check controller firmware_bridge tests bench
	$(PY) -m mypy
	$(PY) -m pytest -q --fast -n $${PYTEST_WORKERS:-2} --dist loadfile

demo: deps-demo $(DEMO_STAMP) compiled bytecode
	$(VENV)/bin/bridge-table demo

lint: $(STAMP)
	$(PY) -m ruff check controller firmware_bridge tests bench

typecheck: $(STAMP)
	$(PY) -m mypy

# the pictures of docs/console.md and docs/broadcast.md, taken by the browser tests
screenshots: deps-system deps-browser $(STAMP)
	BRIDGE_TABLE_DOC_SCREENSHOTS=1 $(PY) -m pytest -q tests/test_console_browser.py \
	  tests/test_console_director_session.py tests/test_broadcast_e2e.py

bench: deps-system $(STAMP)
	$(PY) bench/bench_replay.py --write
	$(PY) bench/bench_rebuild.py --write
	$(PY) bench/bench_bridge_latency.py
	$(PY) bench/bench_controller.py --write-docs
	$(PY) bench/bench_verify.py
	$(PY) bench/bench_claims.py
	$(PY) bench/bench_readers.py

# the mypyc build again, by hand (make test and make demo build it when needed: compiled)
mypyc: $(STAMP)
	$(PY) -m controller.mypyc_core build

mypyc-clean:
	$(PY) -m controller.mypyc_core clean

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
