# Two commands on a fresh Debian / Raspberry Pi OS machine:
#   make demo   - a whole board on a simulated table, live in the terminal
#   make test   - the test suite
#   make check  - ruff, mypy and the fast tier: the tests that start no broker, process or
#                 browser and are not marked slow (tests/tiers.py), for the edit-test loop
#   make pi-check - a table's Pi on an emulated arm64 Raspberry Pi OS (root; tools/pi_check.py)
# Each installs what it needs: mosquitto (apt-get), a .venv with the project.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
STAMP  := $(VENV)/.installed
# the demo needs the package alone: no test toolchain (Playwright, mypy, hypothesis) on a Pi
DEMO_STAMP := $(VENV)/.installed-demo
# mypy and setuptools for the compiled wheel's build (compiled-wheel)
BUILD_STAMP := $(VENV)/.installed-build
# where make test's last step installs the compiled wheel (tools/compiled_build.py VENV)
COMPILED_VENV := .venv-compiled
# the checkers and the test runner as every target runs them: ruff over all the code, and
# pytest on two workers, each module's tests on one in order (PYTEST_WORKERS=0: in process)
RUFF   := $(PY) -m ruff check controller firmware_bridge tests bench tools setup.py
PYTEST := $(PY) -m pytest -q -n $${PYTEST_WORKERS:-2} --dist loadfile

.PHONY: test check demo lint typecheck bench screenshots clean deps-demo deps-system deps-browser deps-compiler bytecode compiled-wheel pi-check deps-pi-check

# what the demo needs: the broker it starts and a Python that makes virtualenvs
deps-demo:
	@command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || { \
	  echo "installing mosquitto (apt-get)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq mosquitto; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3-venv; }

# a C compiler and Debian's Python headers: the compiled wheel's build (compiled-wheel)
deps-compiler:
	@command -v cc >/dev/null 2>&1 || { \
	  echo "installing a C compiler for the mypyc build (apt-get gcc)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq gcc; }
	@inc="$$($(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['include'])")"; \
	  [ -f "$$inc/Python.h" ] || case "$$inc" in /usr/include/*) \
	  echo "installing Python's headers for the mypyc build (apt-get python3-dev)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3-dev;; esac

# and what the tests need on top: the OLED's fonts (DejaVu for Vietnamese, a CJK font for
# Chinese: tests/installed.py), systemd-analyze (the units' checks), a C compiler and
# Python's headers (the compiled wheel the tests' last step runs against)
deps-system: deps-demo deps-compiler
	@[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || { \
	  echo "installing a TrueType font, the OLED's Vietnamese (apt-get)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq fonts-dejavu-core; }
	@[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || { \
	  echo "installing a CJK font, the OLED's Chinese (apt-get)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq fonts-wqy-microhei; }
	@command -v systemd-analyze >/dev/null 2>&1 || { \
	  echo "installing systemd-analyze (apt-get systemd)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq systemd; }

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

# what building the compiled wheel needs in $(VENV) besides the package's dependencies:
# mypy (mypyc, the compiler's front end) and a setuptools that reads pyproject.toml's licence
$(BUILD_STAMP): $(DEMO_STAMP)
	$(PY) -m pip install -q 'mypy>=1.10' 'setuptools>=77'
	@touch $(BUILD_STAMP)

# the compiled wheel: the Laws core and the engine's per-event modules compiled with mypyc
# (tools/compiled_build.py: about two minutes), built from a copy of the tree into dist/;
# built again only when the sources changed. The source tree always runs its sources.
compiled-wheel: deps-compiler $(BUILD_STAMP)
	$(PY) tools/compiled_build.py wheel

# the suite on the sources; then (its own line) the compiled wheel, built when the sources
# changed, installed in $(COMPILED_VENV), and the tests of its compiled modules run against
# it (where no C compiler or Python headers are: skipped, but failed under CI=true)
test: deps-system deps-browser $(STAMP) $(BUILD_STAMP) bytecode
	$(RUFF)
	$(PY) -m mypy
	$(PYTEST)
	$(PY) tools/compiled_build.py test

# the fast tier (pytest --fast, tests/conftest.py): what -m "not broker and not processes and
# not browser and not fault and not slow" selects, and a test in it that starts a process
# anyway fails, naming the tier rule that missed it. make test and make check run pytest on
# two workers (pytest-xdist), each module's tests on one, in order (--dist loadfile): the
# module-scoped stacks (tests/test_broadcast_e2e.py's numbered tests go on from what the
# earlier ones left) start once and keep their order; PYTEST_WORKERS=0 runs them in this
# process, one after another
check: $(STAMP)
	$(RUFF)
	$(PY) -m mypy
	$(PYTEST) --fast

demo: deps-demo $(DEMO_STAMP) bytecode
	$(VENV)/bin/bridge-table demo

lint: $(STAMP)
	$(RUFF)

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

# what the arm64 check needs: Debian's mmdebstrap and qemu-user's arm64 emulation
deps-pi-check:
	@command -v mmdebstrap >/dev/null 2>&1 && [ -x /usr/bin/qemu-aarch64-static ] || { \
	  echo "installing mmdebstrap and qemu-user-static (apt-get)"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) apt-get install -y -qq mmdebstrap qemu-user-static binfmt-support zstd; }

# a table's Pi checked on its own platform: an emulated Debian bookworm arm64 root (cached
# under /var/cache/bridge-table), a clean clone installed there by docs/install.md's marked
# steps, and the installed package's demo, selftest, run and fast tests (tools/pi_check.py;
# as root, run under nice: docs/benchmarks.md has its time)
pi-check: deps-pi-check
	$(SUDO) nice -n 10 $(PYTHON) tools/pi_check.py

clean:
	rm -rf $(VENV) $(COMPILED_VENV) dist .pytest_cache .mypy_cache
