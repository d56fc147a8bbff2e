"""The planner as a planner sees it: JupyterLab in headless Chromium, driven by Selenium (issue 18).

One JupyterLab on loopback, one notebook (06, the planner), every cell run from the Run menu;
then the target and the SLO are typed into their sliders' readouts as a person would, up to a
combination no candidate meets. At each step: the table and the plot changed, no traceback or
widget error anywhere in the notebook or the browser console, each SMT mode has its one colour
(the table's swatches, and the plot's bars drawn in exactly those colours). Skipped, saying why,
only where Chromium / chromedriver / selenium are missing (``make browser`` installs them).
"""

from __future__ import annotations

import re
import time

import browser_lab as browser
import pytest

from perfmodel.sizing_view import SMT_COLORS

pytestmark = pytest.mark.slow

WHY_NOT = browser.missing()


def _rgb(css: str) -> str:
    """``rgba(76, 114, 176, 1)`` -> ``#4c72b0``."""
    r, g, b = (int(x) for x in re.findall(r"\d+", css)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _smt(candidate: str) -> int:
    return int(candidate.rsplit("SMT", 1)[1])


@pytest.mark.skipif(bool(WHY_NOT), reason=f"no browser: {WHY_NOT}")
def test_planner_in_a_real_browser(tmp_path):
    started = time.monotonic()
    folder = browser.planner_folder(tmp_path / "lab")
    with browser.Lab(folder) as lab:
        lab.open(browser.PLANNER.name)
        page = browser.PlannerPage(lab)
        page.run_all()
        assert "Sizing for 1,000,000 ops/s at p99 <= 20 ms" in page.text()
        states = {"defaults": (page.text(), page.plot_png(), page.swatches())}

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
        states["high target"] = (page.text(), page.plot_png(), page.swatches())

        page.set_slider("p99 SLO [ms]", "0.3")
        page.wait_plan("No candidate meets every constraint")
        states["infeasible"] = (page.text(), page.plot_png(), page.swatches())

        errors, console = page.errors(), lab.console_errors()
    assert not errors, errors
    assert not console, console

    texts = [s[0] for s in states.values()]
    plots = [s[1] for s in states.values()]
    assert len(set(texts)) == 3 and len(set(plots)) == 3  # the table and the plot followed every change
    assert "infeasible" in states["infeasible"][0] and "p99 never <= 0.3 ms" in states["infeasible"][0]
    assert "Fewest nodes" in states["high target"][0] and "set by throughput" in states["high target"][0]

    # one colour per SMT mode, whatever the answer: the swatches ...
    for name, (_, png, swatches) in states.items():
        assert len(swatches) == 7, name  # 3 platforms' SMT modes: 4 + 2 + 1
        for candidate, css in swatches.items():
            assert _rgb(css) == SMT_COLORS[_smt(candidate)], (name, candidate)
        # ... and the plot's bars, drawn in exactly those colours where a candidate is feasible
        if name != "infeasible":
            pixels = browser.colour_pixels(png, SMT_COLORS)
            assert all(pixels[mode] > 200 for mode in (1, 2, 4, 8)), (name, pixels)
    assert time.monotonic() - started < 90  # the issue asks for under a minute; CI machines vary
