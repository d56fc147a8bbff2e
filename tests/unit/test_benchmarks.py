"""Recorded benchmark figures: completeness against the seeds, schema checks, bad input."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pandas as pd
import pytest

import perfmodel
from perfmodel.evidence import recorded as bm
from perfmodel.inputs.errors import DataError

DATA = Path(bm.data_dir()) / "benchmarks"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return perfmodel.load_benchmarks()


def _raw_rows(prefix: str = "") -> list[dict]:
    rows = []
    for path in sorted(DATA.glob(f"{prefix}*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            rows.extend(csv.DictReader(handle))
    return rows


# Minimum rows per source: every measured number the source prints (counted by
# hand from each document) -- a source below this has lost figures.
MIN_ROWS = {
    "seed000": 15,  # 3 ratios (Figure 1 text) + 12 latency percentiles (Table 3)
    "seed001": 11,  # 2 phase-1 rates, 2 iostat samples, 2 x 3 phase-2 results, 1 iostat bound
    "seed002": 14,  # ratios vs bare metal, fio/TPC-C gains, NUMA, max tpmC, NIC, log files
    "seed003": 25,  # trace summary table (12), throughput, IOPS, latency, queue depth
    "seed004": 48,  # Table 1 (6), Tables 2, 3, Optane (3 x 12), Benchmark 1 and 2 text
    "ctx-ibm-scylla": 6,
    "ctx-ceph-part1": 12,
    "ctx-ceph-part2": 48,
}


def test_every_source_is_fully_represented(frame):
    counts = frame[frame["collection"] == "seed"].groupby("source_id").size().to_dict()
    assert set(counts) == set(MIN_ROWS)
    for source, minimum in MIN_ROWS.items():
        assert counts[source] >= minimum, f"{source}: {counts[source]} rows < {minimum}"
    assert len(frame) > 150


def test_context_file_rows_are_all_present_with_equal_values(frame, shared_dir):
    with (shared_dir / "data" / "seed-context-figures.csv").open(encoding="utf-8") as handle:
        context = list(csv.DictReader(handle))
    ours = frame.set_index("figure_id")
    for row in context:
        assert row["id"] in ours.index, row["id"]
        assert ours.loc[row["id"], "value"] == float(row["value"]), row["id"]
        assert ours.loc[row["id"], "source"] == row["source"]


# --- every number of a seed is a row, and every row's number is in its seed -------

_MEASURE = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s*"
    r"(%|倍|MB/s|GB/s|ms|毫秒|micros/op|ops/sec|min|k IOPs|IOPs|TPM|GB|MB)",
    re.IGNORECASE,
)

# Measurement-looking numbers in the seeds that are configuration, not figures;
# they live in configuration columns or the hardware catalog instead.
NOT_FIGURES = {
    "000": {
        "12": "dataset size (dataset_gb)",
        "40": "network speed (catalog)",
        "95": "definition of the 95th percentile",
    },
    "001": {"128": "host memory (catalog)", "6": "SATA line rate 6 Gb/s (catalog)"},
    "002": {
        "96": "VM memory",
        "90": "memory pool setting / 'hit ratio above 90%' advice",
        "70": "BUFFER setting",
        "12": "RECYCLE setting",
        "50": "share of one server used by the VM (configuration)",
    },
    "003": {},
    "004": {
        "60": "extra hardware in Part 3 (in the notes of seed004-recap-part3-5-vs-3-nodes)",
        "70": "read share of the 70/30 mix (read_fraction)",
        "2": "replica count",
        "3": "replica count",
        "8": "cache size (cache_gb)",
    },
}

# Rows whose value encodes a statement without that number in the text.
ENCODED = {
    "seed000-claim-1m-ops-single-server": "'一百万' (one million) in words",
    "seed002-keypoints-boost-doubles": "'近一倍' (nearly doubled) = ratio ~2",
    "seed002-s432-boost-doubles-every-scenario": "'几乎都是翻倍' (almost all doubled)",
    "seed002-numa-48-bound-vs-96-unbound": "order only: A beat B, ratio > 1",
    "seed004-b1-osd2-vs-osd4-iops": "'no change' = ratio ~1",
    "seed004-b1-osd2-vs-osd4-cpu": "order only: lower CPU, ratio < 1",
    "seed004-b1-osd2-vs-osd4-latency": "order only: lower latency, ratio < 1",
}


def _spellings(number: float) -> set[str]:
    out = set()
    for x in (number, abs(number), number * 100, abs(number) * 100):
        out |= {f"{x:g}", f"{x:.2f}", f"{x:.1f}"}
    if abs(number) >= 1000:
        out |= {f"{number:,.0f}", f"{number / 1000:g}"}
    return out


def _seed_texts(shared_dir: Path) -> dict[str, str]:
    return {p.name[:3]: p.read_text(encoding="utf-8") for p in (shared_dir / "seeds").glob("*.txt")}


def test_every_recorded_seed_value_appears_in_its_seed(shared_dir):
    texts = _seed_texts(shared_dir)
    for row in _raw_rows("seed"):
        if row["figure_id"] in ENCODED:
            continue
        text = texts[row["source_id"].removeprefix("seed")]
        number = float(row["value"])
        found = any(re.search(rf"(?<![\d.]){re.escape(s)}(?!\d)", text) for s in _spellings(number))
        assert found, f"{row['figure_id']}: {row['value']} does not occur in seed {row['source']}"


def test_every_measurement_in_a_seed_is_recorded(shared_dir):
    texts = _seed_texts(shared_dir)
    assert set(texts) == set(NOT_FIGURES)
    rows = _raw_rows("seed")
    for sid, text in texts.items():
        recorded = set()
        for row in rows:
            if row["source_id"] == f"seed{sid}":
                recorded |= _spellings(float(row["value"]))
        for match in _MEASURE.finditer(text):
            number = float(match.group(1).replace(",", ""))
            if {f"{number:g}", f"{number:.2f}", f"{number:.1f}"} & recorded:
                continue
            assert f"{number:g}" in NOT_FIGURES[sid], (
                f"seed {sid}: '{match.group(0)}' near "
                f"'{text[max(0, match.start() - 30) : match.end() + 10]}' is not recorded"
            )


# --- spot checks of transcribed values and SI conversion -------------------------


@pytest.mark.parametrize(
    ("figure_id", "value", "unit", "value_si"),
    [
        ("seed000-fig1-ratio-disk", 1.68, "ratio", 1.68),
        ("seed000-table3-x86-disk-p99", 878.6, "ms", 0.8786),
        ("seed000-table3-power8-cache-p95", 10.0, "ms", 0.010),
        ("S-IBM-P8-1", 207, "kops/s", 207_000),
        ("seed001-p2-nvme-ops", 329234, "ops/s", 329234),
        ("seed001-p2-sata-micros-per-op", 12.673, "us", 12.673e-6),
        ("seed001-p2-sata-completion-time", 112, "min", 6720),
        ("seed002-hci-untuned-max-tpmc", 90592, "tpm", 90592 / 60),
        ("seed003-write-bw-max", 5.6, "GB/s", 5.6e9),
        ("seed003-read-share-by-count", 99.6, "pct", 0.996),
        ("seed004-t2-randwrite-rf3-vs-rf2-iops", -29.08, "pct_change", -29.08),
        ("seed004-t3-randread-cache8-vs-4-p99", -61.76, "pct_change", -61.76),
        ("S-RH2-4M", 10.9, "GB/s", 10.9e9),
    ],
)
def test_transcribed_values_and_si(frame, figure_id, value, unit, value_si):
    row = frame.set_index("figure_id").loc[figure_id]
    assert row["value"] == value
    assert row["unit"] == unit
    assert row["value_si"] == pytest.approx(value_si, rel=1e-12)


def test_relative_figures_have_parseable_baselines(frame):
    relative = frame[frame["unit"].isin(["ratio", "pct_change"])]
    assert len(relative) > 50
    for _, row in relative.iterrows():
        baseline = bm.parse_baseline(row["baseline"])
        assert baseline and set(baseline) <= set(bm.CONFIG_COLUMNS)
    absolute = frame[~frame["unit"].isin(["ratio", "pct_change"])]
    assert (absolute["baseline"] == "").all()


def test_baseline_parsing_types_values():
    assert bm.parse_baseline("replication_factor=2") == {"replication_factor": 2.0}
    assert bm.parse_baseline("platform_id=x86-dl380-e5-2630v4;threads_per_core=2") == {
        "platform_id": "x86-dl380-e5-2630v4",
        "threads_per_core": 2.0,
    }
    assert bm.parse_baseline("wal_device_id=") == {"wal_device_id": ""}
    assert bm.parse_baseline("virtualized=false") == {"virtualized": False}
    for bad, says in [
        ("replication=2", "not a configuration column"),
        ("replication_factor", "not 'field=value'"),
        ("threads_per_core=two", "number"),
        ("device_id=no-such", "not in the hardware catalog"),
        ("", "empty"),
    ]:
        with pytest.raises(ValueError, match=says):
            bm.parse_baseline(bad)


def test_platform_and_device_ids_resolve_and_types_are_numeric(frame):
    catalog = perfmodel.inputs.catalog.default_catalog()
    measured = frame[frame["role"] != "claim"]
    assert set(measured["platform_id"]) <= set(catalog.platforms)
    assert set(measured["device_id"]) <= set(catalog.devices)
    for col in ("value", "value_si", "read_fraction", "replication_factor", "clients"):
        assert pd.api.types.is_float_dtype(frame[col]), col
    assert frame["figure_id"].is_unique


def test_summary_counts_match(frame):
    summary = perfmodel.summarize_benchmarks(frame, by=["source_id"])
    assert summary["figures"].sum() == len(frame)
    seed004 = summary.set_index("source_id").loc["seed004"]
    assert seed004["relative"] == (
        frame[frame.source_id == "seed004"]["unit"].isin(["ratio", "pct_change"]).sum()
    )


def test_readme_documents_the_current_schema():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    assert bm.schema_markdown() in readme


# --- bad input: one clear error naming file, line and field ----------------------

GOOD = {
    "figure_id": "my-1",
    "source_id": "lab",
    "source": "my lab",
    "locator": "run 1",
    "role": "measured",
    "system": "scylla",
    "platform_id": "x86-dl380-e5-2630v4",
    "device_id": "nvme-1p6tb-generic",
    "operation": "read",
    "read_fraction": "1",
    "level": "client",
    "metric": "throughput",
    "value": "123000",
    "unit": "ops/s",
}


def _write(tmp_path, rows, header=None, name="mine.csv"):
    header = header or list(GOOD)
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_users_own_csv_loads(tmp_path):
    path = _write(
        tmp_path,
        [
            GOOD,
            dict(
                GOOD,
                figure_id="my-2",
                value="0.8",
                unit="ratio",
                baseline="replication_factor=2",
                replication_factor="3",
            ),
        ],
        header=[*GOOD, "baseline", "replication_factor"],
    )
    frame = perfmodel.load_benchmarks(path)
    assert list(frame["figure_id"]) == ["my-1", "my-2"]
    assert frame.loc[0, "value_si"] == 123000
    assert math.isnan(frame.loc[0, "replication_factor"]) and frame.loc[1, "replication_factor"] == 3


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"unit": "furlongs"}, "unit", "unknown unit"),
        ({"value": "fast"}, "value", "must be a number"),
        ({"value": "nan"}, "value", "finite"),
        ({"value": "-5"}, "value", "positive"),
        ({"value": "0"}, "value", "positive"),
        ({"platform_id": "power9-x"}, "platform_id", "not in the hardware catalog"),
        ({"device_id": "floppy"}, "device_id", "not in the hardware catalog"),
        ({"platform_id": ""}, "platform_id", "required for measured"),
        ({"metric": "speed"}, "metric", "must be one of"),
        ({"unit": "ms"}, "unit", "does not fit metric"),
        ({"unit": "ratio"}, "baseline", "needs a baseline"),
        ({"read_fraction": "1.5"}, "read_fraction", "[0, 1]"),
        ({"system": "oracle"}, "system", "must be one of"),
        ({"figure_id": ""}, "figure_id", "required"),
    ],
)
def test_bad_cell_names_file_line_and_field(tmp_path, change, field, says):
    path = _write(tmp_path, [GOOD, {**GOOD, "figure_id": "my-2", **change}])
    with pytest.raises(DataError) as info:
        perfmodel.load_benchmarks(path)
    message = str(info.value)
    assert f"mine.csv:3: field '{field}'" in message
    assert says in message
    assert len(info.value.problems) == 1


def test_missing_column_and_unknown_column(tmp_path):
    header = [h for h in GOOD if h != "unit"] + ["colour"]
    path = _write(tmp_path, [GOOD], header=header)
    with pytest.raises(DataError) as info:
        perfmodel.load_benchmarks(path)
    message = str(info.value)
    assert "mine.csv:1: field 'unit' required column is missing" in message
    assert "field 'colour' unknown column" in message


def test_duplicate_figure_ids_across_files(tmp_path):
    _write(tmp_path, [GOOD], name="a.csv")
    _write(tmp_path, [GOOD], name="b.csv")
    with pytest.raises(
        DataError,
        match=r"b\.csv:2: field 'figure_id' duplicate figure id 'my-1' "
        r"\(first at a\.csv:2\)",
    ):
        perfmodel.load_benchmarks(tmp_path)


def test_group_defaults_to_the_source_and_links_must_resolve(tmp_path):
    header = [*GOOD, "group", "same_measurement"]
    rows = [dict(GOOD), dict(GOOD, figure_id="my-2", group="lab-a", same_measurement="my-1")]
    frame = perfmodel.load_benchmarks(_write(tmp_path, rows, header=header))
    assert list(frame["group"]) == ["lab", "lab-a"]  # blank = the source_id
    assert frame.loc[1, "same_measurement"] == "my-1"
    bad = [dict(GOOD, same_measurement="my-1"), dict(GOOD, figure_id="my-2", same_measurement="nope; x y")]
    with pytest.raises(DataError) as info:
        perfmodel.load_benchmarks(_write(tmp_path, bad, header=header))
    message = str(info.value)
    assert "mine.csv:2: field 'same_measurement' names the row itself" in message
    assert "mine.csv:3: field 'same_measurement' must be figure ids separated by ';'" in message


def test_every_problem_is_reported_not_only_the_first(tmp_path):
    rows = [dict(GOOD, figure_id=f"my-{i}", value="x") for i in range(3)]
    with pytest.raises(DataError) as info:
        perfmodel.load_benchmarks(_write(tmp_path, rows))
    assert [p.where for p in info.value.problems] == ["2", "3", "4"]


def test_ragged_row_and_empty_file(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text(",".join(GOOD) + "\n" + ",".join(GOOD.values()) + ",extra\n")
    with pytest.raises(DataError, match=r"ragged\.csv:2: .*has 15 fields, the header has 14"):
        perfmodel.load_benchmarks(path)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match=r"empty\.csv:1: .*empty"):
        perfmodel.load_benchmarks(empty)


def test_baseline_errors_and_baseline_on_absolute(tmp_path):
    rows = [
        dict(GOOD, figure_id="r1", unit="ratio", value="2", baseline="cores=4"),
        dict(GOOD, figure_id="r2", baseline="replication_factor=2"),
        dict(GOOD, figure_id="r3", unit="ratio", value="2", baseline="read_fraction=1"),
    ]
    with pytest.raises(DataError) as info:
        perfmodel.load_benchmarks(_write(tmp_path, rows, header=[*GOOD, "baseline"]))
    messages = [str(p) for p in info.value.problems]
    assert "not a configuration column" in messages[0]
    assert "only relative figures" in messages[1]
    assert "same configuration" in messages[2]


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.csv"):
        perfmodel.load_benchmarks(tmp_path / "nothing.csv")
