"""Price tables (issue 40, point 2): the loader's errors, a user's table, the monthly-cost formula,
the cheapest plan in ``size``, and a source and a date for every shipped number."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
import yaml

import perfmodel
from perfmodel.cli import main
from perfmodel.inputs.errors import DataError
from perfmodel.inputs.prices import (
    ASSUMPTIONS,
    CLOUD_FIELDS,
    ON_PREMISES_FIELDS,
    PriceEntry,
    default_assumptions,
    load_prices,
    monthly_cost,
    shipped_files,
)
from perfmodel.plan.sizing import size

PRICES_DIR = Path(__file__).resolve().parents[2] / "data" / "prices"
WORKLOADS = Path(__file__).resolve().parents[2] / "data" / "workloads"
W = perfmodel.Workload(
    operation="mixed",
    read_fraction=0.9,
    object_bytes=1024,
    dataset_bytes=1e12,
    clients=1,
    replication_factor=3,
    consistency="QUORUM",
)
X86, POWER8 = "x86-dl380-e5-2630v4", "power8-s821lc-10c"


def write(tmp_path: Path, doc, name: str = "mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def on_prem(platform: str, list_price_usd: float, **more) -> dict:
    fields = {"list_price_usd": list_price_usd, **more}
    return {
        "platform": platform, "kind": "on_premises", "currency": "USD", "date": "2026-01-02", **fields,
        "sources": {k: f"quote-1: line for {k}" for k in fields},
    }  # fmt: skip


def table_doc(*entries, **extra) -> dict:
    return {"references": {"quote-1": "Quote 1 from a vendor, 2026-01-02"}, **extra, "prices": list(entries)}


# --- the loader -----------------------------------------------------------------------------------


def test_every_problem_is_named_by_file_entry_and_field(tmp_path):
    bad = [
        {**on_prem("a-box", 1000.0), "currency": "EUR"},
        {**on_prem("b-box", -5.0)},
        {**on_prem("c-box", 1000.0), "sources": {}},
        {**on_prem("d-box", 1000.0), "list_prise_usd": 3},
        {**on_prem("e-box", 1000.0), "on_demand_usd_per_hour": 1.0},
        {"platform": "f-cloud", "kind": "cloud", "currency": "USD", "date": "2026-01-02"},
        {**on_prem("g-box", 1000.0), "date": "last spring"},
        {**on_prem("h-box", 1000.0), "sources": {"list_price_usd": "nowhere-doc: p. 3"}},
        {**on_prem("i-box", 1000.0), "kind": "colo"},
    ]
    path = write(tmp_path, table_doc(*bad))
    with pytest.raises(DataError) as err:
        load_prices(path)
    found = {(p.where, p.field) for p in err.value.problems}
    assert found >= {
        ("a-box", "currency"), ("b-box", "list_price_usd"), ("c-box", "list_price_usd"),
        ("d-box", "list_prise_usd"), ("e-box", "on_demand_usd_per_hour"),
        ("f-cloud", "on_demand_usd_per_hour"), ("g-box", "date"), ("h-box", "list_price_usd"),
        ("i-box", "kind"),
    }  # fmt: skip
    assert all(p.file == str(path) for p in err.value.problems)
    assert f"{path}:c-box: field 'list_price_usd' no source" in str(err.value)


def test_a_platform_priced_twice_and_malformed_files_are_errors(tmp_path):
    twice = write(tmp_path, table_doc(on_prem("a-box", 1.0), on_prem("a-box", 2.0)))
    with pytest.raises(DataError, match="a-box: field 'platform' priced twice"):
        load_prices(twice)
    with pytest.raises(DataError, match="not valid YAML"):
        load_prices(write(tmp_path, "prices: [unclosed", "broken.yaml"))
    with pytest.raises(DataError, match="list 'prices:'"):
        load_prices(write(tmp_path, "prices: 3\n", "scalar.yaml"))
    with pytest.raises(FileNotFoundError):
        load_prices(tmp_path / "absent.yaml")
    cloud = {"platform": "c", "kind": "cloud", "currency": "USD", "date": "2026-01-02",
             "on_demand_usd_per_hour": 1.0, "on_demand_usd_per_month": 730.0,
             "sources": {"on_demand_usd_per_hour": "quote-1: a",
                         "on_demand_usd_per_month": "quote-1: b"}}  # fmt: skip
    with pytest.raises(DataError, match="not both"):
        load_prices(write(tmp_path, table_doc(cloud), "both.yaml"))


def test_an_assumption_needs_a_known_name_a_sane_value_and_a_source(tmp_path):
    doc = table_doc(on_prem("a-box", 1.0), assumptions={"pue": 0.5, "usd_per_kwh": 0.2, "wacc": 0.1})
    with pytest.raises(DataError) as err:
        load_prices(write(tmp_path, doc))
    fields = {p.field for p in err.value.problems}
    assert fields == {"pue", "usd_per_kwh", "wacc"}  # below 1; no source; unknown


def test_a_user_table_replaces_the_shipped_entry_and_adds_its_own(tmp_path):
    shipped = load_prices()
    mine = {
        "platform": "aws-i3-8xlarge", "kind": "cloud", "currency": "USD", "date": "2026-05-01",
        "on_demand_usd_per_month": 1500.0, "sources": {"on_demand_usd_per_month": "quote-1: our discount"},
    }  # fmt: skip
    doc = table_doc(
        mine, on_prem(X86, 3600.0), assumptions={"pue": 1.2}, sources={"pue": "assumption: our hall"}
    )
    table = load_prices(write(tmp_path, doc))
    assert table.entries["aws-i3-8xlarge"].on_demand_usd_per_month == 1500.0
    assert table.entries["aws-i3-8xlarge"].reserved_1y_usd_per_month is None  # replaced whole, not merged
    assert X86 in table and "x86-aws-i3-4xlarge" in table  # added; the shipped rest kept
    assert table.entries["x86-aws-i3-4xlarge"] == shipped.entries["x86-aws-i3-4xlarge"]
    assert (
        table.assumptions["pue"] == 1.2
        and table.assumptions["usd_per_kwh"] == shipped.assumptions["usd_per_kwh"]
    )
    alone = load_prices(write(tmp_path, doc), base=None)
    assert set(alone.entries) == {"aws-i3-8xlarge", X86}


def test_a_csv_table_loads_as_the_yaml_one(tmp_path):
    csv_text = (
        "platform,kind,currency,date,list_price_usd,power_w,source_list_price_usd,source_power_w\n"
        f"{X86},on_premises,USD,2026-01-02,3600,250,quote 7 line 1,spec sheet p. 4\n"
    )
    table = load_prices(write(tmp_path, csv_text, "mine.csv"), base=None)
    entry = table.entries[X86]
    assert (entry.kind, entry.list_price_usd, entry.power_w, entry.date) == (
        "on_premises",
        3600.0,
        250.0,
        "2026-01-02",
    )
    assert entry.sources == {"list_price_usd": "quote 7 line 1", "power_w": "spec sheet p. 4"}
    no_source = csv_text.replace(",quote 7 line 1,", ",,")
    with pytest.raises(DataError, match=f"{X86}: field 'list_price_usd' no source"):
        load_prices(write(tmp_path, no_source, "bad.csv"))


# --- the formula ----------------------------------------------------------------------------------


def test_on_premises_monthly_cost_by_hand():
    e = PriceEntry(X86, "on_premises", "USD", "2026-01-02", list_price_usd=36000.0, power_w=500.0,
                   support_usd_per_year=1200.0)  # fmt: skip
    a = {"usd_per_kwh": 0.2, "pue": 1.5, "amortisation_months": 36.0, "hours_per_month": 730.0}
    energy = 0.5 * 730 * 1.5 * 0.2  # kW x h x PUE x USD/kWh = 109.5
    assert monthly_cost(e, assumptions=a) == pytest.approx(36000 / 36 + energy + 100)
    assert monthly_cost(e, assumptions=a, horizon_months=12) == pytest.approx(36000 / 12 + energy + 100)
    assert monthly_cost(e, assumptions=a, horizon_months=48) == pytest.approx(2 * 36000 / 48 + energy + 100)
    assert monthly_cost(e, assumptions=a, pue=1.0, usd_per_kwh=0.1) == pytest.approx(
        1000 + 0.5 * 730 * 0.1 + 100
    )
    bare = PriceEntry(X86, "on_premises", "USD", "2026-01-02", list_price_usd=3600.0)
    assert monthly_cost(bare, amortisation_months=60) == pytest.approx(60.0)  # no power, no support given


def test_cloud_monthly_cost_by_hand():
    e = load_prices().entries["aws-i3-8xlarge"]
    assert monthly_cost(e) == pytest.approx(2.496 * 730)
    assert monthly_cost(e, term="reserved_1y") == pytest.approx(1.714 * 730)
    assert monthly_cost(e, term="reserved_1y", horizon_months=6) == pytest.approx(
        1.714 * 730 * 2
    )  # a year paid
    assert monthly_cost(e, term="reserved_1y", horizon_months=24) == pytest.approx(1.714 * 730)
    with_volume = PriceEntry("x", "cloud", "USD", "2026-01-02", on_demand_usd_per_month=100.0,
                             storage_usd_per_month=10.0)  # fmt: skip
    assert monthly_cost(with_volume) == 110.0 and math.isnan(monthly_cost(with_volume, term="reserved_1y"))
    for bad in ({"term": "spot"}, {"horizon_months": 0}, {"pue": 0.9}, {"amortisation_months": -1}):
        with pytest.raises(ValueError, match=f"^{next(iter(bad))}"):
            monthly_cost(e, **bad)


def test_a_3_year_price_per_year_is_costed_over_whole_reservations(tmp_path):
    cloud = {"platform": "c", "kind": "cloud", "currency": "USD", "date": "2026-01-02",
             "on_demand_usd_per_hour": 1.0, "reserved_1y_usd_per_year": 6000.0,
             "reserved_3y_usd_per_year": 3600.0, "storage_usd_per_month": 10.0}  # fmt: skip
    cloud["sources"] = {k: f"quote-1: {k}" for k in cloud if k.endswith(("_hour", "_year", "_month"))}
    e = load_prices(write(tmp_path, table_doc(cloud)), base=None).entries["c"]
    assert (e.reserved_1y_usd_per_month, e.reserved_3y_usd_per_month) == (500.0, 300.0)  # / 12
    assert monthly_cost(e, term="reserved_3y") == pytest.approx(300.0 + 10.0)
    assert monthly_cost(e, term="reserved_3y", horizon_months=36) == pytest.approx(310.0)
    assert monthly_cost(e, term="reserved_3y", horizon_months=12) == pytest.approx(
        300.0 * 3 + 10.0
    )  # 3 y paid
    assert monthly_cost(e, term="reserved_3y", horizon_months=48) == pytest.approx(300.0 * 72 / 48 + 10.0)
    assert monthly_cost(e, term="reserved_1y", horizon_months=18) == pytest.approx(500.0 * 24 / 18 + 10.0)
    assert math.isnan(monthly_cost(load_prices().entries["aws-i3-8xlarge"], term="reserved_3y"))  # not given
    three = {**cloud, "reserved_3y_usd_per_hour": 0.4, "reserved_3y_usd_per_month": 300.0,
             "sources": {**cloud["sources"], "reserved_3y_usd_per_hour": "quote-1: a",
                         "reserved_3y_usd_per_month": "quote-1: b"}}  # fmt: skip
    with pytest.raises(DataError, match="reserved_3y_usd_per_year, not all"):
        load_prices(write(tmp_path, table_doc(three), "three.yaml"), base=None)


def test_cli_takes_the_3_year_term(capsys):
    argv = ["size", str(WORKLOADS / "scylla-read-heavy.yaml"), "--target-ops", "200000", "--slo-p99-ms", "50",
            "--platform", "x86-aws-i4i-4xlarge", "--interval", "0.5", "--prices",
            "--price-term", "reserved_3y"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "reserved-3y prices" in out
    assert "x86-aws-i4i-4xlarge SMT2:" in out and "403.47 = " in out  # 4841.67 USD/year / 12


# --- size -----------------------------------------------------------------------------------------


def test_size_marks_the_cheapest_feasible_plan_not_the_fewest_servers(tmp_path):
    # a POWER8 server ten times the x86 one's price: POWER8 at SMT8 needs the fewest servers, x86 costs least
    path = write(tmp_path, table_doc(on_prem(X86, 3600.0), on_prem(POWER8, 36000.0)))
    out = size(W, target_ops_s=2e5, slo_p99_ms=50, system="cassandra",
               platforms=[X86, POWER8, "x86-epyc-7351p"], interval=None, prices=path,
               pricing={"amortisation_months": 36})  # fmt: skip
    feasible = out[out.feasible]
    assert feasible.nodes.min() < feasible[feasible.platform == X86].nodes.min()  # fewer servers exist ...
    cheapest = out[out.cheapest]
    assert set(cheapest.platform) == {X86}  # ... but are not the cheapest
    assert cheapest.cost_usd_per_month.iloc[0] == pytest.approx(feasible.cost_usd_per_month.min())
    row = out[out.platform == POWER8].iloc[0]
    assert row.price_usd_per_month == pytest.approx(1000.0)
    assert row.cost_usd_per_month == pytest.approx(1000.0 * row.nodes)
    unpriced = out[out.platform == "x86-epyc-7351p"]
    assert unpriced.cost_usd_per_month.isna().all() and not unpriced.cheapest.any()
    assert "no on-demand price for x86-epyc-7351p" in out.attrs["price_note"]
    assert "mine.yaml" in out.attrs["price_note"]


def test_size_keeps_the_cost_dict_and_refuses_bad_pricing(tmp_path):
    out = size(W, target_ops_s=2e5, slo_p99_ms=50, system="cassandra", platforms=[X86], interval=None,
               cost={X86: 9000.0}, prices="shipped")  # fmt: skip
    assert (out.cost == 9000.0 * out.nodes).all() and out.cost_usd_per_month.isna().all()
    assert not out.cheapest.any() and f"no on-demand price for {X86}" in out.attrs["price_note"]
    common = {
        "target_ops_s": 2e5,
        "slo_p99_ms": 50,
        "system": "cassandra",
        "platforms": [X86],
        "interval": None,
    }
    with pytest.raises(ValueError, match="^pricing"):
        size(W, pricing={"term": "reserved_1y"}, **common)
    with pytest.raises(ValueError, match="^pricing: unknown option 'currency'"):
        size(W, prices="shipped", pricing={"currency": "EUR"}, **common)
    with pytest.raises(ValueError, match="^term"):
        size(W, prices="shipped", pricing={"term": "spot"}, **common)
    with pytest.raises(ValueError, match="^prices"):
        size(W, prices={X86: 1.0}, **common)


def test_cli_prices_prints_the_cost_of_each_plan(capsys, tmp_path):
    path = write(tmp_path, table_doc(on_prem(X86, 3600.0)))
    argv = ["size", str(WORKLOADS / "scylla-read-heavy.yaml"), "--target-ops", "200000", "--slo-p99-ms", "50",
            "--platform", X86, "--platform", "x86-aws-i3-4xlarge", "--interval", "0.5"]  # fmt: skip
    assert main([*argv, "--prices", str(path), "--price-term", "reserved_1y"]) == 0
    out = capsys.readouterr().out
    assert (
        "Cost: prices from aws-2026.yaml, aws.yaml, gcp.yaml, mine.yaml" in out
        and "reserved-1y prices" in out
    )
    assert f"{X86} SMT1: 4 x 100.00 = 400.00 USD/month  <- cheapest" in out
    assert "x86-aws-i3-4xlarge SMT1: 4 x 625.61 = 2,502.44 USD/month" in out  # 0.857 USD/h x 730 h x 4
    assert main([*argv, "--horizon-months", "12"]) == 2
    assert "give --prices" in capsys.readouterr().err


# --- the shipped tables ---------------------------------------------------------------------------


def test_every_shipped_number_has_a_source_and_a_date():
    files = shipped_files()
    assert files, "no shipped price table"
    for path in files:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        refs = doc["references"]
        for entry in doc["prices"]:
            date = entry["date"]
            assert isinstance(date, dt.date) or dt.date.fromisoformat(str(date)), entry["platform"]
            numbers = [k for k in entry if k in CLOUD_FIELDS + ON_PREMISES_FIELDS]
            assert numbers, entry["platform"]
            for key in numbers:
                source = entry["sources"][key]
                assert source.split(":")[0] in refs, f"{path.name}:{entry['platform']}:{key}: {source}"
                assert str(entry[key]) in source, f"{path.name}:{entry['platform']}:{key}: value not quoted"
    values, sources = default_assumptions()
    assert set(values) == set(sources) == set(ASSUMPTIONS)
    assert all(s.startswith(("assumption:", "derived:")) for s in sources.values())
    assert (PRICES_DIR / "README.md").is_file()


def test_every_shipped_price_is_for_a_catalog_platform():
    known = set(perfmodel.list_platforms())
    assert set(load_prices().entries) <= known


def test_no_platform_is_priced_in_two_shipped_tables():
    seen: dict[str, str] = {}
    for path in shipped_files():
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["prices"]:
            assert entry["platform"] not in seen, (
                f"{entry['platform']}: {seen.get(entry['platform'])} and {path.name}"
            )
            seen[entry["platform"]] = path.name


def test_every_shipped_cloud_price_names_its_instance_and_prices_its_block_volumes():
    """A cloud price names provider, instance type and region, and a platform whose drives are
    network block volumes (EBS) carries their price: the instance price alone would flatter it."""
    for platform, entry in load_prices().entries.items():
        if entry.kind != "cloud":
            continue
        assert entry.provider and entry.instance_type and entry.region, platform
        devices = [s.device for s in perfmodel.load_platform(platform).storage]
        if any(d.startswith("aws-ebs-") for d in devices):
            assert entry.storage_usd_per_month, f"{platform}: its EBS volume ({devices}) is not priced"
