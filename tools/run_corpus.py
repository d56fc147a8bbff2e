"""The public corpus run (``python -m tools.run_corpus``): zero-shot predictions, the corpus systems'
fits installed into the shipped set, leave-one-source-out, stored in ``corpus-run.json``; then the bands
over labs, the split cross-validation (``split-bands.json``) and the docs' corpus blocks. About 3.5 minutes
on two cores."""

from __future__ import annotations

from perfmodel.evidence import corpus, lab_bands, split_cv
from tools import docs_blocks


def main() -> int:
    table = corpus.run()
    print(f"wrote {corpus.install(table.attrs['fits'])}")
    print(f"wrote {corpus.save(table)}")
    print(f"wrote {lab_bands.store()}")  # the bands rest on these held-out figures too
    print(f"wrote {split_cv.store()}")  # a lab fitted on a third of its figures (about a minute)
    docs_blocks.refresh(lambda: {**docs_blocks.corpus_blocks(), **docs_blocks.band_blocks()})
    print(corpus.markdown(table))
    return 0


if __name__ == "__main__":  # pragma: no cover - the regeneration step
    raise SystemExit(main())
