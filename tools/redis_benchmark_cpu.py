"""The CPU redis-benchmark spends per request, measured here: its entry in data/load_generators.yaml.

``python -m tools.redis_benchmark_cpu [--runs N] [--requests R]`` starts Debian's ``redis-server``
on a free port of 127.0.0.1 (no persistence), then runs ``redis-benchmark -t set`` and ``-t get``
(one thread, its default; 3-byte values, its default ``-d``) with 10 and 20 connections, ``R``
requests each, ``N`` times. The load generator's own CPU is its process's user + system time as
the kernel accounts it (``getrusage(RUSAGE_CHILDREN)`` around the run, the figure ``/usr/bin/time``
prints), over the requests it completed: the time per request its one thread spends, whatever it
waits for. The server shares the machine, so the run is the co-located case; the client's CPU per
request is what the model's ``client_time`` knob takes.

It prints the medians per case in microseconds and in cycles at the nominal clock
(``/proc/cpuinfo``'s ``cpu MHz``; a VM's turbo is not visible) and appends the runs to
``data/microbench/redis-benchmark-cpu.csv`` with the machine and the version. It is evidence from
outside the corpus, never fitted to a recorded figure.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import re
import resource
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from tools.microbench import append_runs, cpu_model

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "microbench" / "redis-benchmark-cpu.csv"
CASES = [(test, conns) for test in ("set", "get") for conns in (10, 20)]
COLUMNS = ["date", "redis_benchmark", "cpu", "nominal_mhz", "test", "connections", "requests", "repetition",
           "rps", "user_s", "system_s", "cpu_us_per_request"]  # fmt: skip


def _mhz() -> float:
    """The nominal clock [MHz] (/proc/cpuinfo)."""
    found = re.search(r"cpu MHz\s*:\s*([\d.]+)", Path("/proc/cpuinfo").read_text())
    return float(found.group(1)) if found else float("nan")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_once(port: int, test: str, conns: int, requests: int) -> dict:
    """One redis-benchmark run -> its requests per second and its own CPU per request [us]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-t", test, "-n", str(requests),
         "-c", str(conns), "--csv"],
        capture_output=True, text=True, timeout=600, check=True,
    ).stdout  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row = next(csv.DictReader(io.StringIO(out)))
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {"rps": float(row["rps"]), "user_s": user, "system_s": system,
            "cpu_us_per_request": (user + system) / requests * 1e6}  # fmt: skip


def _server(folder: Path, port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(100):  # up to 10 s for it to listen
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("redis-server did not start")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=500_000)
    ap.add_argument("--no-record", action="store_true", help="print only; do not append to the CSV")
    args = ap.parse_args(argv)
    for tool in ("redis-server", "redis-benchmark"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (Debian packages redis-server, redis-tools)")
    version = subprocess.run(["redis-benchmark", "--version"], capture_output=True, text=True).stdout.strip()
    cpu, mhz, port = cpu_model(), _mhz(), _free_port()
    folder = Path(tempfile.mkdtemp(prefix="redis-benchmark-cpu-"))
    server = _server(folder, port)
    rows = []
    try:
        for rep in range(1, args.runs + 1):
            for test, conns in CASES:
                r = run_once(port, test, conns, args.requests)
                rows.append({"date": dt.date.today().isoformat(), "redis_benchmark": version, "cpu": cpu,
                             "nominal_mhz": mhz, "test": test.upper(), "connections": conns,
                             "requests": args.requests, "repetition": rep,
                             **{k: round(v, 3) for k, v in r.items()}})  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{version} on {cpu} ({mhz:g} MHz nominal), one thread, server on the same machine")
    for test, conns in CASES:
        mine = [r for r in rows if r["test"] == test.upper() and r["connections"] == conns]
        us = statistics.median(r["cpu_us_per_request"] for r in mine)
        rps = statistics.median(r["rps"] for r in mine)
        print(f"  {test.upper():3s} -c {conns:2d}: {rps:9,.0f} requests/s, {us:5.2f} us of its CPU per "
              f"request = {us * mhz:6,.0f} cycles at {mhz:g} MHz")  # fmt: skip
    if not args.no_record:
        print(f"appended {append_runs(OUT, COLUMNS, rows)} runs to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
