"""Screenshots of the planner in JupyterLab for docs/planner.md: ``make screenshots``.

Runs the planner notebook in headless Chromium on a laptop-sized screen (1440 x 900), the same way
the browser test does, and saves the screen at the defaults, at a high target and with an SLO no
candidate meets into ``docs/screenshots/`` (or the folder given as the first argument).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_lab as browser  # noqa: E402

#: (file, what to change: [(slider label, typed value)], text the plan shows once it has changed)
SHOTS = (
    ("planner-defaults.png", [], "Sizing for 1,000,000 ops/s at p99 <= 20 ms"),
    ("planner-high-target.png", [("target [ops/s]", "1e7")], "Sizing for 10,000,000 ops/s at p99 <= 20 ms"),
    ("planner-infeasible.png", [("p99 SLO [ms]", "0.1")], "No candidate meets every constraint"),
)


def main(argv: list[str]) -> int:
    why = browser.missing()
    if why:
        print(f"screenshots: no browser: {why}", file=sys.stderr)
        return 1
    out = Path(argv[0]) if argv else browser.ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = browser.planner_folder(Path(scratch) / "lab")
        with browser.Lab(folder) as lab:
            lab.open(browser.PLANNER.name)
            page = browser.PlannerPage(lab)
            page.run_all()
            for name, changes, shown in SHOTS:
                for label, value in changes:
                    page.set_slider(label, value)
                page.wait_plan(shown)
                lab.driver.execute_script("arguments[0].scrollIntoView()", page.root)
                lab.driver.save_screenshot(str(out / name))
                print(out / name)
            errors = page.errors() + lab.console_errors()
    if errors:
        print("screenshots: the planner showed errors:\n" + "\n".join(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
