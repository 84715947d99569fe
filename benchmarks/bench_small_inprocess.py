"""Small-n Logit, this tree against another checkout, alternated fit by fit in one process.

Timings of a 1 ms fit move by 5-15 % from one process to the next on a shared machine (code
and heap layout, the host's load), more than the differences worth measuring between two
versions of the package. This benchmark imports both versions into one process: the other
checkout's ``glmclass`` directory is copied to a temporary directory as ``glmclass_other``
(the package imports itself relatively, so the copy runs as it is). It then alternates
``Logit(y, X)``, ``.fit()`` and ``.bse`` of the two, fit by fit, for each n of
``bench_fit.py --small``, and prints per version the least thread CPU time of each phase
(construction, fit, standard errors) and of their sum.

Run from the repository root, one BLAS thread::

    git worktree add /tmp/before 4b867b6
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_small_inprocess.py --other /tmp/before

With ``--processes K`` the comparison runs in K fresh processes and the median ratio per n is
printed last: the ratio of one process moves by a few per cent from one process to the next.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: rows -> slopes, as bench_fit.py --small
SMALL = {50: 2, 200: 5, 1000: 10}


def phases(gc, X: np.ndarray, y: np.ndarray) -> tuple[int, int, int]:
    """Thread CPU nanoseconds of construction, fit and ``bse``."""
    t0 = time.thread_time_ns()
    model = gc.Logit(y, X)
    t1 = time.thread_time_ns()
    res = model.fit()
    t2 = time.thread_time_ns()
    res.bse  # noqa: B018
    return t1 - t0, t2 - t1, time.thread_time_ns() - t2


def compare(other: Path, fits: int) -> list[dict]:
    """Both versions alternated ``fits`` times per n (after a tenth as many warm-up fits)."""
    tmp = Path(tempfile.mkdtemp())
    shutil.copytree(other / "glmclass", tmp / "glmclass_other",
                    ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(tmp))
    import glmclass_other

    import glmclass

    warnings.simplefilter("ignore")
    versions = {"this tree": glmclass, "other": glmclass_other}
    out = []
    for n, p in SMALL.items():
        rng = np.random.default_rng(20261127)
        X = np.c_[np.ones(n), rng.standard_normal((n, p))]
        y = (rng.random(n) < 1 / (1 + np.exp(-X @ rng.uniform(-0.5, 0.5, p + 1)))).astype(float)
        times = {k: [] for k in versions}
        for i in range(fits + fits // 10):
            order = list(versions.items()) if i % 2 else list(versions.items())[::-1]
            for name, gc in order:
                t = phases(gc, X, y)
                if i >= fits // 10:
                    times[name].append(t)
        row = {"n": n, "p": p, "fits": fits}
        for name, t in times.items():
            a = np.array(t) / 1e3
            row[name] = {"construct_us": float(a[:, 0].min()), "fit_us": float(a[:, 1].min()),
                         "bse_us": float(a[:, 2].min()), "total_us": float(a.sum(1).min())}
        row["this / other"] = row["this tree"]["total_us"] / row["other"]["total_us"]
        out.append(row)
        print(json.dumps(row), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--other", type=Path, required=True, help="root of the other checkout")
    ap.add_argument("--fits", type=int, default=3000)
    ap.add_argument("--processes", type=int, default=1,
                    help="run the comparison in this many fresh processes, one after the "
                         "other, and print the median ratio per n (a process's own heap and "
                         "code layout moves a 1 ms fit by a few per cent)")
    a = ap.parse_args()
    if a.processes <= 1:
        compare(a.other, a.fits)
        return
    ratios: dict[int, list[float]] = {}
    for _ in range(a.processes):
        out = subprocess.run([sys.executable, __file__, "--other", str(a.other),
                              "--fits", str(a.fits)], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            row = json.loads(line)
            ratios.setdefault(row["n"], []).append(row["this / other"])
            print(line, flush=True)
    print(json.dumps({"median this / other": {n: float(np.median(r)) for n, r in ratios.items()},
                      "per process": ratios}), flush=True)


if __name__ == "__main__":
    main()
