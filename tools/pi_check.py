"""A table's Pi checked on its own platform: Debian bookworm on arm64 (what Raspberry Pi OS
is), emulated with qemu-user, the package installed from a clean clone as docs/install.md
says, and run from the installed package outside the source tree.

    sudo python3 tools/pi_check.py [--keep] [--no-tests]      (make pi-check)

1. The root: ``mmdebstrap`` builds a bookworm arm64 root with the packages docs/install.md's
   marked steps install (their ``apt-get install`` lines) and what the check itself uses
   (mosquitto and its clients), cached as a tarball under ``CACHE`` keyed by that list, so
   that it is built again only when the list changes; each run unpacks a fresh copy.
2. The install: the blocks of docs/install.md marked ``<!-- pi-check ...-->`` run in the
   root, as written, line for line (``REPOSITORY`` is a bare clone of this checkout's
   ``HEAD``: what is committed, nothing else); pip's cache is kept under ``CACHE`` too.
3. The checks, in a folder outside the source tree, with the installed command:
   ``bridge-table --version`` (the sources, not the compiled build), the demo to its result
   (played through the simulated table, not published directly), ``selftest --scripted``,
   ``bridge-table run`` on the shipped ``sim.toml`` against mosquitto while ``sim play``
   plays a board (its result must reach the broker); then the fast tier of the clone's
   tests (``pytest --fast``: no broker, process or browser) in the installed package's
   virtualenv, with its arm64 dependencies and the root's fonts. They run the clone's
   sources, as ``make check`` does (tests/test_compiled.py checks that the sources run):
   the same code as the installed package, whose files the checks above ran.

Needs root (a chroot, its mounts), mmdebstrap, qemu-user-static and a binfmt_misc handler for
arm64 (``make pi-check`` installs the packages); where the handler cannot be registered (a
container without binfmt_misc) it fails with that reason instead of passing. Only Debian's
mirror and PyPI are reached. Exit 0 when every check passed, 1 when one failed (the step and
its output are printed), 2 when the machine cannot run the check.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["CACHE", "CHECK_PACKAGES", "MARK", "PiCheckError", "apt_packages", "cache_key",
           "check_script", "install_steps", "main", "test_requirements"]

ROOT = Path(__file__).resolve().parents[1]
INSTALL_MD = ROOT / "docs" / "install.md"
#: the cached roots and pip's cache (``BRIDGE_TABLE_PI_CACHE`` to put them elsewhere)
CACHE = Path(os.environ.get("BRIDGE_TABLE_PI_CACHE", "/var/cache/bridge-table"))
SUITE = "bookworm"
ARCH = "arm64"
#: the comment that marks a ```sh block of docs/install.md as one of the Pi's steps
MARK = "<!-- pi-check"
#: what the check uses besides what the steps install: the broker ``run`` talks to and
#: the client that waits for the board's result; sudo, as on Raspberry Pi OS
CHECK_PACKAGES = ("ca-certificates", "mosquitto", "mosquitto-clients", "sudo")
#: where the steps put things (docs/install.md)
VENV_BIN = "/opt/bridge-table/.venv/bin"
SOURCE = "/opt/bridge-table/src"
#: where the root keeps this machine's certificate bundle for pip (``_host_ca_bundle``)
HOST_CA = "/etc/ssl/certs/pi-check-host-ca.crt"
#: the clean clone, inside the root, that ``REPOSITORY`` names
REPOSITORY = "/srv/bridge-table.git"


class PiCheckError(Exception):
    """The machine cannot run the check (exit 2), with the reason."""


def install_steps(text: str) -> list[str]:
    """The ```sh blocks of install.md marked with ``MARK`` (on the line before the fence),
    in order, as written."""
    blocks: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "```sh" and i and lines[i - 1].strip().startswith(MARK):
            end = lines.index("```", i + 1)
            blocks.append("\n".join(lines[i + 1:end]))
    return blocks


def apt_packages(steps: Sequence[str]) -> list[str]:
    """The packages the steps' ``apt-get install`` lines name."""
    packages: list[str] = []
    for step in steps:
        for line in step.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if "apt-get" in words and "install" in words:
                after = words[words.index("install") + 1:]
                packages += [w for w in after if not w.startswith("-")]
    return packages


def root_packages(steps: Sequence[str]) -> list[str]:
    return sorted({*CHECK_PACKAGES, *apt_packages(steps)})


def cache_key(packages: Sequence[str]) -> str:
    """The cached root's name: the suite, the architecture and the package list."""
    text = f"{SUITE} {ARCH} {' '.join(sorted(packages))}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The ``[test]`` extra's requirements but the package itself (installed already)."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return [r for r in data["project"]["optional-dependencies"]["test"]
            if not r.startswith("bridge-table")]


def check_script(port: int, tests: bool) -> str:
    """The checks run in the root once the steps installed the package (bash)."""
    bt = f"{VENV_BIN}/bridge-table"
    requirements = " ".join(shlex.quote(r) for r in test_requirements())
    script = f"""
set -euo pipefail
step() {{
    now=$(date +%s)
    if [ -n "${{since:-}}" ]; then echo "(the step took $((now - since)) s)"; fi
    since=$now; echo; echo "== pi-check: $*"
}}
mkdir -p /tmp/pi-check && cd /tmp/pi-check

step "bridge-table --version"
{bt} --version | tee version.txt
grep -q "(sources)" version.txt

step "the demo to its result, from the installed package"
{bt} demo --plain --speed 50 > demo.txt 2>&1 || {{ cat demo.txt; exit 1; }}
grep "^\\[result\\] Board" demo.txt
if grep -q "directly" demo.txt; then cat demo.txt; exit 1; fi

step "selftest --scripted"
{bt} selftest --scripted --repeats 1 --report /tmp/pi-check/selftest > selftest.txt 2>&1 \\
    || {{ cat selftest.txt; exit 1; }}
tail -n 2 selftest.txt

step "bridge-table run against mosquitto for a board"
mosquitto -p {port} > mosquitto.log 2>&1 &
broker=$!
mkdir -p table sim
cp "$({bt} examples sim.toml)" "$({bt} examples tags-sim.toml)" table/
{VENV_BIN}/python - <<'EOF'
import json, random
from controller.boards.generate import random_board
from controller.formats.events import record_events
record = random_board(random.Random(5), 1).record
with open("board.jsonl", "w") as out:
    for e in record_events(record, sensing="spot", scans=True, deck="1"):
        out.write(json.dumps({{k: v for k, v in e.items()
                              if k not in ("v", "src", "seq", "ts")}}) + "\\n")
print(record.contract, record.declarer, record.tricks_result)
EOF
export BRIDGE_TABLE_SIM_DIR=/tmp/pi-check/sim
mosquitto_sub -h 127.0.0.1 -p {port} -t bridge/1/result -C 1 -W 900 > result.json &
waiting=$!
{bt} sim play board.jsonl --config table/sim.toml --rate 10 --wait 300 --exit > sim.txt 2>&1 &
player=$!
sleep 5
{bt} run --config table/sim.toml --broker mqtt://127.0.0.1:{port} > run.txt 2>&1 &
table=$!
wait $waiting || {{ echo "no result on the broker"; cat sim.txt run.txt; exit 1; }}
cat result.json; echo
wait $player || {{ cat sim.txt; exit 1; }}
kill -INT $table; wait $table || true
kill $broker; wait $broker || true
grep -q '"contract"' result.json
"""
    if tests:
        script += f"""
step "the fast tests, in the installed package's virtualenv"
{VENV_BIN}/pip install -q {requirements}
cd {SOURCE}
{VENV_BIN}/python -m pytest --fast -q -p no:cacheprovider -n 2 --dist loadfile
"""
    return script + '\nstep "every check passed"\n'


def _run(args: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), text=True, **kwargs)  # type: ignore[call-overload,no-any-return]


def _need_machine() -> None:
    if os.geteuid() != 0:
        raise PiCheckError("needs root: the emulated Pi is a chroot with /proc and /dev "
                           "mounted in it (sudo make pi-check)")
    for tool, package in (("mmdebstrap", "mmdebstrap"),
                          ("qemu-aarch64-static", "qemu-user-static")):
        if shutil.which(tool) is None:
            raise PiCheckError(f"no {tool}: apt-get install {package} (make pi-check "
                               "installs it)")
    binfmt = Path("/proc/sys/fs/binfmt_misc")
    if not (binfmt / "register").exists():
        _run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(binfmt)],
             capture_output=True)
    if not (binfmt / "register").exists():
        raise PiCheckError("binfmt_misc is not mounted and cannot be (a container without "
                           "it?): arm64 programs cannot run here, so the check cannot")
    handler = binfmt / "qemu-aarch64"
    if not handler.exists() and shutil.which("update-binfmts"):
        _run(["update-binfmts", "--enable", "qemu-aarch64"], capture_output=True)
    if not handler.exists() or "enabled" not in handler.read_text():
        raise PiCheckError("no arm64 handler registered in binfmt_misc "
                           "(update-binfmts --enable qemu-aarch64 failed): arm64 programs "
                           "cannot run here, so the check cannot")


def _root_tarball(packages: Sequence[str]) -> tuple[Path, bool]:
    """The cached root for ``packages`` (built when absent); whether it was built now."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"pi-root-{SUITE}-{ARCH}-{cache_key(packages)}.tar.zst"
    if tarball.is_file():
        return tarball, False
    partial = tarball.with_name(tarball.name + ".partial.tar.zst")
    print(f"pi-check: building the {SUITE} {ARCH} root ({len(packages)} packages; cached as "
          f"{tarball})", flush=True)
    proc = _run(["mmdebstrap", f"--arch={ARCH}", "--variant=apt",
                 f"--include={','.join(packages)}", SUITE, str(partial)])
    if proc.returncode != 0:
        partial.unlink(missing_ok=True)
        raise PiCheckError(f"mmdebstrap failed (exit {proc.returncode}): see above")
    partial.rename(tarball)
    return tarball, True


@contextmanager
def _mounted(root: Path) -> Iterator[None]:
    """/proc, /sys, /dev and /dev/pts (the demo's pseudo-terminals) inside the root, and
    pip's cache kept across runs."""
    pip_cache = CACHE / "pi-pip-cache"
    pip_cache.mkdir(parents=True, exist_ok=True)
    (root / "root" / ".cache" / "pip").mkdir(parents=True, exist_ok=True)
    mounts = [(["-t", "proc", "proc"], root / "proc"),
              (["--bind", "/sys"], root / "sys"),
              (["--bind", "/dev"], root / "dev"),
              (["--bind", "/dev/pts"], root / "dev" / "pts"),
              (["--bind", str(pip_cache)], root / "root" / ".cache" / "pip")]
    done: list[Path] = []
    try:
        for args, target in mounts:
            target.mkdir(parents=True, exist_ok=True)
            _run(["mount", *args, str(target)], check=True)
            done.append(target)
        yield
    finally:
        for target in reversed(done):
            _run(["umount", "-l", str(target)], capture_output=True)


def _clean_clone(root: Path) -> None:
    """A bare repository in the root holding this checkout's ``HEAD`` as its only branch:
    the clean clone the steps' ``git clone REPOSITORY`` clones."""
    bare = root / REPOSITORY.lstrip("/")
    _run(["git", "init", "-q", "--bare", str(bare)], check=True)
    _run(["git", "-C", str(ROOT), "push", "-q", str(bare), "HEAD:refs/heads/main"],
         check=True)
    _run(["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)


def _host_ca_bundle() -> Path | None:
    """The certificates this machine's pip trusts when they are not Debian's own (a
    network whose proxy signs PyPI's certificate): the root's pip is given them too."""
    for name in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        value = os.environ.get(name)
        if value and Path(value).is_file():
            return Path(value)
    # a CI run's environment may not carry those: the host's own Debian bundle, which holds
    # whatever the host was told to trust (update-ca-certificates), serves as well
    debian = Path("/etc/ssl/certs/ca-certificates.crt")
    return debian if debian.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _in_root(root: Path, script: str, what: str, times: dict[str, float]) -> None:
    started = time.monotonic()
    print(f"\npi-check: {what}", flush=True)
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME": "/root", "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive",
           "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
    proc = _run(["chroot", str(root), "/bin/bash", "-c", script], env=env)
    times[what] = time.monotonic() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{what}: failed (exit {proc.returncode}) after "
                           f"{times[what]:.0f} s")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tools/pi_check.py", description=__doc__.split("\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the unpacked root (printed)")
    ap.add_argument("--no-tests", action="store_true", help="leave out the fast tests")
    args = ap.parse_args(argv)
    steps = install_steps(INSTALL_MD.read_text(encoding="utf-8"))
    if not steps:
        print(f"pi-check: no block of {INSTALL_MD} is marked {MARK!r}", file=sys.stderr)
        return 2
    times: dict[str, float] = {}
    started = time.monotonic()
    try:
        _need_machine()
        tarball, built = _root_tarball(root_packages(steps))
    except PiCheckError as error:
        print(f"pi-check: {error}", file=sys.stderr)
        return 2
    times["the root (built now)" if built else "the root (cached)"] = \
        time.monotonic() - started
    work = Path(tempfile.mkdtemp(prefix="bridge-table-pi-check-", dir=CACHE))
    root = work / "root"
    code = 0
    try:
        root.mkdir()
        unpacking = time.monotonic()
        _run(["tar", "-C", str(root), "--numeric-owner", "-xpf", str(tarball)], check=True)
        times["unpacking the root"] = time.monotonic() - unpacking
        for name in ("resolv.conf", "hosts"):  # PyPI's name, and sudo's own host name
            shutil.copy(Path("/etc") / name, root / "etc" / name)
        host_ca = _host_ca_bundle()
        if host_ca is not None:  # a network that reaches PyPI through its own certificate
            shutil.copy(host_ca, root / HOST_CA.lstrip("/"))
            # pip's own settings file: sudo's clean environment keeps no PIP_CERT
            (root / "etc" / "pip.conf").write_text(f"[global]\ncert = {HOST_CA}\n")
        if _run(["chroot", str(root), "/bin/true"], capture_output=True).returncode != 0:
            print("pi-check: the arm64 root's programs do not run here (qemu-user through "
                  "binfmt_misc): the check cannot", file=sys.stderr)
            return 2
        _clean_clone(root)
        with _mounted(root):
            for i, step in enumerate(steps, start=1):
                script = "set -euxo pipefail\n" + re.sub(r"\bREPOSITORY\b", REPOSITORY, step)
                _in_root(root, script, f"docs/install.md's pi-check step {i}", times)
            _in_root(root, check_script(_free_port(), tests=not args.no_tests),
                     "the installed package's checks", times)
    except RuntimeError as error:
        print(f"\npi-check: {error}", file=sys.stderr)
        code = 1
    except subprocess.CalledProcessError as error:
        print(f"\npi-check: {error}", file=sys.stderr)
        code = 2
    finally:
        still = [p for p in (root / "proc", root / "sys", root / "dev" / "pts", root / "dev")
                 if os.path.ismount(p)]
        if args.keep or still:
            print(f"pi-check: the root is kept in {root}"
                  + (f" (still mounted: {', '.join(map(str, still))})" if still else ""))
        else:
            shutil.rmtree(work, ignore_errors=True)
    times["in all"] = time.monotonic() - started
    print("\npi-check: times (s): " + ", ".join(f"{k} {v:.0f}" for k, v in times.items()))
    return code


if __name__ == "__main__":
    sys.exit(main())
