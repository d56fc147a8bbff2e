"""Sequential access: what visiting keys in order changes, by whether the store keeps that order.

A workload's ``access_pattern`` (:data:`perfmodel.inputs.keys.ACCESS_PATTERNS`) says whether
requests visit consecutive keys in order; a system spec's ``key_order``
(:data:`perfmodel.inputs.systems.KEY_ORDERS`) says whether the store keeps that order on its
devices. Only where both hold does sequential differ from random here:

- **Reads share pages** (:func:`pages_per_key`). A key-ordered store (an LSM tree's sorted
  runs, a B-tree's leaves) packs consecutive keys into the same block, so a scan in key order
  reads each block once for the ``page / object`` keys it holds: a read that misses the cache
  costs ``object / page`` of a block read instead of a whole one (RocksDB wiki, "Iterator":
  an iterator walks the data blocks of each sorted run in order; MySQL Reference Manual,
  "Clustered and Secondary Indexes": InnoDB stores rows in primary-key order in the clustered
  index's pages).
- **An LSM tree's sequential inserts are not rewritten** (:func:`background_write_factor`). A
  flush of keys larger than every key before it makes a sorted run that overlaps no other, and
  leveled compaction moves such a file down a level without reading or rewriting it (RocksDB
  wiki, "Compaction" and "Leveled Compaction": a *trivial move* when the input file's key
  range overlaps no file of the next level; db_bench's ``fillseq`` inserts in key order). The
  bytes written per user byte then fall from the compaction's amplification to the WAL's copy
  and the flush's copy: :data:`SEQUENTIAL_LSM_WRITE_FACTOR`.

A store that does not keep key order (``unordered``) scatters consecutive keys: Cassandra's and
ScyllaDB's Murmur3 partitioner orders an SSTable by token, not key; Ceph's CRUSH places objects
by a hash of their names; Redis and memcached keep hash tables; a PostgreSQL heap keeps rows in
insertion order. To it a sequential pattern is random, and nothing changes.

- **A range reads the pages its rows fill** (:func:`range_pages`): an operation visiting
  ``rows_per_op`` rows from ``keys_per_op`` lookups (a sysbench range select, a YCSB scan) reads,
  beyond each lookup's page, the ``object / page`` share of a page per further row, in a store
  that keeps key order.

- **An in-order insert skips the memtable's search** (:func:`insert_cpu`): the spec's
  ``ordered_insert_saving`` share of a write's CPU. RocksDB's is measured by ``python -m
  tools.rocksdb_write_path`` (db_bench 7.8.3 in memory, WAL off: ``fillseq`` 1.0 us against
  ``fillrandom`` 3.5 us, of a 5.4 us write with the WAL: 0.46). An append to a vector memtable
  (knob ``memtable=vector``, sorted when flushed) skips the same search whatever the key order:
  ``vector_insert_saving``, 0.42 (1.24 us).

Not modelled: the block layer merging a stream's adjacent I/Os and a disk skipping its seeks
(``key_order: offsets``, fio): sequential I/O at the device is costed as random I/O of the same
size; the CPU an iterator saves over point lookups; an LRU cache's scan behaviour (the cache's
hit ratio is the key distribution's, :mod:`perfmodel.mechanisms.cache`).

All functions are pure and broadcast.
"""

from __future__ import annotations

import numpy as np

#: bytes written per user byte by an LSM tree whose inserts come in key order: the write-ahead
#: log's copy and the memtable flush's copy; compaction moves the disjoint runs without
#: rewriting them (RocksDB wiki, "Compaction", trivial move)
SEQUENTIAL_LSM_WRITE_FACTOR = 2.0


def sequential(access_pattern) -> np.ndarray:
    """Whether each configuration's requests visit keys in order (bool array)."""
    return np.asarray(access_pattern, dtype=object) == "sequential"


def pages_per_key(object_bytes, page_bytes, in_order) -> np.ndarray:
    """Share of a page read one key read costs [-]: ``min(1, object / page)`` in order, else 1.

    ``object_bytes`` [B] is a key's value, ``page_bytes`` [B] the block the store reads;
    ``in_order`` is true where requests are sequential *and* the store keeps key order.
    """
    share = np.minimum(1.0, np.asarray(object_bytes, dtype=float) / np.asarray(page_bytes, dtype=float))
    return np.where(in_order, share, 1.0)


def insert_cpu(saving, in_order) -> np.ndarray:
    """Share of a write's CPU an insert in key order does not spend [-]: ``saving`` (a spec's
    ``ordered_insert_saving``: the memtable's search for the key's place, which an in-order insert
    into a skiplist finds at its end) where ``in_order``, else 0."""
    return np.where(in_order, np.asarray(saving, dtype=float), 0.0)


def range_pages(extra_rows, object_bytes, page_bytes, ordered) -> np.ndarray:
    """Pages the rows of a range or scan beyond its first key add to an operation [count]:
    ``extra_rows x min(1, object / page)`` in a store that keeps key order (the range's rows are
    the next ones on the same and following pages); 0 elsewhere (not modelled: where the rows of
    a range lie in a store that does not keep key order depends on how it was loaded)."""
    share = np.minimum(1.0, np.asarray(object_bytes, dtype=float) / np.asarray(page_bytes, dtype=float))
    return np.where(ordered, np.asarray(extra_rows, dtype=float) * share, 0.0)


def background_write_factor(factor, in_order, lsm) -> np.ndarray:
    """Background bytes written per user byte [-]: an LSM tree's sequential inserts write at most
    :data:`SEQUENTIAL_LSM_WRITE_FACTOR` (``factor`` elsewhere: random keys, a store that does not
    keep key order, or one that is not an LSM tree)."""
    factor = np.asarray(factor, dtype=float)
    return np.where(in_order & lsm, np.minimum(factor, SEQUENTIAL_LSM_WRITE_FACTOR), factor)
