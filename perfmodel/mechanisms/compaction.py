"""Compactions deferred during a load: an LSM tree that only flushes while it is written.

The knob ``compactions`` (:data:`COMPACTIONS`) takes two values:

- ``auto``: the LSM tree compacts as it is written (RocksDB's default, Cassandra's and ScyllaDB's
  compaction strategies): the background bytes per user byte are the system's
  ``background_write_factor`` -- the write-ahead log's copy, the memtable flush's copy and the
  steady state's compaction rewrites.
- ``off``: auto compactions are disabled for the run (RocksDB ``disable_auto_compactions``;
  db_bench ``--disable_auto_compactions=1``). Every memtable is flushed as a new level-0 file and
  nothing is rewritten until a compaction is asked for: RocksDB's ``tools/benchmark.sh``
  ``bulkload`` step (v6.10 to v8.0 at least) loads with ``fillrandom --disable_auto_compactions=1
  --disable_wal=1 --memtablerep=vector`` and compacts afterwards in a ``compact`` step of its own,
  timed and reported on its own. The load's background bytes per user byte are then the log's
  copy (if there is a log: knob ``durability``) and the flush's: at most :data:`LOAD_WRITE_FACTOR`.

Measured here: ``python -m tools.rocksdb_write_amp`` (Debian's db_bench, a single-threaded
``fillrandom`` with the WAL off and a vector memtable, 4 MiB memtables) writes 0.98 bytes per
user byte with auto compactions off -- its flushes alone -- and 4.43 with them on
(``data/microbench/rocksdb-write-amp.csv``).

What the deferred compaction costs later is not part of the load's rate, and is not modelled: a
figure whose time spans the load *and* its compaction (RocksDB wiki 2014's bulk load, "103
minutes") is a run with compactions, not a load without them.

The knob applies to LSM trees (spec ``lsm: true``); pure functions, broadcast.
"""

from __future__ import annotations

import numpy as np

from perfmodel.mechanisms.durability import LOG_COPY

COMPACTIONS = ("auto", "off")

#: bytes a memtable flush writes per user byte [-]: each byte once, into a level-0 file
FLUSH_COPY = 1.0
#: background bytes per user byte of an LSM tree written with compactions off [-]: the log's copy
#: and the flush's (the log's is taken off again without a log: perfmodel.mechanisms.durability)
LOAD_WRITE_FACTOR = LOG_COPY + FLUSH_COPY


def deferred(compactions) -> np.ndarray:
    """Whether each configuration's compactions are off for the run (bool array)."""
    return np.asarray(compactions, dtype=object) == "off"


def background_factor(factor, compactions, lsm) -> np.ndarray:
    """Background bytes per user byte [-]: at most :data:`LOAD_WRITE_FACTOR` for an LSM tree whose
    compactions are off, ``factor`` elsewhere (compactions on, or not an LSM tree)."""
    factor = np.asarray(factor, dtype=float)
    off = deferred(compactions) & np.asarray(lsm, dtype=bool)
    return np.where(off, np.minimum(factor, LOAD_WRITE_FACTOR), factor)
