"""Design-building time and peak memory of the two formula engines, patsy and formulaic.

Each measurement runs in a fresh child process, the engines alternating, so that neither
profits from the other's warm caches. A child builds a synthetic DataFrame (20 normal columns
and 4 string columns of 3 levels, fixed seed), builds the design of
``y ~ x0 + ... + x19 + C(a) + b + c + d`` (29 columns) once on 200 rows to import and warm up,
then measures one ``glmclass.formula.design.build_design`` on all rows: wall time and the peak
RSS growth (``/proc/self/clear_refs`` + ``VmHWM``) relative to the DataFrame's size. The
reported numbers are medians over ``--repeats`` children.

Run from the repository root::

    python benchmarks/bench_formula.py                      # n = 1e4, 1e5, 1e6; 1 BLAS thread
    python benchmarks/bench_formula.py --rows 1000000 --repeats 5 --threads 2
    python benchmarks/bench_formula.py --strings object     # string columns as object dtype
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _measure import _mem, _reset_peak

ROOT = Path(__file__).resolve().parent.parent
FORMULA = "y ~ " + " + ".join(f"x{i}" for i in range(20)) + " + C(a) + b + c + d"


def child(engine: str, rows: int, strings: str = "default") -> dict:
    """One measurement (in this process)."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import pandas as pd

    from glmclass.formula.design import build_design

    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"x{i}": rng.normal(size=rows) for i in range(20)})
    for c in "abcd":
        df[c] = pd.Series(rng.choice(["lo", "mid", "hi"], rows))
        if strings != "default":
            df[c] = df[c].astype(strings)
    df["y"] = rng.integers(0, 2, rows)
    build_design(FORMULA, df.head(200), engine=engine)  # imports and caches
    base = _reset_peak()
    start = time.perf_counter()
    d = build_design(FORMULA, df, engine=engine)
    seconds = time.perf_counter() - start
    peak = _mem()[1] - base
    return {"engine": engine, "rows": rows, "seconds": seconds,
            "peak_over_frame": peak / df.memory_usage(deep=True).sum(),
            "shape": list(d.exog.shape), "string_dtype": str(df["a"].dtype)}


def run(engine: str, rows: int, threads: int, strings: str = "default") -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, "--child", engine, str(rows), strings],
                         env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"the {engine} child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--strings", default="default",
                    help="dtype of the string columns: default (pandas' own: 'str' in pandas 3), "
                         "object or category")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help="write the table as JSON")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.child[2])))
        return
    print(f"# {platform.node()} {platform.machine()} python {platform.python_version()}; "
          f"OPENBLAS_NUM_THREADS={args.threads}; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"# formula: {FORMULA}")
    rows_out = []
    for rows in args.rows:
        times: dict = {"patsy": [], "formulaic": []}
        peaks: dict = {"patsy": [], "formulaic": []}
        for _ in range(args.repeats):
            for engine in ("patsy", "formulaic"):
                r = run(engine, rows, args.threads, args.strings)
                times[engine].append(r["seconds"])
                peaks[engine].append(r["peak_over_frame"])
        med = {e: statistics.median(t) for e, t in times.items()}
        row = {"rows": rows, "patsy_s": med["patsy"], "formulaic_s": med["formulaic"],
               "ratio": med["patsy"] / med["formulaic"],
               "patsy_peak/frame": statistics.median(peaks["patsy"]),
               "formulaic_peak/frame": statistics.median(peaks["formulaic"]),
               "string_dtype": r["string_dtype"]}
        rows_out.append(row)
        print(f"n={rows:>9,}  patsy {med['patsy']:8.3f} s  formulaic {med['formulaic']:7.3f} s  "
              f"patsy/formulaic {row['ratio']:5.1f}x  peak/frame patsy "
              f"{row['patsy_peak/frame']:.2f} formulaic {row['formulaic_peak/frame']:.2f}  "
              f"(strings: {row['string_dtype']})", flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows_out, indent=1))


if __name__ == "__main__":
    main()
