"""``perfmodel.sweep``: predict or simulate over a large grid, chunked, locally or on Dask.

A sweep takes :func:`perfmodel.predict`'s arguments (arrays make the grid,
e.g. from :func:`perfmodel.grid`) and returns one tidy DataFrame, one row per
configuration in grid order::

    g = perfmodel.grid(cores=range(1, 11), threads_per_core=[1, 2, 4, 8], nodes=[3, 6, 12])
    nodes = g.pop("nodes")
    table = perfmodel.sweep("power8-s821lc-10c", w, system="scylla", nodes=nodes, **g,
                            scheduler="tcp://scheduler:8786")

``method="predict"`` cuts the grid into chunks of ``chunk_size``
configurations (default :data:`PREDICT_CHUNK`); each chunk is one vectorised
``predict`` call and one task of :func:`perfmodel.run.execution.map_tasks`, so a
sweep of 100,000 configurations is 10 tasks, not 100,000. The chunk
boundaries depend on the grid alone, never on the workers, so the numbers
are the same wherever the chunks run. ``method="simulate"`` runs
:func:`perfmodel.simulate` with every (configuration, replication) a task,
seeded from ``(seed, replication)``.

Platform files and parameter sets are read here, on the calling machine, so
Dask workers do not need the user's files.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator

import numpy as np
import pandas as pd

from perfmodel.inputs.catalog import Platform, load_platform
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.workload import Workload
from perfmodel.model.predict import predict
from perfmodel.run.execution import Interrupted, chunk_slices, map_tasks
from perfmodel.sim.run import simulate

METHODS = ("predict", "simulate")
#: configurations per predict task [count]: ~0.1 s of vectorised predict, far above the
#: per-task overhead of a Dask scheduler (~1-2 ms; docs/distributed.md)
PREDICT_CHUNK = 10_000
#: workload fields that may vary per configuration
WORKLOAD_ARRAYS = (
    "read_fraction",
    "object_bytes",
    "dataset_bytes",
    "io_bytes",
    "message_bytes",
    "key_distribution",
    "access_pattern",
    "zipf_s",
    "hot_data_fraction",
    "hot_op_fraction",
    "clients",
    "threads_per_client",
    "iodepth",
    "think_time_s",
    "arrival_rate",
    "replication_factor",
    "consistency",
)


def _object_array(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _resolve_platforms(platform):
    """Catalog ids and YAML paths loaded here (workers may not have the files)."""
    if isinstance(platform, list | tuple | np.ndarray):
        loaded: dict = {}
        for p in np.ravel(np.asarray(platform, dtype=object)):
            if not isinstance(p, Platform) and str(p) not in loaded:
                loaded[str(p)] = load_platform(p)
        items = [
            p if isinstance(p, Platform) else loaded[str(p)]
            for p in np.ravel(np.asarray(platform, dtype=object))
        ]
        return _object_array(items).reshape(np.shape(platform))
    return platform if isinstance(platform, Platform) else load_platform(platform)


def flatten_grid(values: dict) -> tuple[int, dict]:
    """Broadcast the array-valued entries to one shape and flatten them; scalars stay.

    Returns the number of configurations and the entries (arrays of that
    length, or scalars shared by every configuration).

    >>> n, flat = flatten_grid({"a": [[1], [2]], "b": [10, 20, 30], "c": 5})
    >>> n, flat["a"].tolist(), flat["b"].tolist(), flat["c"]
    (6, [1, 1, 1, 2, 2, 2], [10, 20, 30, 10, 20, 30], 5)
    """
    arrays = {k: np.asarray(v) for k, v in values.items() if np.ndim(v) > 0}
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in arrays.items())
        raise ValueError(f"arguments do not broadcast: {shapes}") from None
    n = int(np.prod(shape)) if shape else 1
    return n, {k: np.broadcast_to(arrays[k], shape).ravel() if k in arrays else v for k, v in values.items()}


def _take(flat: dict, where: slice) -> dict:
    return {k: v[where] if isinstance(v, np.ndarray) else v for k, v in flat.items()}


def _predict_chunk(task: dict) -> pd.DataFrame:
    """One task: a vectorised ``predict`` over a chunk of the grid."""

    inputs = dict(task["inputs"])
    platform, nodes, system = inputs.pop("platform"), inputs.pop("nodes"), inputs.pop("system")
    fields = {k[len("workload.") :]: inputs.pop(k) for k in list(inputs) if k.startswith("workload.")}
    workload = dataclasses.replace(task["workload"], **fields) if fields else task["workload"]
    if isinstance(platform, np.ndarray):
        platform = list(platform)
    return predict(platform, workload, nodes=nodes, system=system, params=task["params"], **inputs)


def concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Row-bind chunk results; categorical columns stay categorical (categories united)."""
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    for name, dtype in frames[0].dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype):
            out[name] = pd.api.types.union_categoricals([f[name] for f in frames])
    return out


def _input_columns(flat: dict, rows: np.ndarray, frame: pd.DataFrame) -> dict:
    """The grid's varying inputs (at positions ``rows``) that the result does not show, as columns."""
    cols = {}
    for key, value in flat.items():
        name = key.removeprefix("workload.")
        if not isinstance(value, np.ndarray) or name in frame.columns:
            continue
        value = value[rows]
        if value.dtype == object:
            value = np.array([v.id if isinstance(v, Platform) else v for v in value])
        cols[name] = value
    return cols


def sweep(
    platform,
    workload: Workload,
    *,
    system,
    nodes=1,
    params=None,
    method: str = "predict",
    chunk_size: int | None = None,
    scheduler=None,
    workers: int | None = None,
    progress: bool | None = None,
    requests: int | None = None,
    warmup: int | None = None,
    replications: int = 5,
    seed: int = 0,
    engine: str = "auto",
    family: str = "gamma",
    level: float = 0.95,
    **knobs,
) -> pd.DataFrame:
    """Predict or simulate every configuration of a grid; one row per configuration.

    Parameters
    ----------
    platform, workload, system, nodes, params, **knobs
        As for :func:`perfmodel.predict`; arrays (and workload fields that
        are arrays) broadcast to the grid.
    method : ``predict`` (analytic, chunked) or ``simulate`` (discrete events).
    chunk_size : configurations per predict task [count] (default
        :data:`PREDICT_CHUNK`); ignored by ``simulate`` (one task per
        replication, grouped by the execution layer).
    scheduler, workers, progress : where and how the tasks run (see
        :func:`perfmodel.run.execution.map_tasks`): ``scheduler="tcp://host:port"``
        an existing Dask cluster, else ``workers`` local processes (``1``:
        this process).
    requests, warmup, replications, seed, engine, family, level
        ``simulate`` only: as for :func:`perfmodel.simulate`.

    Returns
    -------
    DataFrame: ``configuration`` (the grid position), the varying inputs the
    method's columns do not already show, then the method's columns
    (``predict``'s, or ``simulate``'s summary with confidence intervals).
    ``attrs["interrupted"]`` is True when Ctrl-C stopped the run; the rows
    that finished are kept.
    """
    if method not in METHODS:
        raise ValueError(f"method: must be one of {', '.join(METHODS)}, got {method!r}")
    n, flat, params = _flat_grid(platform, workload, system, nodes, params, knobs)
    run = {"scheduler": scheduler, "workers": workers, "progress": progress}
    if method == "simulate":
        options = {
            "requests": requests,
            "warmup": warmup,
            "replications": replications,
            "seed": seed,
            "engine": engine,
            "family": family,
            "level": level,
        }
        frame, interrupted = _simulate(flat, workload, params, options, run)
        rows = np.arange(n)
    else:
        frame, rows, interrupted = _predict(flat, n, workload, params, chunk_size, run)
    for name, values in reversed(_input_columns(flat, rows, frame).items()):
        frame.insert(0, name, values)
    frame.insert(0, "configuration", rows)
    frame.attrs["interrupted"] = interrupted
    if interrupted:
        print("interrupted: the table covers the configurations that finished", file=sys.stderr)
    return frame


def iter_sweep(
    platform, workload: Workload, *, system, nodes=1, params=None, chunk_size: int | None = None, **knobs
) -> Iterator[pd.DataFrame]:
    """:func:`sweep` with ``method="predict"``, one chunk at a time in grid order, in this process.

    Each yielded frame has the columns :func:`sweep` returns, for ``chunk_size`` configurations
    (default :data:`PREDICT_CHUNK`), so memory stays that of one chunk whatever the grid's size:
    write each chunk out or reduce it (``benchmarks/bench_predict.py`` streams 1,000,000
    configurations). Concatenated, the chunks equal :func:`sweep`'s table.
    """
    n, flat, params = _flat_grid(platform, workload, system, nodes, params, knobs)
    for where in chunk_slices(n, PREDICT_CHUNK if chunk_size is None else int(chunk_size)):
        frame = _predict_chunk({"inputs": _take(flat, where), "workload": workload, "params": params})
        rows = np.arange(where.start, where.stop)
        for name, values in reversed(_input_columns(_take(flat, where), rows - where.start, frame).items()):
            frame.insert(0, name, values)
        frame.insert(0, "configuration", rows)
        yield frame


def _flat_grid(platform, workload, system, nodes, params, knobs):
    """The grid flattened (:func:`flatten_grid`) with platforms and parameters loaded here."""
    platform = _resolve_platforms(platform)
    if type(params).__name__ != "CalibrationResult":
        params = load_parameters(params)
    varying = {
        f"workload.{name}": getattr(workload, name)
        for name in WORKLOAD_ARRAYS
        if np.ndim(getattr(workload, name)) > 0
    }
    n, flat = flatten_grid({"platform": platform, "nodes": nodes, "system": system, **knobs, **varying})
    return n, flat, params


def _predict(flat, n, workload, params, chunk_size, run):
    """Chunks of the grid through the execution layer -> (frame, grid positions, interrupted)."""
    size = PREDICT_CHUNK if chunk_size is None else int(chunk_size)
    where = chunk_slices(n, size)
    tasks = [{"inputs": _take(flat, w), "workload": workload, "params": params} for w in where]
    try:
        frames = map_tasks(_predict_chunk, tasks, chunk_size=1, desc="predict", unit="chunk", **run)
        done = [True] * len(frames)
    except Interrupted as stop:
        if not any(stop.done):
            raise KeyboardInterrupt from None
        frames, done = stop.results, stop.done
    kept = [f for f, ok in zip(frames, done, strict=True) if ok]
    rows = np.concatenate([np.arange(w.start, w.stop) for w, ok in zip(where, done, strict=True) if ok])
    return concat_frames(kept), rows, not all(done)


def _simulate(flat, workload, params, options, run):

    inputs = dict(flat)
    platform, nodes, system = inputs.pop("platform"), inputs.pop("nodes"), inputs.pop("system")
    fields = {k[len("workload.") :]: inputs.pop(k) for k in list(inputs) if k.startswith("workload.")}
    workload = workload.with_changes(**fields) if fields else workload
    result = simulate(
        list(platform) if isinstance(platform, np.ndarray) else platform,
        workload,
        nodes=nodes,
        system=system,
        params=params,
        **options,
        keep_records=False,
        **run,
        **inputs,
    )
    return result.summary, result.interrupted
