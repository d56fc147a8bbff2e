"""Reads the machine it runs on into a platform file of the hardware catalog (``perfmodel probe``).

Three steps, each its own module: :mod:`.collect` runs the commands (lscpu, lsblk, nvme id-ctrl)
and reads the files (/proc, /sys) with timeouts, recording what it could not use and why;
:mod:`.parse` turns each text into plain numbers; :mod:`.assemble` builds the catalog entry, with
a source for every value, and names what the machine cannot tell. :mod:`.output` writes it.

>>> draft = probe(choices=Choices(network="eth-10g", devices=("nvme-1p6tb-generic",)))  # doctest: +SKIP
>>> Path("box.yaml").write_text(to_yaml(draft)); load_platform("box.yaml")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from perfmodel.inputs.probe.assemble import Choices, Draft, assemble
from perfmodel.inputs.probe.collect import DEFAULT_TIMEOUT_S, Attempt, Raw, Runner, collect
from perfmodel.inputs.probe.output import summary_lines, to_yaml


def probe(
    root: Path | str = "/",
    choices: Choices | None = None,
    runner: Runner | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Draft:
    """The platform of the machine at ``root`` (``/``: this one; a folder: a snapshot of its
    /proc and /sys, where no command runs), with the user's ``choices``."""
    return assemble(collect(root, runner, timeout_s), choices)


__all__ = [
    "Attempt",
    "Choices",
    "Draft",
    "Raw",
    "Runner",
    "assemble",
    "collect",
    "probe",
    "summary_lines",
    "to_yaml",
]
