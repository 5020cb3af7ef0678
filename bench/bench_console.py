"""The console's room view under load: a state change published -> the room view updated.

    .venv/bin/python bench/bench_console.py [--tables 200] [--rate 100] [--duration 30]

A private mosquitto and ``bridge-table console`` in a subprocess; Debian's chromium under
Playwright logged in on the room view. This process publishes a retained ``state`` for
every table, then changes one table's state ``--rate`` times a second (round robin over the
tables) for ``--duration`` seconds, each state carrying its publish time (``bench_ts``, an
extra field a listener ignores). The page measures with its own clock: on each
Server-Sent Event, once the table's card is redrawn (the ``bt:update`` event console.js
fires), ``performance.timeOrigin + performance.now()`` minus the publish time. Browser,
console, broker and this publisher share the machine's cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import paho.mqtt.client as mqtt  # noqa: E402

from controller.broker.mosquitto import Mosquitto, free_port  # noqa: E402
from controller.web.auth import write_password_file  # noqa: E402

PASSWORD = "bench password"
HOOK = """
window.__lat = [];
document.addEventListener("bt:update", (e) => {
  const s = e.detail.state;
  if (s && s.bench_ts) window.__lat.push(performance.timeOrigin + performance.now()
                                         - s.bench_ts * 1000);
});
"""


def _state(table: int, n: int, ts: float | None) -> dict[str, Any]:
    seats = "NESW"
    state: dict[str, Any] = {
        "v": 1, "table": str(table), "board": 1 + n // 60, "dealer": "N", "vul": "None",
        "phase": "play", "turn": seats[n % 4], "contract": "4S", "declarer": "S",
        "dummy": "N", "tricks": {"NS": (n // 4) % 8, "EW": (n // 8) % 5},
        "trick": 1 + (n // 4) % 13, "current": [], "obligations": {}, "penalty_cards": {},
        "irregularities": [], "last": {"src": f"pi-{table}", "seq": n}}
    if ts is not None:
        state["bench_ts"] = ts
    return state


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--rate", type=float, default=100.0, help="state changes per second")
    ap.add_argument("--duration", type=float, default=30.0)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        print("chromium is not installed (make test installs it)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        write_password_file(tmp / "pw", PASSWORD)
        with Mosquitto(tmp / "broker", persistence=False) as broker:
            port = free_port()
            console = subprocess.Popen(
                [sys.executable, "-m", "controller.cli", "console", "--broker", broker.url,
                 "--listen", f"127.0.0.1:{port}", "--director-password-file", str(tmp / "pw"),
                 "--db", str(tmp / "c.sqlite"), "--log-level", "WARNING"],
                stdin=subprocess.DEVNULL)
            pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-console")
            pub.connect(broker.host, broker.port)
            pub.loop_start()
            try:
                for t in range(1, args.tables + 1):
                    pub.publish(f"bridge/{t}/state", json.dumps(_state(t, 0, None)), qos=1,
                                retain=True).wait_for_publish()
                url = f"http://127.0.0.1:{port}"
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(executable_path=executable,
                                                 args=["--no-sandbox", "--disable-gpu"])
                    # the page's CSP forbids eval; Playwright's wait_for_function needs it
                    page = browser.new_page(viewport={"width": 1280, "height": 800},
                                            bypass_csp=True)
                    page.add_init_script(HOOK)
                    deadline = time.monotonic() + 30
                    while True:
                        try:
                            page.goto(url + "/login")
                            break
                        except Exception:
                            if time.monotonic() > deadline:
                                raise
                            time.sleep(0.2)
                    page.fill("input[name=password]", PASSWORD)
                    page.click("button[type=submit]")
                    page.wait_for_function(
                        f"document.querySelectorAll('.tcard').length >= {args.tables}",
                        timeout=60000)
                    sent = 0
                    start = time.monotonic()
                    n = 0
                    while time.monotonic() - start < args.duration:
                        due = start + sent / args.rate
                        delay = due - time.monotonic()
                        if delay > 0:
                            time.sleep(delay)
                        table = 1 + sent % args.tables
                        n = 1 + sent // args.tables
                        pub.publish(f"bridge/{table}/state",
                                    json.dumps(_state(table, n, time.time())), qos=1,
                                    retain=True)
                        sent += 1
                    page.wait_for_function(f"window.__lat.length >= {sent}", timeout=30000)
                    lat = page.evaluate("window.__lat")
                    browser.close()
            finally:
                pub.loop_stop()
                pub.disconnect()
                console.terminate()
                console.wait(10)
    print(f"command: .venv/bin/python bench/bench_console.py --tables {args.tables} "
          f"--rate {args.rate:g} --duration {args.duration:g}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {platform.system()} {platform.release()}")
    print(f"{args.tables} tables, {sent} state changes at {args.rate:g}/s, {len(lat)} measured")
    print("| p50 ms | p95 ms | p99 ms | max ms | mean ms |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {percentile(lat, .5):.1f} | {percentile(lat, .95):.1f} | "
          f"{percentile(lat, .99):.1f} | {max(lat):.1f} | {statistics.fmean(lat):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
