"""Refit the shipped parameter set (``python -m tools.refit [OUT.json] [--fit-only] [--workers N]``).

Without ``--fit-only`` (and without ``OUT``) also runs and stores the leave-one-group-out and
leave-one-out cross-validations and the model discrepancy
(:func:`perfmodel.evidence.stored_runs.regenerate`; minutes on two cores), then the public corpus run
(``tools/run_corpus.py``) and every generated block of the docs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from perfmodel.evidence.calibration import fit_shipped, save_parameter_set
from perfmodel.inputs._data import PARAMETERS_DIR


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.refit", description=__doc__)
    parser.add_argument("out", nargs="?", default=None, help="write the fitted set here instead")
    parser.add_argument("--fit-only", action="store_true", help="skip cross-validation, corpus and docs")
    parser.add_argument("--workers", type=int, default=None, help="local worker processes for the refits")
    args = parser.parse_args(argv)
    out = args.out or str(PARAMETERS_DIR / "calibrated.json")
    fitted = fit_shipped()
    print(fitted.report())
    if not fitted.converged_:
        raise SystemExit("the shipped fit did not converge: nothing written")
    save_parameter_set(fitted, out)
    print(f"wrote {out}")
    if args.out is None and not args.fit_only:
        from perfmodel.evidence.stored_runs import regenerate
        from tools import docs_blocks, run_corpus

        # worker processes re-import this module as their __main__ after the fork server
        # preloaded it; runpy's warning about that is harmless noise
        os.environ["PYTHONWARNINGS"] = "ignore:'tools.refit' found in sys.modules:RuntimeWarning"
        regenerate(workers=args.workers)
        run_corpus.main()  # the corpus systems' fits and tables depend on the shipped fit
        docs_blocks.refresh()
    return 0


if __name__ == "__main__":  # pragma: no cover - the regeneration step
    raise SystemExit(main())
