"""What ``import perfmodel`` pulls in.

Every local worker process and every command-line call pays the package's
import (the fork server's start is most of a session's first pool:
docs/distributed.md). Modules only some calls need are imported where they
are used; this test catches one that creeps back to the top of a module.
"""

from __future__ import annotations

import subprocess
import sys

#: imported on first use only: numba (the MVA and fast-path kernels), scipy.optimize (fits),
#: scipy.stats (nothing: scipy.special has the distribution functions), plotting
DEFERRED = ("numba", "scipy.stats", "scipy.optimize", "matplotlib", "seaborn", "papermill", "distributed")


def test_import_perfmodel_defers_the_heavy_modules():
    code = (
        "import sys, perfmodel, perfmodel.model.predict, perfmodel.sim, perfmodel.run.execution, "
        "perfmodel.plan.sweeps; "
        f"print(' '.join(m for m in {DEFERRED!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == []


def test_the_deferred_kernels_still_run():
    import numpy as np

    from perfmodel import queueing
    from perfmodel.sim.fast import lindley

    # M/M/1 closed with one customer and a think time: X = 1 / (D + Z)
    x = queueing.closed_network([0.01], [1], 0.09, 1).throughput
    assert np.isclose(float(np.ravel(x)[-1]), 10.0)
    # Lindley: arrivals every 1 s, service 2 s -> the n-th customer waits n - 1 s
    assert lindley(np.arange(5.0), np.full(5, 2.0)).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
