"""Regeneration scripts, outside the library: the shipped refit, the corpus run, the bands over labs,
the docs' generated blocks and the simulator-agreement study. Run from the repository root, e.g.
``python -m tools.refit``; the library itself never writes under ``docs/``."""
