"""The planner as a planner sees it: JupyterLab in headless Chromium, driven by Selenium (issue 18).

One JupyterLab on loopback, one notebook (06, the planner), every cell run from the Run menu;
then the target and the SLO are typed into their sliders' readouts as a person would, up to a
combination no candidate meets. At each step: the table and the plot changed, no traceback or
widget error anywhere in the notebook or the browser console, each SMT mode has its one colour
(the table's swatches, and the plot's bars drawn in exactly those colours). Skipped, saying why,
only where Chromium / chromedriver / selenium are missing (``make browser`` installs them).
"""

from __future__ import annotations

import os
import re

import browser_lab as browser
import pytest

from perfmodel.plan.sizing_view import SMT_COLORS

pytestmark = pytest.mark.slow

WHY_NOT = browser.missing()
#: set by .ci/run: in CI a missing browser is a failure, not a skip
REQUIRED = os.environ.get("PERFMODEL_REQUIRE_BROWSER", "") not in ("", "0")


def test_the_browser_is_there_where_it_is_required():
    if REQUIRED:
        assert not WHY_NOT, f"PERFMODEL_REQUIRE_BROWSER is set but the browser test cannot run: {WHY_NOT}"


def _rgb(css: str) -> str:
    """``rgba(76, 114, 176, 1)`` -> ``#4c72b0``."""
    r, g, b = (int(x) for x in re.findall(r"\d+", css)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _rows(text: str) -> list[str]:
    """The table's body rows as the browser shows them (one line each), in order."""
    return [line for line in text.splitlines() if re.match(r"^\S+ SMT\d+ ", line)]


def _smt(candidate: str) -> int:
    return int(candidate.rsplit("SMT", 1)[1])


@pytest.mark.skipif(bool(WHY_NOT), reason=f"no browser: {WHY_NOT}")
def test_planner_in_a_real_browser(tmp_path):
    folder = browser.planner_folder(tmp_path / "lab")
    with browser.Lab(folder) as lab:
        lab.open(browser.PLANNER.name)
        page = browser.PlannerPage(lab)
        page.run_all()
        assert "Sizing for 1,000,000 ops/s at p99 <= 20 ms" in page.text()
        states = {"defaults": page.snapshot()}

        # controls that do not apply are disabled, and enabled again
        assert not page.disabled("Zipf exponent")
        page.choose("key popularity", "uniform")
        lab.wait(
            lambda: page.disabled("Zipf exponent"), "the Zipf exponent to be disabled under uniform keys"
        )
        page.choose("key popularity", "zipf")
        lab.wait(
            lambda: not page.disabled("Zipf exponent"), "the Zipf exponent to be enabled under Zipf keys"
        )
        page.wait_plan("Sizing for 1,000,000 ops/s")

        page.set_slider("target [ops/s]", "1e7")
        page.wait_plan("Sizing for 10,000,000 ops/s at p99 <= 20 ms")
        states["high target"] = page.snapshot()

        page.set_slider("p99 SLO [ms]", "0.1")
        page.wait_plan("No candidate meets every constraint")
        states["infeasible"] = page.snapshot()

        errors, console = page.errors(), lab.console_errors()
    assert not errors, errors
    assert not console, console

    texts = [s[0] for s in states.values()]
    plots = [s[1] for s in states.values()]
    assert len(set(texts)) == 3 and len(set(plots)) == 3  # the table and the plot followed every change
    assert "infeasible" in states["infeasible"][0] and "p99 never <= 0.1 ms" in states["infeasible"][0]
    assert "Fewest nodes" in states["high target"][0] and "set by throughput" in states["high target"][0]

    # one colour per SMT mode, whatever the answer: the table's swatches ...
    for name, (text, png, swatches) in states.items():
        assert len(swatches) == 7, name  # 3 platforms' SMT modes: 4 + 2 + 1
        for candidate, css in swatches.items():
            assert _rgb(css) == SMT_COLORS[_smt(candidate)], (name, candidate)
        # ... and the plot's bars, top to bottom in the table's order, each in its row's colour
        # (an infeasible candidate has no bar)
        feasible = [
            _smt(c) for c, line in zip(swatches, _rows(text), strict=True) if "infeasible" not in line
        ]
        bars = browser.bar_colours(png, SMT_COLORS)
        if bars != feasible:  # keep what the browser showed, to look at
            (tmp_path / f"{name.replace(' ', '-')}.png").write_bytes(png)
            (tmp_path / f"{name.replace(' ', '-')}.txt").write_text(text)
        assert bars == feasible, (name, browser.colour_census(png, SMT_COLORS), text, str(tmp_path))
