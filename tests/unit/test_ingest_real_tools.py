"""``perfmodel ingest`` on outputs the real tools print here and now (issue 39).

The tests start their servers on loopback with free ports (PostgreSQL in a scratch folder, redis,
memcached), run each tool for a second or two, read its output and check the figures against the
tool's own totals (operations over seconds), Little's law where the loop is closed, and the order
of the latency percentiles; the rows must load as a user's figure file. Servers stop in the
fixtures' teardown. A tool that is not installed skips its test, naming the Debian package (``make
bench-tools`` installs them); with ``PERFMODEL_REQUIRE_TOOLS=1`` (set by .ci/run) it fails instead.
memtier_benchmark is no Debian package: its test runs only where it is on the PATH.
"""

from __future__ import annotations

import glob
import json
import math
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from perfmodel.evidence import ingest
from perfmodel.inputs.keys import HOT_DEFAULTS

pytestmark = pytest.mark.slow

#: set by .ci/run: in CI a missing tool is a failure, not a skip
REQUIRED = os.environ.get("PERFMODEL_REQUIRE_TOOLS", "") not in ("", "0")
PLATFORM = "x86-azure-ds14-v2-localssd"
DRIVE = "intel-p3700-2tb"
#: seconds any one command may take
TIMEOUT = 60


def tool(name: str, package: str) -> str:
    """The path of ``name``; skip (or fail where required) when it is not installed."""
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))[-1:]), None
    )
    if found:
        return found
    message = f"{name} is not installed (Debian package {package}; `make bench-tools` installs it)"
    if REQUIRED:
        pytest.fail(f"PERFMODEL_REQUIRE_TOOLS is set but {message}")
    pytest.skip(message)


def run(cmd: list[str], **kwargs) -> str:
    """Standard output of ``cmd``; a failure shows its standard error."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
    assert done.returncode == 0, f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}"
    return done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the server exited ({proc.returncode})"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


def stop(proc: subprocess.Popen) -> None:
    """Stop a server this module started (by its own handle)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def read(text: str, name: str, **given) -> ingest.Ingested:
    """Figure rows of an output, checked to load as a user's figure file."""
    context = {"platform_id": PLATFORM, "device_id": DRIVE, **given}
    done = ingest.read(text, ingest.context_for(name, **context))
    frame = ingest.validate_csv(done.rows)
    assert len(frame) == len(done.rows) > 0
    return done


def rows_of(done: ingest.Ingested) -> dict[tuple[str, str], dict]:
    return {(r["operation"], r["metric"]): r for r in done.rows}


def value(row: dict) -> float:
    return float(row["value"])


def ordered(rows: dict, operation: str, metrics: tuple[str, ...]) -> None:
    values = [value(rows[operation, m]) for m in metrics if (operation, m) in rows]
    assert len(values) >= 2 and values == sorted(values), (operation, values)


# --- servers -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_port():
    server = tool("redis-server", "redis-server")
    port = free_port()
    cmd = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield port
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def memcached_port():
    server = tool("memcached", "memcached")
    port = free_port()
    cmd = [server, "-l", "127.0.0.1", "-p", str(port), "-U", "0"] + (
        ["-u", "nobody"] if os.geteuid() == 0 else []
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield port
    finally:
        stop(proc)


def _as_user() -> tuple[list[str], str | None]:
    """The prefix that runs PostgreSQL unprivileged (it refuses root), and that user."""
    if os.geteuid() != 0:
        return [], None
    user = "postgres" if any(p.pw_name == "postgres" for p in pwd.getpwall()) else "nobody"
    return [tool("runuser", "util-linux"), "-u", user, "--"], user


@pytest.fixture(scope="module")
def postgres_port():
    initdb, pg_ctl = tool("initdb", "postgresql"), tool("pg_ctl", "postgresql")
    prefix, user = _as_user()
    folder = tempfile.mkdtemp(prefix="perfmodel-pg-", dir="/tmp")
    if user:
        shutil.chown(folder, user=user)
    data, port = os.path.join(folder, "data"), free_port()
    run([*prefix, initdb, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    run([*prefix, pg_ctl, "-D", data, "-o", options, "-l", os.path.join(folder, "log"), "-w", "start"])
    try:
        yield port
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=TIMEOUT,
        )
        shutil.rmtree(folder, ignore_errors=True)


# --- the tools -----------------------------------------------------------------------------------


def test_fio_json_per_group_and_per_job(tmp_path):
    fio = tool("fio", "fio")
    base = [
        fio,
        f"--filename={tmp_path / 'f.dat'}",
        "--size=8M",
        "--rw=randrw",
        "--rwmixread=70",
        "--bs=4k",
        "--ioengine=psync",
        "--numjobs=2",
        "--runtime=1",
        "--time_based",
        "--output-format=json",
    ]
    for extra in (["--name=grouped", "--group_reporting"], ["--name=jobs"]):
        text = run([*base, *extra])
        doc = json.loads(text[text.index("{") :])
        rows = rows_of(read(text, "fio.json"))
        iops = value(rows["mixed", "iops"])
        total = sum(
            j[d]["total_ios"] / (j[d]["runtime"] / 1e3) for j in doc["jobs"] for d in ("read", "write")
        )
        assert math.isclose(iops, total, rel_tol=0.01), (iops, total)  # fio's IOPS are its I/Os over runtime
        assert (rows["mixed", "iops"]["clients"], rows["mixed", "iops"]["read_fraction"]) == ("2", "0.7")
        if "--group_reporting" in extra:
            ordered(rows, "read", ("latency_p95", "latency_p99", "latency_p999", "latency_max"))
    seq = [a if a != "--rw=randrw" else "--rw=rw" for a in base] + ["--name=seq", "--group_reporting"]
    rows = rows_of(read(run(seq), "fio.json"))
    assert rows["mixed", "iops"]["access_pattern"] == "sequential"  # rw=rw: fio's sequential mix


def test_sysbench_fileio_rate_is_its_events_over_time(tmp_path):
    sysbench = tool("sysbench", "sysbench")
    common = [sysbench, "fileio", "--file-total-size=8M", "--file-num=2"]
    run([*common, "prepare"], cwd=tmp_path)
    text = run([*common, "--file-test-mode=rndrw", "--time=1", "--threads=2", "run"], cwd=tmp_path)
    rows = rows_of(read(text, "fileio.txt", system="fio"))
    events = float(re.search(r"total number of events:\s+(\d+)", text).group(1))
    seconds = float(re.search(r"total time:\s+([\d.]+)s", text).group(1))
    fsyncs = float(re.search(r"fsyncs/s:\s+([\d.]+)", text).group(1))
    assert math.isclose(value(rows["mixed", "iops"]) + fsyncs, events / seconds, rel_tol=0.02)
    assert rows["mixed", "iops"]["io_bytes"] == "16384" and rows["mixed", "iops"]["clients"] == "2"


def test_sysbench_fileio_sequential_modes_are_recorded_as_sequential(tmp_path):
    sysbench = tool("sysbench", "sysbench")
    common = [sysbench, "fileio", "--file-total-size=8M", "--file-num=2"]
    run([*common, "prepare"], cwd=tmp_path)
    for mode, op in (("seqrd", "read"), ("seqwr", "write"), ("rndrd", "read")):
        text = run([*common, f"--file-test-mode={mode}", "--time=1", "run"], cwd=tmp_path)
        rows = rows_of(read(text, f"{mode}.txt", system="fio"))
        assert rows[op, "iops"]["access_pattern"] == ("random" if mode.startswith("rnd") else "sequential")


def test_sysbench_cpu_is_refused():
    text = run([tool("sysbench", "sysbench"), "cpu", "--time=1", "run"])
    with pytest.raises(ingest.IngestError, match="sysbench cpu"):
        read(text, "cpu.txt", system="fio")


def test_sysbench_oltp_on_postgresql(postgres_port):
    sysbench = tool("sysbench", "sysbench")
    conn = [
        "--db-driver=pgsql",
        "--pgsql-host=127.0.0.1",
        f"--pgsql-port={postgres_port}",
        "--pgsql-user=postgres",
        "--pgsql-db=postgres",
        "--tables=1",
        "--table-size=1000",
    ]
    run([sysbench, "oltp_read_write", *conn, "prepare"])
    text = run([sysbench, "oltp_read_write", *conn, "--threads=2", "--time=2", "--percentile=99", "run"])
    rows = rows_of(read(text, "oltp.txt", system="postgresql"))
    rate = rows["mixed", "throughput"]
    txn = float(re.search(r"transactions:\s+(\d+)", text).group(1))
    seconds = float(re.search(r"total time:\s+([\d.]+)s", text).group(1))
    assert math.isclose(value(rate), txn / seconds, rel_tol=0.02)
    assert (rate["statements_per_op"], rate["read_statements_per_op"]) == ("18", "14")
    # the key distribution recorded is this sysbench's own default (its --help), and a special
    # default's hot set is the one the cache model assumes (perfmodel.inputs.keys.HOT_DEFAULTS)
    helptext = run([sysbench, "--help"])
    default = re.search(r"--rand-type=STRING[^\[]*\[(\w+)\]", helptext).group(1)
    assert rate["key_distribution"] == default
    if default == "special":
        pct = float(re.search(r"--rand-spec-pct=N[^\[]*\[(\d+)\]", helptext).group(1))
        res = float(re.search(r"--rand-spec-res=N[^\[]*\[(\d+)\]", helptext).group(1))
        assert HOT_DEFAULTS["special"] == (pct / 100, res / 100)
    assert math.isclose(2 / value(rate) * 1e3, value(rows["mixed", "latency_mean"]), rel_tol=0.1)  # Little
    ordered(rows, "mixed", ("latency_p99", "latency_max"))


def test_pgbench_on_postgresql(postgres_port):
    pgbench = tool("pgbench", "postgresql-client")
    conn = ["-h", "127.0.0.1", "-p", str(postgres_port), "-U", "postgres"]
    run([pgbench, *conn, "-i", "-s", "1", "-q", "postgres"])
    text = run([pgbench, *conn, "-c", "2", "-j", "2", "-T", "2", "postgres"])
    rows = rows_of(read(text, "pgbench.txt"))
    rate = rows["mixed", "throughput"]
    done = float(re.search(r"number of transactions actually processed: (\d+)", text).group(1))
    assert math.isclose(value(rate), done / 2, rel_tol=0.05)  # -T 2, less the connection time
    assert math.isclose(2 / value(rate) * 1e3, value(rows["mixed", "latency_mean"]), rel_tol=0.1)
    assert (rate["statements_per_op"], rate["clients"], rate["system"]) == ("5", "2", "postgresql")


def test_redis_benchmark_csv_and_text(redis_port):
    bench = tool("redis-benchmark", "redis-tools")
    cmd = [
        bench,
        "-h",
        "127.0.0.1",
        "-p",
        str(redis_port),
        "-n",
        "50000",
        "-c",
        "10",
        "-d",
        "32",
        "-t",
        "set,get",
    ]
    rows = rows_of(
        read(
            run([*cmd, "--csv"]),
            "rb.csv",
            device_id="dram-in-memory",
            fields={"clients": "10", "object_bytes": "32", "iodepth": "1"},
        )
    )
    ordered(rows, "read", ("latency_p95", "latency_p99", "latency_max"))
    text = run(cmd)
    rows = rows_of(read(text, "rb.txt", device_id="dram-in-memory", fields={"iodepth": "1"}))
    for test, op in (("SET", "write"), ("GET", "read")):
        block = text.split(f"====== {test} ======")[1]
        seconds = float(re.search(r"50000 requests completed in ([\d.]+) seconds", block).group(1))
        assert math.isclose(value(rows[op, "throughput"]), 50000 / seconds, rel_tol=0.01 + 0.006 / seconds)
        assert (rows[op, "throughput"]["clients"], rows[op, "throughput"]["object_bytes"]) == ("10", "32")
        ordered(rows, op, ("latency_p95", "latency_p99", "latency_max"))


def test_memaslap_on_memcached(memcached_port):
    memaslap = shutil.which("memaslap") or tool("memcaslap", "libmemcached-tools")
    text = run([memaslap, "-s", f"127.0.0.1:{memcached_port}", "-t", "2s", "-c", "4", "-T", "2", "-S", "1s"])
    rows = rows_of(read(text, "memaslap.txt", device_id="dram-in-memory"))
    final = re.search(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", text)
    assert math.isclose(
        value(rows["mixed", "throughput"]), float(final.group(2)) / float(final.group(1)), rel_tol=0.05
    )
    assert rows["mixed", "throughput"]["clients"] == "4"
    ordered(rows, "read", ("latency_mean", "latency_max"))


def test_db_bench(tmp_path):
    db_bench = tool("db_bench", "rocksdb-tools")
    text = run(
        [
            db_bench,
            "--benchmarks=fillrandom,readrandom",
            "--num=20000",
            f"--db={tmp_path / 'db'}",
            "--threads=2",
            "--value_size=100",
            "--histogram=1",
        ]
    )
    done = read(text, "db_bench.txt", fields={"clients": "2"})
    for name in ("fillrandom", "readrandom"):
        line = re.search(rf"^{name}\s*:.*?(\d+) ops/sec ([\d.]+) seconds (\d+) operations", text, flags=re.M)
        rows = {r["metric"]: r for r in done.rows if f"-{name}-" in r["figure_id"]}
        assert math.isclose(
            value(rows["throughput"]), float(line.group(3)) / float(line.group(2)), rel_tol=0.02
        )
        # Debian's db_bench is RocksDB >= 6.0: micros/op is the 2 threads' time, about 2 / ops/sec
        assert "time_per_op" not in rows
        threads_time = value(rows["thread_time_per_op"]) * 1e-6  # us -> s
        assert 1.2 / value(rows["throughput"]) < threads_time <= 2.05 / value(rows["throughput"])
        tail = [value(rows[m]) for m in ("latency_p99", "latency_p999", "latency_max")]
        assert tail == sorted(tail)


def test_memtier_where_it_is_installed(redis_port, tmp_path):
    memtier = shutil.which("memtier_benchmark")
    if not memtier:  # not a Debian package: never required
        pytest.skip(
            "memtier_benchmark is not on the PATH (no Debian package; build RedisLabs/memtier_benchmark)"
        )
    out = tmp_path / "memtier.json"
    run(
        [
            memtier,
            "-s",
            "127.0.0.1",
            "-p",
            str(redis_port),
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=1",
            "--ratio=1:3",
            "--hide-histogram",
            f"--json-out-file={out}",
        ]
    )
    stats = json.loads(out.read_text())["ALL STATS"]
    rows = rows_of(read(out.read_text(), "memtier.json", device_id="dram-in-memory"))
    total = stats["Totals"]["Count"] / (stats["Runtime"]["Total duration"] / 1e3)
    assert math.isclose(value(rows["mixed", "throughput"]), total, rel_tol=0.05)
    assert rows["mixed", "throughput"]["read_fraction"] == "0.75"


def test_the_tools_are_all_there_where_required():
    if not REQUIRED:
        pytest.skip("PERFMODEL_REQUIRE_TOOLS is not set: a missing tool skips its own test")
    for name, package in (
        ("fio", "fio"),
        ("sysbench", "sysbench"),
        ("redis-server", "redis-server"),
        ("redis-benchmark", "redis-tools"),
        ("memcached", "memcached"),
        ("initdb", "postgresql"),
        ("pgbench", "postgresql-client"),
        ("db_bench", "rocksdb-tools"),
    ):
        tool(name, package)
    assert shutil.which("memaslap") or tool("memcaslap", "libmemcached-tools")
