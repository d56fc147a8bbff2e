"""The docs' generated blocks: every ``<!-- generated:NAME -->`` block in ``docs/*.md``, rewritten from
the stored runs and records (``python -m tools.docs_blocks``).

The library builds each block's Markdown (pure functions returning text); only this script and the other
regeneration scripts in ``tools/`` write files under ``docs/``. A block may live in any ``docs/*.md``
file: it is found by its marker, which must occur in exactly one file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from perfmodel.evidence.stored_runs import replace_block

DOCS = Path(__file__).resolve().parents[1] / "docs"


def home(name: str, docs: Path = DOCS) -> Path:
    """The one ``docs/*.md`` file holding block ``name`` (ValueError: none or several)."""
    marker = f"<!-- generated:{name} -->"
    found = [p for p in sorted(docs.glob("*.md")) if marker in p.read_text(encoding="utf-8")]
    if len(found) != 1:
        where = ", ".join(p.name for p in found) or "no file"
        raise ValueError(f"docs: block {name!r} must be in exactly one of {docs}/*.md, found in {where}")
    return found[0]


def write(blocks: Mapping[str, str], docs: Path = DOCS) -> list[Path]:
    """Set each block's body in its file; return the files that changed."""
    texts: dict[Path, str] = {}
    for name, body in blocks.items():
        path = home(name, docs)
        texts[path] = replace_block(texts.get(path) or path.read_text(encoding="utf-8"), name, body)
    changed = [p for p, text in texts.items() if text != p.read_text(encoding="utf-8")]
    for path in changed:
        path.write_text(texts[path], encoding="utf-8")
    return changed


def corpus_blocks() -> dict[str, str]:
    """The blocks that rest on the stored corpus run and the first-look record."""
    from perfmodel.evidence import corpus, first_look, labs, split_cv

    return {
        "corpus": corpus.markdown(corpus.load()),
        "split-cv": split_cv.markdown(split_cv.load()),
        "labs": labs.markdown(),
        "mechanism-labs": labs.mechanisms_markdown(),
        "first-look": first_look.markdown(),
    }


def band_blocks() -> dict[str, str]:
    """The blocks of the bands over labs and the accuracy targets."""
    from perfmodel.evidence import lab_bands, targets

    return {"lab-bands": lab_bands.docs_markdown(), "targets": targets.markdown()}


def all_blocks() -> dict[str, str]:
    """Every block of docs/validation.md from what is stored (no refit, no simulation)."""
    from perfmodel.evidence.stored_runs import docs_blocks

    return {**docs_blocks(), **corpus_blocks(), **band_blocks()}


def refresh(build: Callable[[], Mapping[str, str]] = all_blocks) -> list[Path]:
    """Write the blocks ``build`` returns and say which files changed."""
    changed = write(build())
    print("rewrote " + (", ".join(str(p) for p in changed) if changed else "nothing: the docs are current"))
    return changed


if __name__ == "__main__":  # pragma: no cover - the regeneration step
    refresh()
    sys.exit(0)
