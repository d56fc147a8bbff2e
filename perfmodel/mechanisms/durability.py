"""Durability: whether a write waits for its log, and whether there is a log at all.

The knob ``durability`` (:data:`DURABILITY`) takes three values:

- ``spec``: as the system's spec says (its ``sync_writes_to`` and ``sync_writes``): a
  PostgreSQL, MySQL or openGauss commit waits for its redo / WAL flush; RocksDB's and
  Cassandra's writes append to a log the OS flushes later.
- ``async``: a commit returns before its log is flushed; the log is still written, in the
  background, a batch at a time. PostgreSQL's ``synchronous_commit = off`` ("there can be a
  delay between when success is reported to the client and when the transaction is really
  guaranteed to be safe", PostgreSQL documentation, "Asynchronous Commit"; ``fsync = off``
  likewise flushes nothing at commit); MySQL's ``innodb_flush_log_at_trx_commit = 0`` or ``2``
  ("logs are written ... and flushed to disk once per second", MySQL Reference Manual): the
  log's bytes still load the log (at its bandwidth, a batch at a time), no commit waits. For a
  store whose writes never waited for a log (RocksDB's default ``sync = false``, Cassandra's
  periodic commit log) nothing changes.
- ``off``: no log: RocksDB's ``WriteOptions::disableWAL`` (db_bench ``--disable_wal``; RocksDB
  wiki, "Write Ahead Log": with it off, writes since the last flush are lost on a crash), a
  Cassandra keyspace with ``durable_writes = false``. Nothing waits, and the log's copy of each
  written byte is not written: for a log-structured store one byte per user byte less of the
  background writes (:data:`LOG_COPY`), for a redo-log store the redo bytes.

Without the log a write also skips the append's CPU (encoding, checksum, the ``write`` call):
:func:`log_cpu`, the spec's ``log_cpu_share`` of its ``cpu_cycles_write``. RocksDB's is measured
by ``python -m tools.rocksdb_write_path`` (db_bench 7.8.3 in memory: 0.35 of a random write's
CPU, ``data/microbench/rocksdb-write-path.csv``); other systems' are not measured (0).

The knob applies to systems with a log the model knows (``lsm: true`` or ``sync_writes_to:
log``); pure functions, broadcast.
"""

from __future__ import annotations

import numpy as np

DURABILITY = ("spec", "async", "off")

#: bytes a write-ahead log writes per user byte [-]: each write is appended once
LOG_COPY = 1.0


def waits_for_log(durability) -> np.ndarray:
    """Whether a commit waits for its log flush, as the spec says (bool array)."""
    return np.asarray(durability, dtype=object) == "spec"


def log_cpu(share, durability) -> np.ndarray:
    """Share of a write's CPU a write without its log does not spend [-]: the log append's
    ``share`` (a spec's ``log_cpu_share``) where ``durability`` is ``off``, else 0."""
    return np.where(np.asarray(durability, dtype=object) == "off", np.asarray(share, dtype=float), 0.0)


def background_factor(factor, durability, lsm) -> np.ndarray:
    """Background bytes per user byte [-] of a log-structured store without its log: ``factor -
    LOG_COPY`` (at least 0) where ``durability`` is ``off`` and ``lsm``; ``factor`` elsewhere."""
    off = (np.asarray(durability, dtype=object) == "off") & np.asarray(lsm, dtype=bool)
    factor = np.asarray(factor, dtype=float)
    return np.where(off, np.maximum(factor - LOG_COPY, 0.0), factor)


def background_log_bytes(log_bytes, durability) -> np.ndarray:
    """Redo bytes per write [B] written in the background, in batches at the log's bandwidth with
    no per-commit flush: all of them when the commit does not wait for them (``async``), none
    without a log (``off``) or when the commit flushes them itself (``spec``)."""
    return np.where(np.asarray(durability, dtype=object) == "async", np.asarray(log_bytes, float), 0.0)
