"""The planner in a real browser: JupyterLab on loopback, headless Chromium driven by Selenium.

Shared by the browser test (``tests/browser/test_planner_browser.py``) and the screenshot
command (``make screenshots``, ``tests/browser/screenshots.py``). :func:`missing` says why the
browser cannot run here (no Chromium / chromedriver / selenium); :class:`Lab` starts a private
JupyterLab (its own config, data, settings and runtime folders under a scratch folder, a random
token) on a free loopback port and opens a notebook in Chromium; :class:`PlannerPage` runs the
planner notebook and reads and drives what a planner sees.

Chromium runs with the flags a closed network needs (no background networking, no component
updates, no sync): without them it keeps trying Google's hosts.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = os.environ.get("PERFMODEL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PERFMODEL_CHROMEDRIVER", "/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[2]
PLANNER = ROOT / "notebooks" / "06-interactive-planner.ipynb"
#: a laptop's screen [px]
WINDOW = (1440, 900)


def missing() -> str:
    """Why the browser test cannot run here ('' when it can)."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            return (f"{path} not found: install Debian's {package} (`make browser` does, as root), "
                    "or point PERFMODEL_CHROMIUM / PERFMODEL_CHROMEDRIVER at them")  # fmt: skip
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A private JupyterLab serving ``folder`` on loopback, and a headless Chromium on it.

    Use as a context manager; ``open(name)`` loads a notebook; ``driver`` is the Selenium driver.
    """

    def __init__(self, folder: Path, window=WINDOW, timeout_s: float = 60.0):
        self.folder, self.window, self.timeout_s = Path(folder), window, timeout_s
        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.server = None
        self.driver = None

    def __enter__(self) -> Lab:
        state = self.folder / ".lab"
        settings = state / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True, exist_ok=True)
        # no "news" question and no update check: a toast would cover the notebook
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(state / "config"),
            "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
            "JUPYTER_DATA_DIR": str(state / "data"),
            "JUPYTERLAB_SETTINGS_DIR": str(state / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(state / "workspaces"),
            "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        }
        self.log = open(state / "server.log", "w")  # noqa: SIM115 -- closed in __exit__
        self.server = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.folder}",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--LabApp.extension_manager=readonly", "--ServerApp.terminals_enabled=False"]
            + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
            cwd=self.folder, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self._wait_for_server()
        self.driver = self._chromium(state / "chromium")
        return self

    def _wait_for_server(self) -> None:
        url = f"http://127.0.0.1:{self.port}/api/status?token={self.token}"
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                raise RuntimeError(f"JupyterLab exited: {self.folder / '.lab' / 'server.log'}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(url, timeout=2) as reply:
                    if reply.status == 200:
                        return
            time.sleep(0.3)
        raise TimeoutError(f"JupyterLab did not answer on port {self.port} within {self.timeout_s:g} s")

    def _chromium(self, profile: Path):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--window-size={self.window[0]},{self.window[1]}",
            f"--user-data-dir={profile}",
        ):
            options.add_argument(flag)  # fmt: skip
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        # the page gets the whole window: the viewport, not the outer window, is WINDOW
        width, height = self.window
        inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])
        return driver

    def open(self, name: str) -> None:
        """Load notebook ``name`` (in the served folder) in JupyterLab, left sidebar closed."""
        self.driver.get(f"http://127.0.0.1:{self.port}/lab/tree/{name}?token={self.token}")
        self.wait_css(".jp-Notebook .jp-Cell")
        with contextlib.suppress(Exception):  # close the file browser: the notebook gets the width
            tab = self.driver.find_element(
                "css selector", ".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current"
            )
            tab.click()

    def wait(self, condition, what: str, timeout_s: float | None = None):
        """Poll ``condition()`` until it returns something truthy; a TimeoutError names ``what``."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        last = None
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                last = condition()
                if last:
                    return last
            time.sleep(0.2)
        raise TimeoutError(f"timed out waiting for {what} (last: {last!r})")

    def wait_css(self, selector: str, timeout_s: float | None = None):
        return self.wait(lambda: self.driver.find_elements("css selector", selector), selector, timeout_s)

    def console_errors(self) -> list[str]:
        """The browser console's errors since the last call (JupyterLab's own 404s for optional
        resources -- favicons, translations, workspaces -- are not the planner's)."""
        logs = self.driver.get_log("browser")
        ignore = re.compile(r"favicon|/lab/api/(translations|workspaces|settings)|/api/me|404 \(Not Found\)")
        return [
            entry["message"]
            for entry in logs
            if entry["level"] == "SEVERE" and not ignore.search(entry["message"])
        ]

    def __exit__(self, *exc) -> None:
        if self.driver is not None:
            with contextlib.suppress(Exception):
                self.driver.quit()
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
        self.log.close()


def planner_folder(folder: Path) -> Path:
    """A scratch folder holding a copy of the planner notebook (06) that writes into it."""
    folder.mkdir(parents=True, exist_ok=True)
    nb = json.loads(PLANNER.read_text())
    for cell in nb["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            cell["source"] = [
                re.sub(r'^output_dir = ".*?"', 'output_dir = "out"', line) for line in cell["source"]
            ]
    (folder / PLANNER.name).write_text(json.dumps(nb, indent=1))
    return folder


class PlannerPage:
    """The planner as JupyterLab shows it: run it, read its plan, move its controls."""

    def __init__(self, lab: Lab):
        self.lab, self.driver = lab, lab.driver

    def run_all(self, attempts: int = 3) -> None:
        """Run every cell (Run > Run All Cells) and wait for the planner's first plan.

        The menu item is clicked only once it is enabled (JupyterLab disables it until the notebook
        panel is ready), and again when no cell has started within a minute: under load a click can
        land before the panel takes it. A timeout names what the notebook showed instead.
        """
        self.lab.wait(self._kernel_idle, "the kernel to start", 90)
        for attempt in range(attempts):
            self._click_run_all()
            try:
                self.lab.wait(self._cells_started, "a cell to start after Run All Cells", 60)
                break
            except TimeoutError:
                if attempt == attempts - 1:
                    raise TimeoutError(f"no cell started after Run All Cells: {self.diagnosis()}") from None
                with contextlib.suppress(Exception):  # close a menu left open
                    from selenium.webdriver.common.keys import Keys

                    self.driver.find_element("css selector", "body").send_keys(Keys.ESCAPE)
        # the first run imports the stack and plans: about 20 s on an idle 2-core machine, past 60 s
        # when other work shares the cores (reproduced with two busy processes)
        try:
            self.wait_plan("Sizing for", timeout_s=240)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}; {self.diagnosis()}") from None

    def _click_run_all(self) -> None:
        menu = self.lab.wait(
            lambda: [
                m for m in self.driver.find_elements("css selector", ".lm-MenuBar-item") if m.text == "Run"
            ],
            "the Run menu",
        )
        menu[0].click()
        item = self.lab.wait(
            lambda: [i for i in self.driver.find_elements(
                "css selector", ".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel")
                if i.text == "Run All Cells"],
            "Run > Run All Cells (enabled)",
        )  # fmt: skip
        item[0].click()

    def prompts(self) -> list[str]:
        """The code cells' input prompts as shown: '[ ]:' not run, '[*]:' running, '[3]:' done."""
        return [p.text for p in self.driver.find_elements("css selector", ".jp-InputArea-prompt")]

    def _cells_started(self) -> bool:
        return any("*" in p or re.search(r"\d", p) for p in self.prompts())

    def diagnosis(self) -> str:
        """What the notebook shows now, for a failure message: the prompts, the kernel's status and
        the start of every output (a traceback, a widget error, a message)."""
        with contextlib.suppress(Exception):
            status = self.driver.find_elements("css selector", ".jp-Notebook-ExecutionIndicator")
            kernel = status[0].get_attribute("data-status") if status else "no indicator"
            shown = self.driver.find_elements("css selector", ".jp-OutputArea-output")
            outputs = [el.text[:300] for el in shown]
            return f"prompts {self.prompts()}, kernel {kernel!r}, outputs {outputs}"
        return "the page could not be read"

    def _kernel_idle(self) -> bool:
        status = self.driver.find_elements("css selector", ".jp-Notebook-ExecutionIndicator")
        return bool(status) and "idle" in (status[0].get_attribute("data-status") or "")

    @property
    def root(self):
        """The planner's box: the widget box that holds the platform list."""
        boxes = self.driver.find_elements("css selector", ".widget-hbox")
        return next(b for b in boxes if b.find_elements("css selector", "select[multiple]"))

    @property
    def output(self):
        return self.root.find_element("css selector", ".widget-output")

    def text(self) -> str:
        return self.output.text

    def busy(self) -> bool:
        """The planner's busy line shows (a plan is being computed) or the kernel is not idle."""
        shown = self.root.find_elements("css selector", ".pm-busy")
        return bool([el for el in shown if el.text.strip()]) or not self._kernel_idle()

    def snapshot(self, timeout_s: float = 120) -> tuple[str, bytes, dict[str, str]]:
        """(text, plot PNG, swatches) of one settled plan: the kernel idle, no plan being computed,
        and the same text and PNG read before and after the swatches (so the three come from one
        rendering, never from a plan replaced between two reads)."""

        def settled():
            if self.busy():
                return None
            text, png = self.text(), self.plot_png()
            swatches = self.swatches()
            if self.busy() or self.text() != text or self.plot_png() != png:
                return None
            return text, png, swatches

        return self.lab.wait(settled, "a settled plan (kernel idle, same text and plot twice)", timeout_s)

    def wait_plan(self, needle: str, timeout_s: float = 120):
        """Wait until the planner's output shows ``needle`` and a fresh table."""

        def shown():
            return needle in self.text() and self.output.find_elements("css selector", "table")

        return self.lab.wait(shown, f"the planner to show {needle!r}", timeout_s)

    def control(self, label: str):
        """The widget row whose label reads ``label``."""
        for row in self.root.find_elements("css selector", ".widget-inline-hbox"):
            labels = row.find_elements("css selector", "label")
            if labels and labels[0].text.strip() == label:
                return row
        raise LookupError(f"no control labelled {label!r}")

    def set_slider(self, label: str, value: str) -> None:
        """Type ``value`` into the slider's readout and press Enter (as a person would)."""
        from selenium.webdriver.common.keys import Keys

        readout = self.control(label).find_element("css selector", ".widget-readout")
        readout.click()
        readout.send_keys(Keys.CONTROL, "a")
        readout.send_keys(value, Keys.ENTER)

    def choose(self, label: str, option: str) -> None:
        from selenium.webdriver.support.ui import Select

        Select(self.control(label).find_element("css selector", "select")).select_by_visible_text(option)

    def disabled(self, label: str) -> bool:
        row = self.control(label)
        inputs = row.find_elements("css selector", "input, select, .widget-readout, .noUi-target, .slider")
        return any(
            (el.get_attribute("disabled") is not None) or el.get_attribute("contenteditable") == "false"
            for el in inputs
        ) or "disabled" in (row.get_attribute("class") or "")

    def swatches(self) -> dict[str, str]:
        """``{candidate: CSS colour}`` of the table's SMT swatches."""
        out = {}
        for row in self.output.find_elements("css selector", "table.pm-sizing tbody tr"):
            cells = row.find_elements("css selector", "td")
            swatch = cells[0].find_element("css selector", "span")
            out[cells[1].text] = swatch.value_of_css_property("background-color")
        return out

    def plot_png(self) -> bytes:
        img = self.output.find_elements("css selector", "img")
        src = img[-1].get_attribute("src")
        return base64.b64decode(src.split(",", 1)[1])

    def errors(self) -> list[str]:
        """Tracebacks, error outputs and widget errors anywhere in the notebook."""
        found = []
        for el in self.driver.find_elements(
            "css selector",
            ".jp-OutputArea-output",
        ):
            text = el.text
            if re.search(r"Traceback|Error displaying widget|KeyError|Exception|cannot plan", text):
                found.append(text[:400])
        return found


def bar_colours(png: bytes, colours: dict[int, str], min_run: int = 8, min_height: int = 10) -> list[int]:
    """The colours of the plot's bars, top to bottom, as keys of ``colours`` (``{key: hex}``).

    Looks at the left 55% of the image (the nodes panel): a pixel row belongs to a colour when it
    holds a horizontal run of at least ``min_run`` pixels of exactly that colour; runs of rows of
    one colour at least ``min_height`` tall are bars (the legend's patches are shorter, the p99
    panel's markers are on the right).
    """
    import matplotlib.image as mpimg
    import numpy as np

    rgb = np.round(mpimg.imread(io.BytesIO(png), format="png")[..., :3] * 255).astype(int)
    rgb = rgb[:, : int(rgb.shape[1] * 0.55)]
    targets = {k: np.array([int(h[i : i + 2], 16) for i in (1, 3, 5)]) for k, h in colours.items()}
    row_colour = []
    for y in range(rgb.shape[0]):
        found = None
        for key, target in targets.items():
            hit = np.all(rgb[y] == target, axis=-1).astype(np.int8)
            if hit.any():
                # the longest run of consecutive hits in this pixel row
                edges = np.diff(np.concatenate([[0], hit, [0]]))
                runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
                if runs.max() >= min_run:
                    found = key
                    break
        row_colour.append(found)
    bars, start = [], 0
    for y in range(1, len(row_colour) + 1):
        if y == len(row_colour) or row_colour[y] != row_colour[start]:
            if row_colour[start] is not None and y - start >= min_height:
                bars.append(row_colour[start])
            start = y
    return bars


def colour_census(png: bytes, colours: dict[int, str]) -> dict:
    """What a plot PNG holds, for a failure message: its size in pixels and, per key of
    ``colours``, how many pixels of the left 55% have exactly that colour."""
    import matplotlib.image as mpimg
    import numpy as np

    rgb = np.round(mpimg.imread(io.BytesIO(png), format="png")[..., :3] * 255).astype(int)
    left = rgb[:, : int(rgb.shape[1] * 0.55)]
    counts = {
        k: int(np.all(left == np.array([int(h[i : i + 2], 16) for i in (1, 3, 5)]), axis=-1).sum())
        for k, h in colours.items()
    }
    return {"shape": rgb.shape, "pixels_per_key": counts}


def fresh_folder(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return planner_folder(path)
