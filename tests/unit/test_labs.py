"""Out-of-sample errors by lab (perfmodel.evidence.labs): the median of lab medians, the docs' headline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfmodel.evidence import labs
from perfmodel.evidence.stored_runs import read_block
from tools import docs_blocks

ROOT = Path(__file__).resolve().parents[2]


def test_one_lab_cannot_stand_for_the_others():
    """Three labs: one with many figures at 1.1x, two with few at 3x and 5x. The pooled median is the
    big lab's; the median of lab medians is the middle lab's."""
    table = pd.DataFrame({
        "lab": ["big"] * 9 + ["mid"] * 2 + ["bad"] * 2,
        "system": "x", "metric_group": "throughput",
        "factor_error": [1.1] * 9 + [3.0, 3.0] + [5.0, 5.0],
        "in_band90": [1.0] * 11 + [0.0, 0.0],
    })  # fmt: skip
    overall = labs.lab_medians(table, ()).iloc[0]
    assert overall.pooled_median == pytest.approx(1.1) and overall.median_of_lab_medians == pytest.approx(3.0)
    assert overall.labs == 3 and overall.figures == 13
    assert overall.p90_over_labs == pytest.approx(np.quantile([1.1, 3.0, 5.0], 0.9))
    assert overall.coverage == pytest.approx(11 / 13)


def test_the_held_out_figures_are_out_of_sample_only():
    table = labs.held_out()
    assert set(table.origin) == {"seed cv-group", "corpus"}
    assert (table.factor_error >= 1).all() and table.system.notna().all()
    assert "rhcs32-part3-scaleout-2019" not in set(table.lab)  # a lab id, never a source id
    seed_labs = set(table.lab[table.origin == "seed cv-group"])
    assert seed_labs == {"ibm-scylla-2018", "rhcs32-bluestore-lab", "seed001", "seed002", "seed003"}


def test_docs_lead_with_the_stored_runs_by_lab():
    text = docs_blocks.home("labs").read_text(encoding="utf-8")
    assert read_block(text, "labs") == labs.markdown().strip("\n")
    assert text.index("generated:labs") < text.index("## How the model is validated")


def test_mechanisms_are_listed_by_the_labs_that_switch_them_on():
    frame = labs.mechanism_labs().set_index("mechanism")
    assert set(frame.index) == set(labs.MECHANISMS)
    # VM exits: only sevmc's SEV-SNP guest has a catalog exit count (the example)
    vm = frame.loc["VM exits per message"]
    assert vm["single_lab"] and vm["which"] == "sevmc-memcached-port"
    # zones came from one benchANT source, and a first-looked lab (K8ssandra on EKS) has them too
    zones = frame.loc["availability zones (round trips between zones)"]
    assert "benchant" in zones["which"] and zones["first_looked"] >= 1
    assert (frame["first_looked"] <= frame["labs"]).all() and (frame["figures"] >= frame["labs"]).all()
    text = docs_blocks.home("mechanism-labs").read_text(encoding="utf-8")
    assert read_block(text, "mechanism-labs") == labs.mechanisms_markdown(frame.reset_index())
