"""The public corpus run (``python -m tools.run_corpus``): zero-shot predictions, the corpus systems'
fits installed into the shipped set, leave-one-source-out, stored in ``corpus-run.json``; then the bands
over labs and the docs' corpus blocks. About 2.5 minutes on two cores."""

from __future__ import annotations

from perfmodel.evidence import corpus, lab_bands
from tools import docs_blocks


def main() -> int:
    table = corpus.run()
    print(f"wrote {corpus.install(table.attrs['fits'])}")
    print(f"wrote {corpus.save(table)}")
    print(f"wrote {lab_bands.store()}")  # the bands rest on these held-out figures too
    docs_blocks.refresh(lambda: {**docs_blocks.corpus_blocks(), **docs_blocks.band_blocks()})
    print(corpus.markdown(table))
    return 0


if __name__ == "__main__":  # pragma: no cover - the regeneration step
    raise SystemExit(main())
