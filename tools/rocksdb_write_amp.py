"""RocksDB's background bytes per user byte with auto compactions on and off, measured here.

``python -m tools.rocksdb_write_amp [--runs N] [--num K]`` runs Debian's ``db_bench``
(rocksdb-tools) ``fillrandom`` single-threaded into an empty database in ``/dev/shm``, the WAL
off and a vector memtable as ``tools/benchmark.sh``'s ``bulkload`` step runs it, with
``--disable_auto_compactions=0`` and ``=1``, ``N`` times each. Small memtables and levels
(4 MiB write buffers, a 16 MiB level 1) make a few hundred flushes and the compactions behind
them within seconds. From db_bench's own statistics (``stats``) it takes the user bytes
ingested, the bytes the memtable flushes wrote and the bytes flushes and compactions wrote
together ("Cumulative compaction: ... GB write"), and prints each per user byte.

With auto compactions off a load writes each byte once, by its flush, and compacts later (the
``compact`` step benchmark.sh runs after the load, timed on its own): the model's knob
``compactions=off`` (``perfmodel.mechanisms.compaction``) charges a load that flush copy only.
The runs are appended to ``data/microbench/rocksdb-write-amp.csv`` with the machine and the
version. Evidence from outside the corpus, never fitted to a recorded figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from tools.microbench import append_runs, cpu_model

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "microbench" / "rocksdb-write-amp.csv"
COMMON = ["--benchmarks=fillrandom,stats", "--threads=1", "--value_size=400", "--key_size=20",
          "--compression_type=none", "--disable_wal=1", "--memtablerep=vector",
          "--allow_concurrent_memtable_write=false", "--write_buffer_size=4194304",
          "--target_file_size_base=4194304", "--max_bytes_for_level_base=16777216"]  # fmt: skip
COLUMNS = ["date", "db_bench", "cpu", "num", "auto_compactions", "repetition", "ingest_gb", "flush_gb",
           "written_gb", "flush_per_user_byte", "written_per_user_byte", "micros_per_op"]  # fmt: skip


def _gb(pattern: str, text: str) -> float:
    found = re.findall(pattern, text, flags=re.MULTILINE)
    if not found:
        raise RuntimeError(f"db_bench printed no {pattern!r}")
    return float(found[-1])


def run_once(auto: bool, num: int, db_bench: str = "db_bench") -> dict:
    """One load -> the user bytes, flush bytes and all bytes written [GB] and the time per put [us]."""
    folder = Path(tempfile.mkdtemp(prefix="rocksdb-write-amp-", dir="/dev/shm"))
    try:
        done = subprocess.run(
            [db_bench, *COMMON, f"--disable_auto_compactions={0 if auto else 1}", f"--num={num}",
             f"--db={folder}"],
            capture_output=True, text=True, timeout=900, check=True,
        )  # fmt: skip
        out = done.stdout + "\n" + done.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ingest = _gb(r"Cumulative writes:.*ingest: ([\d.]+) GB", out)
    flush = _gb(r"Flush\(GB\): cumulative ([\d.]+)", out)
    written = _gb(r"Cumulative compaction: ([\d.]+) GB write", out)
    micros = _gb(r"^fillrandom\s*:\s*([\d.]+) micros/op", out)
    version = re.search(r"RocksDB:\s*version\s*(\S+)", out)
    return {"ingest_gb": ingest, "flush_gb": flush, "written_gb": written,
            "flush_per_user_byte": flush / ingest, "written_per_user_byte": written / ingest,
            "micros_per_op": micros, "version": version.group(1) if version else ""}  # fmt: skip


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--num", type=int, default=3_000_000)
    ap.add_argument("--no-record", action="store_true", help="print only; do not append to the CSV")
    args = ap.parse_args(argv)
    if shutil.which("db_bench") is None:
        raise SystemExit("db_bench is not installed (Debian package rocksdb-tools)")
    cpu = cpu_model()
    rows = []
    for rep in range(1, args.runs + 1):
        for auto in (True, False):
            r = run_once(auto, args.num)
            version = r.pop("version")
            rows.append({"date": dt.date.today().isoformat(), "db_bench": f"db_bench version {version}",
                         "cpu": cpu, "num": args.num, "auto_compactions": int(auto), "repetition": rep,
                         **{k: round(v, 4) for k, v in r.items()}})  # fmt: skip
    for auto in (True, False):
        mine = [r for r in rows if r["auto_compactions"] == int(auto)]
        print(f"auto compactions {'on ' if auto else 'off'}: flushes write "
              f"{statistics.median(r['flush_per_user_byte'] for r in mine):.2f}, flushes and compactions "
              f"{statistics.median(r['written_per_user_byte'] for r in mine):.2f} bytes per user byte; "
              f"{statistics.median(r['micros_per_op'] for r in mine):.2f} us per put")  # fmt: skip
    if not args.no_record:
        print(f"appended {append_runs(OUT, COLUMNS, rows)} runs to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
