"""Key distributions: which keys a benchmark's requests pick, declared once.

The workload (:class:`perfmodel.Workload`), the figure format (``key_distribution``,
``zipf_s``, ``hot_data_fraction``, ``hot_op_fraction``), the planner and the cache model
(:func:`perfmodel.mechanisms.cache.hit_ratio`) read these names from here.

- ``uniform``: every key equally likely (fio's default ``random_distribution=random``,
  pgbench, sysbench built from master where ``--rand-type`` defaults to uniform).
- ``zipf``: p_i proportional to i^-s over the N keys ranked by popularity: sysbench's
  ``--rand-type=zipfian`` (``--rand-zipfian-exp``, 0.8 by default), memtier's ``--key-pattern Z``.
- ``scrambled_zipf``: YCSB's ``requestdistribution=zipfian`` (its default for workloads A, B, C, E,
  F): ``ScrambledZipfianGenerator`` draws a rank from Zipf(0.99) over :data:`YCSB_RANKS` (1e10)
  ranks and hashes it (FNV-64) onto the N keys, so the ranks beyond N -- a third of the requests
  at N = 5e6, a tenth at 1e9 -- fall evenly on every key: a Zipf head over a uniform floor.
- ``latest``: YCSB's ``SkewedLatestGenerator`` (workload D): Zipf(0.99) over recency, the
  newest key first. For an LRU cache it is taken as ``zipf`` with the same exponent: the keys
  it favours are the ones just written, which the cache holds (an approximation: the ranks
  shift as keys are inserted).
- ``hotspot``: YCSB's ``HotspotIntegerGenerator``: a share ``hot_op_fraction`` of requests
  picks uniformly among the first ``hot_data_fraction`` of the keys, the rest uniformly among
  the others (YCSB defaults 0.8 of operations on 0.2 of the data).
- ``special``: sysbench's ``--rand-type=special``, its *default* in the 1.0 releases
  (``sysbench --help`` of 1.0.20: ``[special]``): a share ``hot_op_fraction`` of requests
  (``--rand-spec-res``, 75%) picks uniformly in the upper 75% of a slice of
  ``hot_data_fraction`` of the key range (``--rand-spec-pct``, 1%) at its centre, so 0.75% of
  the keys; the rest follow the mean of
  ``--rand-spec-iter`` (12) uniform numbers over the whole range, a bell around the centre
  (sysbench src/sb_rand.c, ``sb_rand_special``). So a sysbench 1.0 OLTP run over a table
  larger than the buffer pool still reads mostly from memory.

Access patterns (:data:`ACCESS_PATTERNS`, the workload's ``access_pattern``): the *order* in which
requests visit the keys or offsets, apart from how often each is visited.

- ``random``: each request picks its key (or offset) independently, by the distribution above.
- ``sequential``: requests visit consecutive keys or offsets in order: fio's ``rw=read`` /
  ``write``, sysbench fileio's ``seqrd`` / ``seqwr``, db_bench's ``fillseq`` / ``readseq``,
  ``rados bench seq``, cassandra-stress's ``-pop seq=``. What it changes depends on whether the
  store keeps that order (:mod:`perfmodel.mechanisms.ordering`): a key-ordered store's
  consecutive keys share pages and an LSM tree's sorted runs stop overlapping; a store that
  does not keep key order (a partitioner, CRUSH, a hash table, a heap) scatters them, so to it
  sequential is random.
"""

from __future__ import annotations

KEY_DISTRIBUTIONS = ("uniform", "zipf", "scrambled_zipf", "latest", "hotspot", "special")

#: the order requests visit keys or offsets in (the workload's ``access_pattern``)
ACCESS_PATTERNS = ("random", "sequential")

#: distribution -> (hot_data_fraction, hot_op_fraction) when the workload does not say
#: (YCSB CoreWorkload hotspotdatafraction / hotspotopnfraction; sysbench 1.0 --rand-spec-pct /
#: --rand-spec-res, as shares)
HOT_DEFAULTS = {"hotspot": (0.2, 0.8), "special": (0.01, 0.75)}

#: sysbench's --rand-spec-iter: uniform numbers averaged for the special distribution's bell
SPECIAL_ITERATIONS = 12

#: YCSB's zipfian constant (ZipfianGenerator.ZIPFIAN_CONSTANT), the default Zipf exponent
YCSB_ZIPF_S = 0.99

#: YCSB's ScrambledZipfianGenerator.ITEM_COUNT: the ranks its Zipf draws before hashing onto the keys
YCSB_RANKS = 1e10
