"""One execution layer: run independent tasks in-process, in local worker processes, or on Dask.

Every parallel workload of perfmodel -- parameter sweeps (:func:`perfmodel.sweep`),
simulation replications (:func:`perfmodel.simulate`), leave-one-out refits and
notebook batches -- goes through :func:`map_tasks`::

    results = map_tasks(fn, tasks, scheduler=None, workers=None, progress=None, desc="refits")

``fn`` is a top-level (picklable) function of one argument; ``tasks`` a
sequence; the result is ``[fn(t) for t in tasks]``, in task order, whatever
ran where. The backend is chosen by :func:`choose_backend`:

* ``workers=1`` (or a single task, or already inside a worker): a plain loop
  in this process, nothing spawned;
* otherwise, without ``scheduler``: a local pool of ``workers`` processes
  (default: the cores this process may use). It is a
  :class:`concurrent.futures.ProcessPoolExecutor` whose processes are forked
  from a *fork server* that has imported perfmodel once (measured on this
  2-core machine: 0.45 s for the first pool of a session, 20 ms for later
  ones, 0.1 ms per task; a Dask ``LocalCluster`` takes 0.5 s to start,
  0.2-0.3 s to close and 1.8 ms per task -- see ``docs/distributed.md``);
* ``scheduler="tcp://host:port"``: an existing Dask cluster, through
  :class:`distributed.Client` (a ``Client`` object is accepted too and left
  open); ``scheduler="local"``: a throw-away Dask ``LocalCluster`` of
  ``workers`` processes (for its dashboard).

Tasks are grouped ``chunk_size`` to a scheduled unit on the parallel backends
(default :func:`auto_chunk_size`: about four units per worker), so the
scheduler sees few, larger units; each task is still one call of ``fn``, so
grouping never changes a result. Seed tasks from their identity, never from
where or when they ran (:func:`task_rng`); then serial, local and distributed
runs give identical numbers.

Faults: a local worker process that dies breaks the pool; the layer starts a
new one and resubmits the unfinished units (up to ``retries`` times). On Dask
a lost worker's units are rescheduled by the scheduler, and exceptions are
retried ``retries`` times (``Client.submit(retries=)``). A task may therefore
*run* more than once (make it idempotent: notebook runs write to a fixed
folder), but each result is *taken* once, and results gathered before a fault
are kept. Ctrl-C cancels what is queued, stops local workers and raises
:class:`Interrupted` (a ``KeyboardInterrupt``) holding the results finished so
far.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

BACKENDS = ("serial", "processes", "dask")
ERRORS = ("raise", "return")
#: units of work per worker the default grouping aims at (load balance vs per-unit overhead)
UNITS_PER_WORKER = 4
#: modules the local fork server imports once, so that forked workers start warm
PRELOAD = ("perfmodel.model.predict", "perfmodel.sim")

#: how long to wait for a first worker on a cluster that has none [s]
WAIT_FOR_WORKERS_S = 60.0

_IN_WORKER = False


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`map_tasks`.

    ``results``: one entry per task, ``None`` where the task did not finish;
    ``done``: which tasks finished (a result can itself be ``None``).
    """

    def __init__(self, results: list, done: list[bool]):
        super().__init__(f"interrupted after {sum(done)} of {len(done)} tasks")
        self.results = results
        self.done = done


# ------------------------------------------------------------------------------------------
# pure helpers
# ------------------------------------------------------------------------------------------


def available_cores() -> int:
    """Cores this process may run on [count] (the CPU affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def task_rng(seed: int, *key: int) -> np.random.Generator:
    """The generator of the task identified by ``key``: ``SeedSequence(seed, spawn_key=key)``.

    Depends only on the base seed and the task's identity (e.g. its
    replication index), never on the worker or the order of execution.
    """
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=tuple(int(k) for k in key)))


def chunk_slices(n: int, size: int) -> list[slice]:
    """Consecutive slices of at most ``size`` items covering ``range(n)``.

    >>> chunk_slices(5, 2)
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    if size < 1:
        raise ValueError(f"chunk size: must be >= 1, got {size}")
    return [slice(lo, min(lo + size, n)) for lo in range(0, n, size)]


def auto_chunk_size(n_tasks: int, workers: int, units_per_worker: int = UNITS_PER_WORKER) -> int:
    """Tasks per scheduled unit: the largest grouping that still gives each worker
    ``units_per_worker`` units (so a slow unit or a lost worker costs little).

    >>> auto_chunk_size(400, 2)
    50
    >>> auto_chunk_size(400, 100)
    1
    """
    return max(1, math.ceil(n_tasks / (max(1, workers) * units_per_worker)))


def is_address(scheduler) -> bool:
    """True for a Dask scheduler address (``tcp://host:port``, ``tls://...``, ``host:port``)."""
    if not isinstance(scheduler, str) or scheduler == "local":
        return False
    if "://" in scheduler:
        return True
    host, sep, port = scheduler.rpartition(":")
    return bool(sep and host and port.isdigit())


def choose_backend(n_tasks: int, scheduler=None, workers: int | None = None) -> tuple[str, int | None]:
    """``(backend, workers)`` for a run of ``n_tasks`` (workers ``None``: the cluster's).

    ``serial`` when one worker is asked for, there is at most one task, or
    this process already is a worker (no nested pools); ``dask`` for a
    scheduler address, a ``distributed.Client`` or ``"local"``; else
    ``processes`` with ``workers`` (default: the available cores), at most
    one per task.
    """
    if workers is not None and (isinstance(workers, bool) or int(workers) != workers or workers < 1):
        raise ValueError(f"workers: must be a whole number >= 1, got {workers!r}")
    if scheduler is not None:
        if scheduler == "local":
            return "dask", int(workers or available_cores())
        if is_address(scheduler) or type(scheduler).__name__ == "Client":
            return "dask", None
        raise ValueError(
            f"scheduler: expected a Dask address such as tcp://host:8786, 'local' or a "
            f"distributed.Client, got {scheduler!r}"
        )
    if workers == 1 or n_tasks <= 1 or _inside_worker():
        return "serial", 1
    if not _main_is_importable():
        warnings.warn(
            "worker processes cannot start from a script read from standard input (they import "
            "__main__ from its file): running in this process; save the script to a file to use "
            "local workers",
            RuntimeWarning,
            stacklevel=3,
        )
        return "serial", 1
    return "processes", int(min(workers or available_cores(), n_tasks))


def _main_is_importable() -> bool:
    """False when ``__main__`` names a file that does not exist (``python - < script``).

    Local workers (fork server and spawn) re-import ``__main__`` from its file;
    ``python -c``, notebooks and ``python -m`` have no such file and are fine.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(getattr(main, "__spec__", None), "name", None):
        return True
    return os.path.exists(path)


def _inside_worker() -> bool:
    if _IN_WORKER:
        return True
    if "distributed" in sys.modules:
        try:
            sys.modules["distributed"].get_worker()
            return True
        except ValueError:
            return False
    return False


# ------------------------------------------------------------------------------------------
# the entry point
# ------------------------------------------------------------------------------------------


def map_tasks(
    fn: Callable[[Any], Any],
    tasks: Sequence,
    *,
    scheduler=None,
    workers: int | None = None,
    chunk_size: int | None = None,
    min_chunk: int = 1,
    progress: bool | None = None,
    desc: str = "tasks",
    unit: str = "task",
    retries: int = 2,
    errors: str = "raise",
) -> list:
    """``[fn(t) for t in tasks]``, run in-process, in local processes or on a Dask cluster.

    Parameters
    ----------
    fn : a top-level function of one argument (pickled by reference: Dask
        workers must be able to import it, i.e. have perfmodel installed).
    tasks : the arguments, one per task (picklable).
    scheduler : ``None`` (local), ``"tcp://host:port"`` (an existing Dask
        scheduler), ``"local"`` (a throw-away Dask LocalCluster) or a
        ``distributed.Client``.
    workers : local worker processes (default: the available cores; ``1``:
        in this process, nothing spawned). Ignored for an existing cluster.
    chunk_size : tasks per scheduled unit (default :func:`auto_chunk_size`,
        at least ``min_chunk``). Never changes a result, only the overhead.
    min_chunk : the fewest tasks per unit with the default grouping: make a
        unit last >= ~0.3 s when tasks are tiny (per-unit overhead: 0.2 ms
        on the local pool, 2-4 ms on Dask; ``docs/distributed.md``).
    progress : a tqdm bar over tasks where stderr is a terminal, else a line every
        10 s once the work has lasted that long (:class:`LineProgress`); default
        on; with Dask the dashboard link is printed too.
    desc, unit : the bar's label and unit.
    retries : restarts of a broken local pool; on Dask, retries of a failed
        unit (a lost worker's units are rescheduled by Dask regardless).
    errors : ``"raise"`` (cancel the rest and raise the first task's
        exception) or ``"return"`` (put the exception in that task's place).

    Returns
    -------
    list of the results, in task order.

    Raises
    ------
    Interrupted : Ctrl-C; ``.results`` / ``.done`` keep what finished.
    """
    if errors not in ERRORS:
        raise ValueError(f"errors: must be one of {', '.join(ERRORS)}, got {errors!r}")
    tasks = list(tasks)
    backend, n_workers = choose_backend(len(tasks), scheduler, workers)
    show = True if progress is None else bool(progress)
    run = _Run(fn, tasks, errors)
    with _bar(len(tasks), show, desc, unit) as bar:
        run.bar = bar
        if backend == "serial":
            run.serial()
        elif backend == "processes":
            size = chunk_size or max(min_chunk, auto_chunk_size(len(tasks), n_workers))
            run.processes(n_workers, chunk_slices(len(tasks), size), retries)
        else:
            with _dask_client(scheduler, n_workers) as client:
                if show:
                    print(_cluster_line(client), file=sys.stderr, flush=True)
                size = chunk_size or max(min_chunk, auto_chunk_size(len(tasks), _cluster_workers(client)))
                run.dask(client, chunk_slices(len(tasks), size), retries, desc)
    return run.results


def run_chunk(fn: Callable[[Any], Any], chunk: Sequence, errors: str = "raise") -> list:
    """One scheduled unit: ``fn`` over its tasks, in order (exceptions returned with ``errors="return"``)."""
    if errors == "raise":
        return [fn(task) for task in chunk]
    out = []
    for task in chunk:
        try:
            out.append(fn(task))
        except Exception as exc:  # noqa: BLE001 -- returned to the caller in the task's place
            out.append(exc)
    return out


class _Box:
    """Holds a unit's tasks so that Dask ships them as one opaque object (no graph parsing)."""

    __slots__ = ("tasks",)

    def __init__(self, tasks):
        self.tasks = tasks


def _run_box(box: _Box, fn, errors: str) -> list:
    return run_chunk(fn, box.tasks, errors)


class _Run:
    """Results of one :func:`map_tasks` call, filled once per task whatever the backend."""

    def __init__(self, fn, tasks: list, errors: str):
        self.fn, self.tasks, self.errors = fn, tasks, errors
        self.results: list = [None] * len(tasks)
        self.done = [False] * len(tasks)
        self.bar = None

    def take(self, where: slice, values: list) -> None:
        for i, value in zip(range(where.start, where.stop), values, strict=True):
            if self.done[i]:  # a unit that ran twice (rescheduled after a fault) counts once
                continue
            self.results[i], self.done[i] = value, True
            self.bar.update(1)

    def interrupted(self) -> Interrupted:
        return Interrupted(self.results, self.done)

    # --------------------------------------------------------------- in this process
    def serial(self) -> None:
        try:
            for i, task in enumerate(self.tasks):
                self.take(slice(i, i + 1), run_chunk(self.fn, [task], self.errors))
        except KeyboardInterrupt:
            raise self.interrupted() from None

    # --------------------------------------------------------------- local processes
    def processes(self, workers: int, units: list[slice], retries: int) -> None:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        todo = list(units)
        for attempt in range(retries + 1):
            pool = _local_pool(workers, self.fn)
            try:
                futures = {pool.submit(run_chunk, self.fn, self.tasks[u], self.errors): u for u in todo}
                pending = set(futures)
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        try:
                            values = future.result()
                        except BrokenProcessPool:
                            continue  # resubmitted below, unless out of retries
                        self.take(futures[future], values)
                pool.shutdown(wait=True)
            except KeyboardInterrupt:
                _stop_pool(pool)
                raise self.interrupted() from None
            except BaseException:
                _stop_pool(pool)
                raise
            todo = [u for u in todo if not all(self.done[u])]
            if not todo:
                return
            if attempt == retries:
                hint = ""
                if not any(self.done) and getattr(sys.modules.get("__main__"), "__file__", None):
                    hint = (
                        "; worker processes import your script first: put the calls under "
                        "`if __name__ == '__main__':`, or pass workers=1 to run in this process"
                    )
                broken = BrokenProcessPool(
                    f"a worker process died {retries + 1} times; {sum(self.done)} of "
                    f"{len(self.done)} tasks finished{hint}"
                )
                if self.errors == "raise":
                    raise broken
                for u in todo:  # errors="return": the unfinished tasks get the error in their place
                    self.take(u, [None if self.done[i] else broken for i in range(u.start, u.stop)])
                return

    # --------------------------------------------------------------- Dask
    def dask(self, client, units: list[slice], retries: int, desc: str) -> None:
        from distributed import as_completed

        token = uuid.uuid4().hex[:8]
        keys = [f"perfmodel-{desc}-{token}-{k}" for k in range(len(units))]
        boxes = [_Box(self.tasks[u]) for u in units]
        futures = client.map(
            _run_box, boxes, fn=self.fn, errors=self.errors, key=keys, pure=False, retries=retries
        )
        unit_of = {f.key: u for f, u in zip(futures, units, strict=True)}
        try:
            for batch in as_completed(futures).batches():
                good = [f for f in batch if f.status == "finished"]
                for f in batch:
                    if f.status != "finished":  # erred after its retries (or cancelled)
                        exc = f.exception()
                        if self.errors == "raise":
                            raise exc
                        where = unit_of[f.key]
                        self.take(where, [exc] * (where.stop - where.start))
                for f, values in zip(good, client.gather(good), strict=True):
                    self.take(unit_of[f.key], values)
                    f.release()  # gathered: a later fault cannot make Dask recompute it
        except KeyboardInterrupt:
            client.cancel(futures)
            raise self.interrupted() from None
        except BaseException:
            client.cancel(futures)
            raise


# ------------------------------------------------------------------------------------------
# backends
# ------------------------------------------------------------------------------------------


def _worker_init() -> None:
    """Local worker start-up: Ctrl-C is the parent's to handle; no nested pools."""
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _local_pool(workers: int, fn):
    """A process pool; on POSIX its processes fork from a server that imported perfmodel once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        module = getattr(fn, "__module__", None)
        extra = [module] if module and module != "__main__" and module.split(".")[0] == "perfmodel" else []
        # only takes effect before the session's fork server starts (it then stays up)
        context.set_forkserver_preload(["__main__", *PRELOAD, *extra])
    else:  # Windows
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_init)


def _stop_pool(pool) -> None:
    """Cancel queued work and stop the workers now (a running task is abandoned)."""
    # ProcessPoolExecutor has no public terminate before Python 3.14: its process table
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


class _dask_client:
    """Context manager: a ``distributed.Client`` to the cluster (closed on exit unless given)."""

    def __init__(self, scheduler, workers: int | None):
        self.scheduler, self.workers = scheduler, workers
        self.client = self.cluster = None
        self.owned = True

    def __enter__(self):
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise ValueError("scheduler: needs the 'distributed' package (pip install distributed)") from exc
        if type(self.scheduler).__name__ == "Client":
            self.client, self.owned = self.scheduler, False
        elif self.scheduler == "local":
            # ":0": a free port (the default 8787 may be taken, and Dask then warns)
            self.cluster = LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(self.scheduler, timeout="10s")
            except OSError as exc:
                raise ValueError(f"scheduler {self.scheduler!r}: cannot connect ({exc})") from None
        if not _cluster_workers(self.client):
            try:
                self.client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS_S)
            except TimeoutError:
                self.__exit__()
                raise ValueError(
                    f"scheduler {self.scheduler!r}: no worker joined within {WAIT_FOR_WORKERS_S:g} s"
                ) from None
        return self.client

    def __exit__(self, *exc):
        if self.owned:
            self.client.close()
            if self.cluster is not None:
                self.cluster.close()
        return False


def _cluster_workers(client) -> int:
    return len(client.scheduler_info().get("workers", {}))


def _cluster_line(client) -> str:
    """What is printed when a cluster is used: its address, workers and dashboard link."""
    info = client.scheduler_info()
    link = client.dashboard_link if "dashboard" in info.get("services", {}) else "none (install bokeh)"
    workers = len(info.get("workers", {}))
    return f"Dask cluster {info.get('address', '?')}: {workers} workers, dashboard {link}"


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class LineProgress:
    """Progress for a log (stderr not a terminal): one line every ``every_s`` seconds.

    Silent for work shorter than ``every_s``; otherwise ``desc: k / N unit (p%), t s
    elapsed, about r s left`` every ``every_s`` seconds and once at the end.
    """

    def __init__(self, total: int, desc: str, unit: str, every_s: float = 10.0, stream=None):
        self.total, self.desc, self.unit, self.every_s = total, desc, unit, every_s
        self.stream = stream if stream is not None else sys.stderr
        self.n = 0
        self.start = self.last = time.monotonic()
        self.printed = False

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self._line(now)

    def _line(self, now: float) -> None:
        elapsed = now - self.start
        share = self.n / self.total if self.total else 1.0
        left = f", about {elapsed / share - elapsed:,.0f} s left" if 0 < share < 1 else ""
        print(
            f"{self.desc}: {self.n:,} / {self.total:,} {self.unit}s ({share:.0%}), "
            f"{elapsed:,.0f} s elapsed{left}",
            file=self.stream,
            flush=True,
        )
        self.last, self.printed = now, True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.printed:
            self._line(time.monotonic())
        return False


def _bar(total: int, show: bool, desc: str, unit: str):
    if not show:
        return _NoBar()
    if not sys.stderr.isatty():
        return LineProgress(total, desc, unit)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit)
