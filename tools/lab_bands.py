"""Regenerate ``perfmodel/parameters/lab-bands.json`` and its docs blocks from the stored held-out runs
(``python -m tools.lab_bands``)."""

from __future__ import annotations

from perfmodel.evidence import lab_bands
from tools import docs_blocks


def main() -> int:
    print(f"wrote {lab_bands.store()}")
    docs_blocks.refresh(docs_blocks.band_blocks)
    print(lab_bands.docs_markdown())
    return 0


if __name__ == "__main__":  # pragma: no cover - the regeneration step
    raise SystemExit(main())
