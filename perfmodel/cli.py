"""The ``perfmodel`` command line.

Verbs so far: ``platforms``, ``devices``, ``networks`` (the hardware catalog),
``data`` (recorded benchmark figures), ``predict`` (a workload file on one or
more platforms), ``size`` (node counts per platform for a target and SLO), ``next-run`` (the benchmark
runs worth making next, with their commands, see :mod:`perfmodel.plan.advisor`),
``simulate`` (predict's columns by discrete events, with confidence
intervals and a progress bar), ``ingest`` (benchmark tools' outputs into figures),
``calibrate`` and ``validate`` (fit the
parameters, and report every figure predicted vs recorded) and ``report``
(what ``make run`` runs), ``notebooks list|run`` (the papermill notebooks over
a parameter grid, see :mod:`perfmodel.run.batch`), ``probe`` (this machine as a
platform file, see :mod:`perfmodel.inputs.probe`).
Each verb that prints a table takes ``--format table|csv|json``.

Exit status: 0 done; 1 done, but some notebook runs failed; 2 a bad request (a
usage error, or an input a check rejected: one line ``perfmodel VERB: error:
...`` naming the file and field); 130 interrupted (Ctrl-C), with what was kept.

Each verb imports what it needs when it runs (the evidence pipeline, the simulator, papermill):
a call pays only for its own verb, and ``perfmodel --help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import perfmodel
from perfmodel.evidence import ingest as _ingest
from perfmodel.evidence import recorded as benchmarks
from perfmodel.inputs import catalog, units
from perfmodel.inputs.errors import DataError, UnknownNameError
from perfmodel.inputs.prices import TERMS
from perfmodel.inputs.workload import load_workload_file
from perfmodel.plan.report import PREDICT_TABLE
from perfmodel.plan.report import emit as _emit
from perfmodel.plan.sizing import TARGET_UNITS

FORMATS = ("table", "csv", "json")
#: exit status of a request a check rejected (argparse's usage errors exit 2 as well)
EXIT_BAD_INPUT = 2
#: exit status after Ctrl-C (128 + SIGINT)
EXIT_INTERRUPTED = 130
#: exit status when the reader of the output closed the pipe (128 + SIGPIPE, as a shell reports it)
EXIT_BROKEN_PIPE = 141
#: ``notebooks run`` asks before more runs than this when a person is at the terminal
CONFIRM_RUNS = 20


def _cmd_platforms(args: argparse.Namespace) -> int:
    _emit(catalog.platforms_table(), args.format)
    return 0


def _cmd_devices(args: argparse.Namespace) -> int:
    _emit(catalog.devices_table(), args.format)
    return 0


def _cmd_networks(args: argparse.Namespace) -> int:
    _emit(catalog.networks_table(), args.format)
    return 0


def _figures(path, catalog, option: str):
    """Recorded figures from ``path`` (None: the shipped ones); an error when there are none."""
    frame = benchmarks.load_benchmarks(path, catalog=catalog)
    if frame.empty:
        raise ValueError(f"{option} {path}: holds no figures (a header only?)")
    return frame


def _cmd_data(args: argparse.Namespace) -> int:
    frame = _figures(args.path, _user_catalog(args), "--path")
    if args.list:
        cols = [
            "figure_id",
            "source_id",
            "system",
            "platform_id",
            "operation",
            "level",
            "metric",
            "value",
            "unit",
            "baseline",
        ]
        _emit(frame[cols], args.format)
        return 0
    summary = benchmarks.summarize_benchmarks(frame, by=args.by.split(","))
    _emit(summary, args.format)
    if args.format == "table":
        print(
            f"\n{len(frame)} figures from {frame['source_id'].nunique()} sources "
            f"({int(frame['unit'].map(units.is_relative).sum())} relative) "
            f"in {frame['file'].nunique()} files"
        )
    return 0


def _workload_spec(args: argparse.Namespace) -> dict:
    """The workload file with ``--set KNOB=VALUE`` overrides applied (:func:`.knobs.parse`)."""
    from perfmodel.inputs import knobs as settings

    spec = load_workload_file(args.workload)
    for item in args.set or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--set {item!r}: expected KNOB=VALUE")
        try:
            spec["knobs"][key.strip()] = settings.parse(key.strip(), value)
        except ValueError as exc:
            raise ValueError(f"--set {item!r}: {exc}") from None
    return spec


def _user_catalog(args: argparse.Namespace):
    """The shipped catalog plus every YAML file of each ``--catalog DIR`` (None without one)."""
    from pathlib import Path

    from perfmodel.inputs.catalog import Catalog, default_catalog

    dirs = getattr(args, "catalog", None) or []
    if not dirs:
        return None
    files = []
    for d in dirs:
        path = Path(d)
        if not path.is_dir():
            raise FileNotFoundError(f"--catalog {d}: not a folder of hardware YAML files")
        files += sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml"))
    return Catalog.from_files(files, base=default_catalog(), override=args.override)


def _platforms(args: argparse.Namespace, default=None) -> list:
    """``--platform`` values, the ids of a ``--catalog`` resolved to its platforms."""
    names = args.platform or list(default or [])
    catalog = _user_catalog(args)
    if catalog is None:
        return names
    return [catalog.platforms[n] if n in catalog.platforms else n for n in names]


def _cmd_predict(args: argparse.Namespace) -> int:
    import perfmodel

    spec = _workload_spec(args)
    knobs = spec["knobs"]
    # the grid in chunks through the execution layer: in this process for up to
    # PREDICT_CHUNK configurations, unless --workers or --scheduler say otherwise
    frame = perfmodel.sweep(
        _platforms(args),
        spec["workload"],
        nodes=spec["nodes"],
        system=spec["system"],
        params=args.params,
        scheduler=args.scheduler,
        workers=args.workers,
        progress=True,  # a bar on a terminal, a line every 10 s in a log (long grids only)
        **knobs,
    ).drop(columns="configuration")
    _emit(frame if args.format != "table" else frame[_table_columns(frame)].round(3), args.format)
    if args.format == "table":
        from perfmodel.model.caveats import caveat

        for system in sorted(set(map(str, frame["system"]))):
            print(f"Caveat: {caveat(system, ('throughput', 'mean latency', 'tail latency'))}")
    return 0


def _table_columns(frame, columns=None) -> list[str]:
    """The printed columns: :data:`PREDICT_TABLE`, with the offered load (``arrival_rate``,
    open arrivals) beside the throughput where a row has one -- a saturated row's throughput
    is the capacity, below it."""
    cols = list(columns or PREDICT_TABLE)
    if frame["arrival_rate"].notna().any():
        cols.insert(cols.index("throughput_ops_s"), "arrival_rate")
    return cols


SIMULATE_TABLE = [
    *PREDICT_TABLE[:6],
    "throughput_ops_s_ci_low",
    "throughput_ops_s_ci_high",
    *PREDICT_TABLE[6:10],
    "latency_p99_ms_ci_low",
    "latency_p99_ms_ci_high",
    *PREDICT_TABLE[10:],
    "replications",
    "requests",
]


def _cmd_simulate(args: argparse.Namespace) -> int:
    import perfmodel

    spec = _workload_spec(args)
    knobs = spec["knobs"]
    result = perfmodel.simulate(
        _platforms(args),
        spec["workload"],
        nodes=spec["nodes"],
        system=spec["system"],
        params=args.params,
        requests=args.requests,
        warmup=args.warmup,
        replications=args.replications,
        seed=args.seed,
        keep_records=False,
        scheduler=args.scheduler,
        workers=args.workers,
        **knobs,
    )
    frame = result.summary
    _emit(
        frame if args.format != "table" else frame[_table_columns(frame, SIMULATE_TABLE)].round(3),
        args.format,
    )
    for i, text in enumerate(frame.get("replication_warning", [])):
        if text:
            print(f"configuration {i}: {text}", file=sys.stderr)
    if result.interrupted:
        print("interrupted: the summary covers the replications that finished", file=sys.stderr)
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from perfmodel.evidence.calibration import DEFAULT_FREE, calibrate, save_parameter_set
    from perfmodel.inputs.catalog import Catalog, default_catalog

    if args.out and not Path(args.out).resolve().parent.is_dir():  # before a fit of minutes, not after
        raise FileNotFoundError(f"--out {args.out}: folder {Path(args.out).resolve().parent} does not exist")
    user_catalog = _user_catalog(args)
    if args.platform:
        user_catalog = Catalog.from_files(
            [Path(p) for p in args.platform], base=user_catalog or default_catalog(), override=args.override
        )
    data = _figures(args.data, user_catalog, "--data") if args.data else None
    auto = args.free == "auto" or (args.free is None and data is not None)
    if auto and data is None:
        raise ValueError("--free auto: needs --data (the figures that choose what to fit)")
    start = args.params or ("calibrated" if auto else "default")
    if auto:  # what these figures can pin, from the shipped fit (perfmodel.evidence.identify)
        from perfmodel.evidence.identify import choose_free, fit_start
        from perfmodel.evidence.identify import priors as identify_priors
        from perfmodel.inputs.params import load_parameters

        choice = choose_free(data, load_parameters(start), catalog=user_catalog)
        print("\n".join(choice.lines()) + "\n")
        if not choice.free:
            raise ValueError("--data: these figures pin no parameter; nothing to fit (see above)")
        free = list(choice.free)
        start = fit_start(load_parameters(start), free)  # a lab parameter freed from 0 starts at its start
        priors = None if args.priors == "none" else identify_priors(free, start)
    else:
        free = [k.strip() for k in args.free.split(",") if k.strip()] if args.free else list(DEFAULT_FREE)
        priors = None if args.priors == "none" else "start"
    result = calibrate(
        data,
        params=start,
        free=free,
        priors=priors,
        max_nfev=args.max_evaluations,
        catalog=user_catalog,
    )
    print(result.report())
    if args.out:
        lab = ", ".join(map(str, args.data)) if data is not None else ""  # the user's own runs
        save_parameter_set(result, args.out, lab=lab)
        print(f"\nwrote {args.out}; use it with --params {args.out}")
    return 0


#: the columns ``perfmodel validate`` prints (csv / json: all of them)
VALIDATE_TABLE = ["figure_id", "metric", "bound", "recorded", "predicted", "rel_error", "factor_error",
                  "lower", "upper", "in_band", "converged", "derived", "gap"]  # fmt: skip
VALIDATE_COLUMNS = ["figure_id", "source", "group", "metric", "metric_group", "unit", "bound", "recorded",
                    "predicted", "rel_error", "factor_error", "lower", "upper", "in_band", "lower_50",
                    "upper_50", "in_band_50", "converged", "derived", "gap"]  # fmt: skip


def _validate_split(args: argparse.Namespace, data) -> int:
    """``validate --cv split``: each lab fitted on a third of its figures (perfmodel.evidence.split_cv)."""
    from perfmodel.evidence import split_cv

    if args.cached or args.params or args.start or args.catalog:
        raise ValueError(
            "--cv split: takes --data, --workers and --format only (it starts from the zero-shot set)"
        )
    table = split_cv.run(data, workers=args.workers, scheduler=args.scheduler, progress=True)
    if args.format == "table":
        print(split_cv.markdown(table))
        for lab, why in table.attrs["skipped"].items():
            print(f"# left out: {lab}: {why}")
    else:
        _emit(table, args.format)
    return 0


def _cmd_first_look(args: argparse.Namespace) -> int:
    from perfmodel.evidence import first_look

    if args.take:
        rows = first_look.take(args.take)
        print(f"wrote {len(rows)} rows to {first_look.append(rows)}")
    print("\n".join(first_look.report_lines(first_look.load())))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from perfmodel.evidence import validation

    if args.by_lab:
        from perfmodel.evidence import labs

        if args.cv or args.data or args.params or args.start or args.cached or args.first_look:
            raise ValueError("--by-lab: reports the stored runs by lab alone (no --cv, --data, --params)")
        table = labs.held_out()
        if args.format == "table":
            print(labs.markdown(table))
        else:
            _emit(table, args.format)
        return 0
    if args.first_look:
        from perfmodel.evidence import first_look

        if args.cv or args.data or args.params or args.start or args.cached:
            raise ValueError("--first-look: reports the first-look record alone (no --cv, --data, --params)")
        record = first_look.load()
        if args.format == "table":
            print("\n".join(first_look.report_lines(record)))
        else:
            _emit(record, args.format)
        return 0
    catalog = _user_catalog(args)
    data = _figures(args.data, catalog, "--data") if args.data else None
    if args.cv == "split":
        return _validate_split(args, data)
    if args.cached:
        if args.cv is None or data is not None or args.params or args.start or catalog is not None:
            raise ValueError("--cached: takes --cv and the shipped figures and parameter sets only")
        from perfmodel.evidence.stored_runs import load_cv

        table = load_cv(args.cv)
    else:
        table = validation.validate(
            data,
            params=args.params,
            cv=args.cv,
            start=args.start or "default",
            catalog=catalog,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=True if args.cv else False,
        )
    lines = validation.summary_lines(table)
    if args.format == "csv":
        table[VALIDATE_COLUMNS].to_csv(sys.stdout, index=False)
        for line in lines:
            print(f"# {line}")
    elif args.format == "json":
        import json

        doc = {"figures": json.loads(table[VALIDATE_COLUMNS].to_json(orient="records")), "summary": lines}
        print(json.dumps(doc, indent=1))
    else:
        shown = table[VALIDATE_TABLE].assign(derived=table["derived"].ne("").map({True: "yes", False: ""}))
        _emit(shown.round({"rel_error": 3, "factor_error": 3}), "table")
        print()
        print("\n".join(lines))
        print()
        gaps = validation.gap_report(table)
        for row in gaps.itertuples():
            print(
                f"  {row.gap} ({row.figures} figures, median {row.median_factor_error:.2f}x): {row.mechanism}"
            )
    return 0


def _cmd_ingest(args: argparse.Namespace) -> int:
    import csv
    import os

    fields = {}
    for item in args.set or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {item!r}: expected COLUMN=VALUE")
        fields[key.strip()] = value.strip()
    system = args.system or ""
    if system.endswith((".yaml", ".yml")):  # a spec path: as the written CSV will find it
        base = Path(args.out).resolve().parent if args.out else Path.cwd()
        system = os.path.relpath(Path(system).resolve(), base) if args.out else str(Path(system).resolve())
    catalog, platform = _user_catalog(args), args.platform
    if platform and platform.endswith((".yaml", ".yml")):  # the user's platform file (perfmodel probe's)
        from perfmodel.inputs.catalog import Catalog, default_catalog, load_platform

        mine = load_platform(platform)
        platform = mine.id
        if args.device is None and mine.storage:  # its data drive, unless the run used another
            args.device = mine.storage[0].device
        catalog = Catalog.from_files(
            [Path(args.platform)], base=catalog or default_catalog(), override=args.override
        )
    given = {"system": system, "platform_id": platform, "device_id": args.device, "nodes": args.nodes,
             "network_id": args.network, "variant": args.variant, "source": args.source,
             "source_id": args.source_id, "group": args.lab, "fields": fields}  # fmt: skip
    results = _ingest.ingest_files(args.files, fmt=args.input_format, **given)
    rows = [row for _, done in results for row in done.rows]
    for path, done in results:
        print("\n".join(_ingest.summary_lines(path, done)), file=sys.stderr)
    if not rows:
        raise ValueError("no figures: nothing in these outputs is a figure the model records")
    frame = _ingest.validate_csv(rows, catalog, args.out)
    if args.out:
        print(f"wrote {len(frame)} figures to {args.out}; use them with --data {args.out} "
              "(perfmodel validate, calibrate)", file=sys.stderr)  # fmt: skip
    else:
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return 0


#: the sizing table as printed (feasibility shows as an empty ``reason``)


#: suffixes a planner writes on an amount: 500k, 1.5M, 2G
_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def _amount(text: str, flag: str) -> float:
    """``500k`` -> 5e5, ``1.5M`` -> 1.5e6, ``2e6`` -> 2e6; a ValueError naming the flag otherwise."""
    raw = str(text).strip().replace(",", "").replace("_", "")
    scale = _SUFFIXES.get(raw[-1:], 1.0)
    number = raw[:-1] if raw[-1:] in _SUFFIXES else raw
    try:
        value = float(number) * scale
    except ValueError:
        raise ValueError(f"{flag}: expected a number such as 500000, 500k or 1.5M, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{flag}: must be a number > 0, got {text!r}")
    return value


def _cmd_size(args: argparse.Namespace) -> int:
    from perfmodel.plan.sizing import DEFAULT_PLATFORMS

    spec = _workload_spec(args)
    ranges = _ranges(args.range or [])
    if args.confidence is not None or ranges:
        return _size_uncertain(args, spec, ranges, DEFAULT_PLATFORMS)
    if (args.target_ops is None) == (args.target is None):
        raise ValueError("--target: give one of --target (with --target-unit) and --target-ops")
    knobs = dict(spec["knobs"])
    for name in ("network", "device"):  # a workload file's knob pins every candidate, as the flag does
        flag = getattr(args, name)
        if name in knobs and flag is not None and flag != knobs[name]:
            raise ValueError(f"--{name}: {flag!r}, but the workload file sets {name}: {knobs[name]!r}")
        setattr(args, name, flag if flag is not None else knobs.pop(name, None))
        knobs.pop(name, None)
    target = {"target_ops_s": args.target_ops}
    if args.target is not None:
        target = {"target": _amount(args.target, "--target"), "target_unit": args.target_unit}
    frame = perfmodel.size(
        spec["workload"],
        **target,
        slo_p99_ms=args.slo_p99_ms,
        system=spec["system"],
        platforms=_platforms(args, DEFAULT_PLATFORMS),
        dataset_gib=args.dataset_gib,
        replication_factor=args.rf,
        max_utilization=args.max_utilization,
        failure_tolerance=args.failure_tolerance,
        params=args.params,
        network=args.network,
        device=args.device,
        instances_per_server=args.instances_per_server,
        sync_replicas=args.sync_replicas,
        max_nodes=args.max_nodes,
        interval=args.interval,
        prices=args.prices,
        pricing=_pricing(args),
        **knobs,
    )
    if args.format == "table":
        from perfmodel.plan.sizing_view import table_text

        print(table_text(frame, slo_p99_ms=args.slo_p99_ms))
    else:
        _emit(frame, args.format)
    if args.format == "table":
        from perfmodel.plan import studies

        print()
        print(studies.sizing_conclusion(frame, target_ops_s=frame.attrs["target_ops_s"],
                                        slo_p99_ms=args.slo_p99_ms))  # fmt: skip
        print(f"Caveat: {frame.attrs['caveat']}")
        if frame.attrs.get("range_note"):
            print(f"Range: {frame.attrs['range_note']}")
        if args.prices:
            from perfmodel.plan.sizing_view import cost_text

            print(cost_text(frame))
    return 0


def _ranges(items: list[str]) -> dict:
    """``--range NAME=LOW:HIGH`` or ``--range NAME=pA=X,pB=Y`` -> {name: {low, high} or percentiles}."""
    from perfmodel.plan.uncertain import UNCERTAIN_INPUTS

    out: dict = {}
    for item in items:
        name, sep, spec = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in UNCERTAIN_INPUTS:
            raise ValueError(f"--range {item!r}: expected NAME=LOW:HIGH or NAME=p50=X,p95=Y with NAME one of "
                             f"{', '.join(UNCERTAIN_INPUTS)}")  # fmt: skip
        if ":" in spec:
            low, _, high = spec.partition(":")
            out[name] = {"low": _number(low, item), "high": _number(high, item)}
        else:
            pairs = [p.partition("=") for p in spec.split(",")]
            if any(not sep2 for _, sep2, _ in pairs):
                raise ValueError(f"--range {item!r}: expected LOW:HIGH or pA=X,pB=Y")
            out[name] = {k.strip(): _number(v, item) for k, _, v in pairs}
    return out


def _number(text: str, item: str) -> float:
    try:
        return _amount(text, f"--range {item}") if text.strip()[-1:] in _SUFFIXES else float(text)
    except ValueError:
        raise ValueError(f"--range {item!r}: {text!r} is not a number") from None


def _size_uncertain(args: argparse.Namespace, spec: dict, ranges: dict, defaults) -> int:
    """``perfmodel size`` with ranged inputs or a confidence (perfmodel.plan.uncertain)."""
    from perfmodel.plan import uncertain

    if args.target is not None:
        raise ValueError("--target: with --range / --confidence give the target in ops/s "
                         "(--target-ops, or --range target_ops_s=...)")  # fmt: skip
    if args.target_ops is not None and "target_ops_s" in ranges:
        raise ValueError("--target-ops: given twice (also as --range target_ops_s)")
    if args.target_ops is None and "target_ops_s" not in ranges:
        raise ValueError("--target-ops: give the target (or --range target_ops_s=LOW:HIGH)")
    if args.dataset_gib is not None and "dataset_gib" in ranges:
        raise ValueError("--dataset-gib: given twice (also as --range dataset_gib)")
    knobs = {k: v for k, v in spec["knobs"].items() if k not in ("network", "device")}
    values = {"target_ops_s": args.target_ops, "dataset_gib": args.dataset_gib, **ranges}
    frame = uncertain.size_uncertain(
        spec["workload"], system=spec["system"], slo_p99_ms=args.slo_p99_ms,
        confidence=0.9 if args.confidence is None else args.confidence, samples=args.samples,
        model_error=None if args.model_error == "none" else args.model_error, seed=args.seed,
        progress=args.format == "table" and sys.stderr.isatty(),
        platforms=_platforms(args, defaults), replication_factor=args.rf,
        max_utilization=args.max_utilization, failure_tolerance=args.failure_tolerance, params=args.params,
        network=args.network, device=args.device, instances_per_server=args.instances_per_server,
        sync_replicas=args.sync_replicas, max_nodes=args.max_nodes, prices=args.prices,
        pricing=_pricing(args), **{k: v for k, v in values.items() if v is not None}, **knobs,
    )  # fmt: skip
    if args.format == "table":
        print(uncertain.table_text(frame))
    else:
        _emit(frame, args.format)
    return 0


def _cmd_next_run(args: argparse.Namespace) -> int:
    """``next-run``: the candidate benchmark runs ranked by how much each would narrow the decision."""
    from perfmodel.plan import advisor
    from perfmodel.plan.sizing import DEFAULT_PLATFORMS

    spec = _workload_spec(args)
    knobs = {k: v for k, v in spec["knobs"].items() if k not in ("network", "device")}
    k_f, sep, k_g = args.grid.partition("x")
    if not (sep and k_f.isdigit() and k_g.isdigit() and int(k_f) >= 2 and int(k_g) >= 2):
        raise ValueError(f"--grid: expected KFxKG with each at least 2, such as 7x5, got {args.grid!r}")
    frame = advisor.rank_runs(
        spec["workload"], system=spec["system"], target_ops_s=args.target_ops, slo_p99_ms=args.slo_p99_ms,
        platforms=_platforms(args, DEFAULT_PLATFORMS), measured=args.measured or (),
        confidence=args.confidence, prices=args.prices, pricing=_pricing(args), scenarios=args.scenarios,
        grid=(int(k_f), int(k_g)), seed=args.seed, max_nodes=args.max_nodes, params=args.params, **knobs,
    )  # fmt: skip
    if args.format == "table":
        print(advisor.runs_text(frame, top=args.top))
    else:
        keep = [c for c in frame.columns if c not in ("grid", "prior", "own")]
        shown = frame[keep].head(args.top).copy()
        shown.attrs = {}
        _emit(shown, args.format)
    return 0


def _pricing(args: argparse.Namespace) -> dict:
    """``size``'s ``pricing`` from the flags given (an error when given without ``--prices``)."""
    given = {"term": args.price_term, "horizon_months": args.horizon_months}
    given = {k: v for k, v in given.items() if v is not None}
    if given and not args.prices:
        raise ValueError("--price-term / --horizon-months: give --prices with them")
    return given


def _cmd_probe(args: argparse.Namespace) -> int:
    from perfmodel.inputs import probe

    for name in args.device or []:  # a user's id that is not in the catalog: an error listing the valid ones
        catalog.load_device(name)
    if args.network:
        catalog.load_network(args.network)
    if args.base_ghz is not None and not args.base_ghz > 0:
        raise ValueError(f"--base-ghz: must be the CPU's base clock in GHz (> 0), got {args.base_ghz}")
    choices = probe.Choices(args.id, args.network, tuple(args.device or ()), args.base_ghz)
    draft = probe.probe(args.root, choices, timeout_s=args.timeout)
    out = Path(args.out or f"{draft.entry['id']}.yaml")
    out.write_text(probe.to_yaml(draft), encoding="utf-8")
    print("\n".join(probe.summary_lines(draft)))
    print(f"\nwrote {out}")
    if not draft.complete:
        fill = ", ".join(draft.missing)
        print(
            f"perfmodel probe: error: {out} is a draft: fill {fill}, or rerun with the options named",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    platform = catalog.load_platform(out)
    print(f"{out} loads in the catalog as platform {platform.id}; use it with --platform {out}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from perfmodel.plan.report import main_report

    main_report(full=args.full)
    return 0


def _cmd_notebooks(args: argparse.Namespace) -> int:
    from perfmodel.run import batch

    if args.action == "list":
        for path in batch.list_notebooks():
            names = [k for k in batch.declared_parameters(path) if k != batch.OUTPUT_PARAMETER]
            print(f"{path.name}: {', '.join(names)}")
        return 0
    spec = batch.load_grid(args.grid) if args.grid else {"notebooks": [], "parameters": {}, "grid": {}}
    fixed = dict(spec["parameters"])
    for item in args.parameter or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"-p {item!r}: expected name=value")
        spec["grid"].pop(key, None)
        fixed[key] = batch.parse_value(value)
    notebooks = args.notebook or spec["notebooks"] or [p.name for p in batch.list_notebooks()]
    paths = [batch.resolve_notebook(nb) for nb in notebooks]
    for path in paths:
        print(batch.describe_notebook(path), file=sys.stderr)
    axes = {k: len(v) for k, v in spec["grid"].items() if isinstance(v, list)}
    runs = len(paths) * math.prod(axes.values())
    shape = " x ".join([f"{len(paths)} notebooks"] + [f"{n} {k}" for k, n in axes.items()])
    if args.max_runs < 1:
        raise ValueError(f"--max-runs: must be a whole number >= 1, got {args.max_runs}")
    if runs > args.max_runs:
        raise ValueError(
            f"the grid makes {runs:,} runs ({shape}), more than --max-runs {args.max_runs:,}; "
            "narrow the grid or raise --max-runs"
        )
    print(f"{runs:,} runs ({shape}) into {Path(args.out).resolve()}", file=sys.stderr, flush=True)
    if runs > CONFIRM_RUNS and not args.yes and sys.stdin.isatty():
        answer = input(f"run {runs:,} notebook runs? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing run", file=sys.stderr)
            return 0
    jobs = batch.plan_jobs(
        [str(p) for p in paths],
        batch.expand(spec["grid"], fixed),
        args.out,
        timeout_s=batch.DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout,
        html=not args.no_html,
    )
    from perfmodel.run.execution import Interrupted

    try:
        records = batch.run_batch(
            jobs, args.out, workers=args.workers, scheduler=args.scheduler, force=args.force, progress=True
        )
    except Interrupted as stop:
        finished = sum(stop.done)
        print(
            f"perfmodel notebooks: interrupted: {finished} of {len(stop.done)} runs finished this time "
            f"and are kept ({Path(args.out) / batch.SUMMARY_CSV}); run the same command again to resume "
            "(finished runs are reused)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    failed = [r for r in records if r["status"] != "ok"]
    reused = sum(bool(r["reused"]) for r in records)
    for r in records:
        mark = "reused" if r["reused"] else r["status"]
        html = Path(r["output_dir"]) / Path(r["notebook"]).with_suffix(".html").name
        where = html if html.is_file() else Path(r["output_dir"])
        print(f"{mark:7s} {where}" + (f"  ({r['error']})" if r["error"] else ""))
    timed_out = sum(r["status"] == "timeout" for r in records)
    late = f" ({timed_out} timed out)" if timed_out else ""
    print(
        f"{len(records)} runs: {len(records) - len(failed)} ok ({reused} reused), {len(failed)} failed"
        f"{late}; summary: {Path(args.out) / batch.SUMMARY_CSV}"
    )
    return 1 if failed else 0


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds > 0 (a usage error naming the option otherwise)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def _share(text: str) -> float:
    """An argparse type: a level strictly between 0 and 1 (a usage error naming the option otherwise)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a level in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a level in (0, 1), got {text!r}")
    return value


def _whole(least: int):
    """An argparse type: a whole number >= ``least`` (a usage error naming the option otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, got {text!r}")
        return value

    parse.__name__ = "whole number"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(
        prog="perfmodel",
        description="Performance models and capacity planning for databases and storage "
        "on POWER8, x86 and Kunpeng servers.",
    )
    parser.add_argument("--version", action="version", version=f"perfmodel {perfmodel.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    verbs = (_add_catalog_verbs, _add_data, _add_predict, _add_simulate, _add_calibrate, _add_validate,
             _add_first_look, _add_ingest, _add_probe, _add_size, _add_next_run, _add_notebooks,
             _add_report)  # fmt: skip
    for add in verbs:
        add(sub)
    return parser


def _with_format(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--format", choices=FORMATS, default="table", help="output format")
    return p


def _with_model_inputs(p: argparse.ArgumentParser) -> None:
    """The workload file, platforms, parameter set and knob overrides of ``predict`` and ``simulate``."""
    p.add_argument("workload", help="workload YAML (see data/workloads/)")
    p.add_argument(
        "--platform",
        action="append",
        required=True,
        help="catalog platform id or platform YAML; repeat for several",
    )
    p.add_argument(
        "--params", default=None, help="parameter set name or JSON file (default: the shipped calibrated set)"
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KNOB=VALUE",
        help="override a knob, e.g. --set threads_per_core=4 (repeatable)",
    )


def _add_catalog_verbs(sub) -> None:
    """``platforms``, ``devices``, ``networks``: the hardware catalog."""
    _with_format(sub.add_parser("platforms", help="list the hardware catalog's platforms")).set_defaults(
        func=_cmd_platforms
    )
    _with_format(sub.add_parser("devices", help="list the catalog's storage devices")).set_defaults(
        func=_cmd_devices
    )
    _with_format(sub.add_parser("networks", help="list the catalog's networks")).set_defaults(
        func=_cmd_networks
    )


def _add_data(sub) -> None:
    """``data``: the recorded benchmark figures."""
    data = _with_format(
        sub.add_parser("data", help="summarise recorded benchmark figures by source and metric")
    )
    data.add_argument(
        "--path", default=None, help="a CSV file or folder in the benchmark schema (default: shipped data)"
    )
    data.add_argument(
        "--by",
        default="source_id,metric",
        help="comma-separated columns to group by (default: source_id,metric; also system, family "
        "(platform architecture), collection (seed / corpus))",
    )
    data.add_argument("--list", action="store_true", help="list every figure instead")
    with_catalog(data)
    data.set_defaults(func=_cmd_data)


def _add_predict(sub) -> None:
    """``predict``: the model on a workload file."""
    pred = _with_format(
        sub.add_parser(
            "predict", help="predict throughput, latency percentiles and bottleneck for a workload file"
        )
    )
    _with_model_inputs(pred)
    with_execution(pred)
    with_catalog(pred)
    pred.set_defaults(func=_cmd_predict)


def _add_simulate(sub) -> None:
    """``simulate``: predict's columns by discrete events."""
    simv = _with_format(
        sub.add_parser(
            "simulate",
            help="simulate a workload file by discrete events (predict's columns with confidence intervals)",
        )
    )
    _with_model_inputs(simv)
    simv.add_argument(
        "--requests",
        type=int,
        default=None,
        help="requests per replication (default: at least 100000 and enough for 5 flushes per node)",
    )
    simv.add_argument(
        "--warmup", type=int, default=None, help="warm-up requests per replication (default requests / 10)"
    )
    simv.add_argument(
        "--replications", type=_whole(1), default=5, help="independent replications (default 5)"
    )
    simv.add_argument("--seed", type=_whole(0), default=0, help="random seed (default 0)")
    with_execution(simv)
    with_catalog(simv)
    simv.set_defaults(func=_cmd_simulate)


def _add_calibrate(sub) -> None:
    """``calibrate``: fit the parameters to figures."""
    cal = sub.add_parser("calibrate", help="fit the model's parameters to recorded (or your own) figures")
    cal.add_argument(
        "--data", action="append", help="benchmark CSV file or folder (default: shipped figures)"
    )
    cal.add_argument("--platform", action="append", help="your own platform YAML referenced by --data")
    cal.add_argument(
        "--params",
        default=None,
        help="starting parameter set (default: calibrated with --data, else default: the priors)",
    )
    cal.add_argument(
        "--free",
        default=None,
        help="comma-separated parameters to fit, or auto: those the --data figures move and can tell "
        "apart (default: auto with --data, else the standard list)",
    )
    cal.add_argument(
        "--priors",
        choices=("start", "none"),
        default="start",
        help="log-normal priors around the starting values (default) or none",
    )
    cal.add_argument("--max-evaluations", type=_whole(1), default=60, help="cap on optimiser evaluations")
    cal.add_argument("--out", default=None, help="write the fitted parameter set (JSON) here")
    with_catalog(cal)
    cal.set_defaults(func=_cmd_calibrate)


def _add_validate(sub) -> None:
    """``validate``: predicted vs recorded, in and out of sample."""
    val = _with_format(
        sub.add_parser("validate", help="predicted vs recorded for every figure, with cross-validation")
    )
    val.add_argument(
        "--data", action="append", help="benchmark CSV file or folder (default: shipped figures)"
    )
    val.add_argument(
        "--params",
        default=None,
        help="parameter set validated in-sample (default: the shipped calibrated set)",
    )
    val.add_argument(
        "--cv",
        choices=("group", "loo", "source", "split"),
        default=None,
        help="out of sample: leave one group of sources (a lab) out, leave one figure out, or one source "
        "out; every refit starts from the priors and runs to convergence; or split: each lab with 6 or "
        "more figures fitted on a third of them (what those can pin) and the rest predicted, beside "
        "zero-shot (default: in-sample)",
    )
    val.add_argument(
        "--start", default=None, help="parameter set the refits start from and centre their priors on "
        "(default: default, the documented priors)"
    )  # fmt: skip
    val.add_argument(
        "--cached",
        action="store_true",
        help="with --cv: print the stored run behind docs/validation.md instead of refitting "
        "(checked for staleness; regenerate with `python -m tools.refit`)",
    )
    val.add_argument(
        "--by-lab", action="store_true",
        help="the stored out-of-sample runs by lab, seeds and corpus together: the median of lab medians, "
        "its p90 over labs and the pooled median, by system and metric group",
    )  # fmt: skip
    val.add_argument(
        "--first-look", action="store_true",
        help="report the first-look record: each new source's figures as the model predicted them before "
        "any change (data/validation/first-look.csv), by system, metric group and date",
    )  # fmt: skip
    with_execution(val)
    with_catalog(val)
    val.set_defaults(func=_cmd_validate)


def _add_first_look(sub) -> None:
    """``first-look``: the first-look record."""
    fl = sub.add_parser("first-look", help="record new sources' first look, and print the record")
    fl.add_argument("--take", nargs="+", metavar="SOURCE_ID",
                    help="record these sources' first look (their figures predicted by the model as "
                    "committed; the record is append-only)")  # fmt: skip
    fl.set_defaults(func=_cmd_first_look)


def _add_ingest(sub) -> None:
    """``ingest``: benchmark tools' outputs read into figures (:mod:`perfmodel.evidence.ingest`)."""
    ing = sub.add_parser(
        "ingest", help="read benchmark tools' outputs (fio, sysbench, pgbench, ...) as figures"
    )
    ing.add_argument("files", nargs="+", metavar="FILE", help="tool outputs, one run each")
    formats = ", ".join(_ingest.FORMATS)
    ing.add_argument(
        "--format", dest="input_format", default=None, help=f"their format: {formats} (default: detected)"
    )
    for flag, text in (
        ("--system", "system spec id or YAML (default: the one the tool or the output names)"),
        (
            "--platform",
            "the server: a catalog platform id (perfmodel platforms) or your platform YAML (perfmodel probe)",
        ),
        ("--device", "the data drive: a catalog device id (perfmodel devices)"),
        ("--network", "the network the load crossed: a catalog network id (perfmodel networks)"),
        ("--variant", "a short tag of the configuration"),
        ("--source", "the figures' source (default: the file name)"),
        ("--source-id", "short id of the source (default: the file stem)"),
        ("--lab", "the lab: sources that share one are held out together"),
        ("--out", "write the figures (CSV) here (default: standard output)"),
    ):
        ing.add_argument(flag, default=None, help=text)
    ing.add_argument("--nodes", type=_whole(1), default=None, help="server nodes (default 1)")
    ing.add_argument(
        "--set", action="append", metavar="COLUMN=VALUE", help="a column the output lacks: clients=50"
    )
    with_catalog(ing)
    ing.set_defaults(func=_cmd_ingest)


def _add_size_uncertain(sz: argparse.ArgumentParser) -> None:
    """``perfmodel size``'s flags for ranged inputs (perfmodel.plan.uncertain)."""
    sz.add_argument(
        "--range", action="append", metavar="NAME=SPEC",
        help="an uncertain input: NAME=LOW:HIGH or NAME=p50=X,p95=Y, NAME one of target_ops_s, dataset_gib, "
        "read_fraction, object_bytes (repeatable); answers the count at --confidence",
    )  # fmt: skip
    sz.add_argument(
        "--confidence", type=_share, default=None, metavar="Q",
        help="probability the count must meet the targets with, over the ranges and the model's own error "
        "(default with --range: 0.9)",
    )  # fmt: skip
    sz.add_argument(
        "--samples", type=int, default=48, help="Latin-hypercube samples with --range (default 48)"
    )
    sz.add_argument(
        "--model-error", default="new_lab", choices=["new_lab", "own_lab", "none"],
        help="the model's error added with --range: on a lab it has not seen (default), on a lab "
        "fitted on its own runs, or none",
    )  # fmt: skip
    sz.add_argument("--seed", type=int, default=0, help="sampling seed with --range (default 0)")


def _add_size(sub) -> None:
    """``size``: node counts per platform for a target and an SLO."""
    sz = _with_format(
        sub.add_parser("size", help="minimum nodes per platform for a throughput target and p99 SLO")
    )
    sz.add_argument(
        "workload", help="workload YAML (see data/workloads/); its clients are replaced by the target"
    )
    sz.add_argument("--target-ops", type=float, default=None, help="cluster throughput to sustain [ops/s]")
    sz.add_argument(
        "--interval",
        type=_share,
        default=0.9,
        metavar="Q",
        help="level of the node count's range and the p99 band, in (0, 1) (default 0.9)",
    )
    sz.add_argument(
        "--target", default=None, help="cluster throughput to sustain in --target-unit (500k, 1.5M, 2e6)"
    )
    sz.add_argument(
        "--target-unit", default="ops/s", choices=list(TARGET_UNITS),
        help="unit of --target: ops/s, tps, tpmC (TPC-C New-Order per minute), IOPS, MB/s, GiB/s",
    )  # fmt: skip
    sz.add_argument("--slo-p99-ms", type=float, required=True, help="p99 latency objective [ms]")
    _add_size_uncertain(sz)
    sz.add_argument(
        "--platform", action="append", help="candidate platform id or YAML (default: the catalog's)"
    )
    sz.add_argument("--dataset-gib", type=float, default=None, help="data set before replication [GiB]")
    sz.add_argument("--rf", type=int, default=None, help="replication factor (default: the workload's)")
    sz.add_argument("--max-utilization", type=float, default=0.7, help="highest station utilisation [-]")
    sz.add_argument("--failure-tolerance", type=int, default=1, help="nodes that may fail (N+k)")
    sz.add_argument(
        "--network", default=None, help="network id for every candidate (default: each candidate its own)"
    )
    sz.add_argument(
        "--instances-per-server",
        type=int,
        default=None,
        help="instances per server for a system deployed as instances (Redis, memcached; default: the "
        "count that needs the fewest servers)",
    )
    sz.add_argument(
        "--sync-replicas", type=int, default=0,
        help="replicas a commit waits for, for a primary with replicas (PostgreSQL, MySQL, ...; default 0: "
        "asynchronous)",
    )  # fmt: skip
    sz.add_argument("--max-nodes", type=int, default=128, help="most servers considered (up to 100,000)")
    sz.add_argument(
        "--device", default=None, help="data drive id for every candidate (default: their own NVMe drives)"
    )
    sz.add_argument(
        "--params", default=None, help="parameter set name or JSON file (default: the shipped calibrated set)"
    )
    sz.add_argument(
        "--prices", nargs="?", const="shipped", default=None, metavar="FILE",
        help="add the monthly cost of each plan and mark the cheapest that meets the SLO: the shipped price "
        "tables (data/prices/), or FILE (YAML or CSV in their format) loaded over them",
    )  # fmt: skip
    sz.add_argument(
        "--price-term", choices=list(TERMS), default=None,
        help="cloud price used with --prices (default on_demand)",
    )  # fmt: skip
    sz.add_argument(
        "--horizon-months", type=float, default=None,
        help="average the cost over this many months (on premises: servers replaced every amortisation "
        "period; reserved: every reservation begun paid whole)",
    )  # fmt: skip
    sz.add_argument("--set", action="append", metavar="KNOB=VALUE", help="override a knob (repeatable)")
    with_catalog(sz)
    sz.set_defaults(func=_cmd_size)


def _add_next_run(sub) -> None:
    """``next-run``: the benchmark runs worth making next (perfmodel.plan.advisor)."""
    nr = _with_format(sub.add_parser(
        "next-run", help="rank candidate benchmark runs by how much each would narrow the sizing decision"
    ))  # fmt: skip
    nr.add_argument("workload", help="workload YAML (see data/workloads/)")
    nr.add_argument("--target-ops", type=float, required=True, help="cluster throughput to sustain [ops/s]")
    nr.add_argument("--slo-p99-ms", type=float, required=True, help="p99 latency objective [ms]")
    nr.add_argument(
        "--platform", action="append", help="platform in contention, id or YAML; repeat (default: catalog's)"
    )
    nr.add_argument(
        "--measured", action="append", metavar="PLATFORM",
        help="a platform already calibrated on (its error starts at the own-lab spread); repeatable",
    )  # fmt: skip
    nr.add_argument("--confidence", type=_share, default=0.9, metavar="Q",
                    help="probability the plan bought must meet the targets with (default 0.9)")  # fmt: skip
    nr.add_argument(
        "--prices", nargs="?", const="shipped", default=None, metavar="FILE",
        help="regret in USD/month from the shipped price tables or FILE (without: regret in servers; "
        "platforms without a price are left out)",
    )  # fmt: skip
    nr.add_argument("--price-term", choices=list(TERMS), default=None,
                    help="cloud price used with --prices (default on_demand)")  # fmt: skip
    nr.add_argument("--horizon-months", type=float, default=None, help="average the cost over these months")
    nr.add_argument("--top", type=_whole(1), default=5, help="runs to print (default 5)")
    nr.add_argument("--grid", default="7x5", help="size() grid points on the throughput x tail error (7x5)")
    nr.add_argument("--scenarios", type=_whole(10), default=400, help="Monte Carlo truths (default 400)")
    nr.add_argument("--seed", type=int, default=0, help="Monte Carlo seed (default 0)")
    nr.add_argument("--max-nodes", type=int, default=128, help="most servers considered (up to 100,000)")
    nr.add_argument(
        "--params", default=None, help="parameter set name or JSON file (default: the shipped calibrated set)"
    )
    nr.add_argument("--set", action="append", metavar="KNOB=VALUE", help="override a knob (repeatable)")
    with_catalog(nr)
    nr.set_defaults(func=_cmd_next_run)


def _add_notebooks(sub) -> None:
    """``notebooks list|run``: the papermill notebooks over a grid."""
    nbv = sub.add_parser("notebooks", help="run the papermill notebooks, one run per grid combination")
    nb_actions = nbv.add_subparsers(dest="action", metavar="ACTION", required=True)
    nb_actions.add_parser("list", help="list the notebooks and their parameters")
    nbr = nb_actions.add_parser(
        "run",
        help="execute notebooks over a parameter grid (executed notebook, HTML, results; summary.csv)",
    )
    nbr.add_argument(
        "notebook",
        nargs="*",
        help="notebook names (perfmodel's own copy: 05-sizing) or paths (notebooks/05-sizing.ipynb runs "
        "that file, e.g. a checkout's); default: the grid file's, else all",
    )
    nbr.add_argument("--grid", default=None, help="grid YAML (see notebooks/grids/)")
    nbr.add_argument("--out", default="out/notebooks", help="output folder (default: out/notebooks)")
    nbr.add_argument("--workers", type=_whole(1), default=1, help="notebooks run at once (default 1)")
    nbr.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="run the notebooks on an existing Dask cluster (default: this machine)",
    )
    nbr.add_argument("--force", action="store_true", help="re-run completed runs too")
    nbr.add_argument(
        "-p",
        "--parameter",
        action="append",
        metavar="NAME=VALUE",
        help="a fixed parameter (YAML value: 1e6, [a, b]); overrides the grid file (repeatable)",
    )
    nbr.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit of each run (kernel start, cells, export); a run that reaches it is "
        "stopped and recorded as 'timeout', and the others go on (default 900)",
    )
    nbr.add_argument("--no-html", action="store_true", help="skip the HTML export")
    nbr.add_argument(
        "--max-runs",
        type=int,
        default=1000,
        help="refuse a grid of more runs than this (default 1000)",
    )
    nbr.add_argument(
        "--yes", action="store_true", help=f"do not ask before more than {CONFIRM_RUNS} runs on a terminal"
    )
    nbv.set_defaults(func=_cmd_notebooks)


def _add_report(sub) -> None:
    """``report``: the main report (``make run``)."""
    rep = sub.add_parser("report", help="the main report: the sizing answer first (what `make run` prints)")
    rep.add_argument("--full", action="store_true", help="add every SMT mode, the catalog, the figures and "
                     "the validation after the answer")  # fmt: skip
    rep.set_defaults(func=_cmd_report)


def _add_probe(sub) -> None:
    """``probe``: this machine as a platform file."""
    prb = sub.add_parser("probe", help="write this machine as a platform YAML (lscpu, /proc, /sys, lsblk)")
    prb.add_argument("--out", default=None, metavar="FILE.yaml", help="the file to write (default: ID.yaml)")
    prb.add_argument("--id", default=None, help="the platform's id (default: probe-HOSTNAME)")
    prb.add_argument(
        "--network", metavar="ID", help="catalog network, where no NIC tells its speed (a VM's NIC)"
    )
    prb.add_argument(
        "--device",
        action="append",
        metavar="ID",
        help="catalog device per data drive no device fits (repeatable)",
    )
    prb.add_argument(
        "--base-ghz", type=float, help="the CPU's rated base clock [GHz], where it cannot be read"
    )
    prb.add_argument(
        "--root",
        default="/",
        metavar="DIR",
        help="read a snapshot of /proc and /sys under DIR (no command runs)",
    )
    prb.add_argument(
        "--timeout", type=_seconds, default=10.0, metavar="S", help="limit per command [s] (default 10)"
    )
    prb.set_defaults(func=_cmd_probe)


def with_catalog(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``--catalog DIR``: a folder of the user's hardware YAML (platforms, devices, networks)."""
    parser.add_argument(
        "--catalog",
        action="append",
        metavar="DIR",
        help="add a folder of your own hardware YAML files (platforms, devices, networks; repeatable)",
    )
    parser.add_argument(
        "--override",
        action="store_true",
        help="let --catalog entries replace shipped ones of the same id (refused without it)",
    )
    return parser


def with_execution(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``--scheduler`` / ``--workers``: where the work runs (see :mod:`perfmodel.run.execution`)."""
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="run on an existing Dask cluster (default: this machine); same results either way",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local worker processes (default: the cores; 1: this process)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``perfmodel`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (DataError, UnknownNameError, FileNotFoundError, ValueError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # no repr quotes
        if isinstance(exc, DataError) and len(exc.problems) == 1:  # one problem: one line
            message = exc.problems[0]
        print(f"perfmodel {args.command}: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as stop:
        print(f"perfmodel {args.command}: interrupted ({stop or 'Ctrl-C'})", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader stopped early (`perfmodel data | head`): no traceback
        # Python's recipe: point stdout at /dev/null so the interpreter's final flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
