"""The CPU one fio job spends per direct I/O, measured here: the prior behind ``cpu_cycles_read[fio]``.

``python -m tools.fio_job_cpu [--runs N] [--seconds S] [--dir DIR]`` runs Debian's ``fio`` with
one job (``numjobs=1``), ``ioengine=libaio``, ``direct=1``, 4 KiB random reads and writes at
iodepth 1, 16 and 64 on a 1 GiB file in ``DIR`` (default: a temporary folder under ``/var/tmp``,
on a real block device: ``direct=1`` needs one, tmpfs refuses it), ``N`` times each. fio reports
the job's own CPU (``usr_cpu`` + ``sys_cpu``, per cent of its run time, from ``getrusage``):
submitting, reaping and its own bookkeeping, and whatever interrupt work ran in its context.
That CPU over the job's I/Os is the time per I/O on the job's one thread; with the system spec's
``load_threads`` (fio's jobs are its threads) one job can run no more than one over that per
second, however fast the drive.

It prints the medians per case in microseconds and in cycles at the nominal clock
(``/proc/cpuinfo``'s ``cpu MHz``; a VM's turbo is not visible, so the cycles are a floor) and
appends the runs to ``data/microbench/fio-job-cpu.csv`` with the machine and the version. It is
evidence from outside the corpus, never fitted to a recorded figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from tools.microbench import append_runs, cpu_model

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "microbench" / "fio-job-cpu.csv"
CASES = [(rw, depth) for rw in ("randread", "randwrite") for depth in (1, 16, 64)]
COLUMNS = ["date", "fio", "cpu", "nominal_mhz", "rw", "iodepth", "repetition", "iops", "usr_cpu_pct",
           "sys_cpu_pct", "cpu_us_per_io"]  # fmt: skip


def _cpu() -> tuple[str, float]:
    """The CPU's model name and nominal clock [MHz] (/proc/cpuinfo)."""
    mhz = re.search(r"cpu MHz\s*:\s*([\d.]+)", Path("/proc/cpuinfo").read_text())
    return cpu_model(), float(mhz.group(1)) if mhz else float("nan")


def run_once(rw: str, depth: int, folder: Path, seconds: float) -> dict:
    """One fio run of one job -> its IOPS, CPU shares and CPU per I/O [us]."""
    out = subprocess.run(
        ["fio", "--name=job", f"--directory={folder}", "--size=1G", "--ioengine=libaio", "--direct=1",
         "--bs=4k", f"--rw={rw}", f"--iodepth={depth}", "--numjobs=1", "--time_based",
         f"--runtime={seconds:g}", "--ramp_time=1", "--output-format=json"],
        capture_output=True, text=True, timeout=seconds + 120, check=True,
    ).stdout  # fmt: skip
    job = json.loads(out[out.index("{") :])["jobs"][0]
    side = job["read"] if rw.endswith("read") else job["write"]
    ios, runtime_s = float(side["total_ios"]), float(job["job_runtime"]) / 1e3
    cpu_s = (float(job["usr_cpu"]) + float(job["sys_cpu"])) / 100.0 * runtime_s
    return {"iops": float(side["iops"]), "usr_cpu_pct": float(job["usr_cpu"]),
            "sys_cpu_pct": float(job["sys_cpu"]), "cpu_us_per_io": cpu_s / ios * 1e6}  # fmt: skip


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--dir", type=Path, default=None, help="folder on a block device (default: /var/tmp)")
    ap.add_argument("--no-record", action="store_true", help="print only; do not append to the CSV")
    args = ap.parse_args(argv)
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed (Debian package fio)")
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    cpu, mhz = _cpu()
    folder = Path(tempfile.mkdtemp(prefix="fio-job-cpu-", dir=args.dir or "/var/tmp"))
    rows = []
    try:
        for rep in range(1, args.runs + 1):
            for rw, depth in CASES:
                r = run_once(rw, depth, folder, args.seconds)
                rows.append({"date": dt.date.today().isoformat(), "fio": version, "cpu": cpu,
                             "nominal_mhz": mhz, "rw": rw, "iodepth": depth, "repetition": rep,
                             **{k: round(v, 3) for k, v in r.items()}})  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{version} on {cpu} ({mhz:g} MHz nominal), one job, libaio, direct, 4 KiB")
    for rw, depth in CASES:
        mine = [r for r in rows if r["rw"] == rw and r["iodepth"] == depth]
        us = statistics.median(r["cpu_us_per_io"] for r in mine)
        iops = statistics.median(r["iops"] for r in mine)
        print(f"  {rw:9s} iodepth {depth:3d}: {iops:10,.0f} IOPS, {us:6.2f} us of the job's CPU per I/O "
              f"= {us * mhz:7,.0f} cycles at {mhz:g} MHz")  # fmt: skip
    if not args.no_record:
        print(f"appended {append_runs(OUT, COLUMNS, rows)} runs to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
