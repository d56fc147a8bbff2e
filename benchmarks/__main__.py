"""Run every speed benchmark: ``python -m benchmarks`` (``make bench``).

Each ``benchmarks/bench_*.py`` module has a ``main()`` that prints its figures
with the ratio to a baseline measured in the same run.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    only = set(sys.argv[1:])
    for name in names:
        if only and name not in only:
            continue
        print(f"\n===== {name} =====", flush=True)
        importlib.import_module(f"benchmarks.{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
