"""One IRLS pass of a Dask Logit fit against dask's own X'X passes, alternated on one cluster.

A fit's iterations are single passes whose times swing by 20 % from one to the next on a
2-core machine, so one fit says little about the ratio of a pass to dask's own X'X pass. This
benchmark builds ``Logit.from_formula("y ~ x0 + ... + x9 + C(g)", dd.read_parquet(DIR))`` once
(nothing persisted), then ``--repeats`` times, in turn:

- dask reads the numeric columns x0..x9 of every file and forms each partition's X'X of
  [1, x0..x9] (``map_partitions``-style delayed tasks, summed on the client);
- the same X'X, reading every column the fit reads (y and g too);
- one pass of glmclass's IRLS (``rows.gram.fused_pass`` with the fit's own block terms, at
  fixed coefficients): each partition read, its design built, and X'WX, X'Wz and the
  deviance formed where it lives;
- with ``--strings-too``, the same pass of a second model built with no level codes held
  (``PartitionDesign.level_columns`` giving none): the strings of g read every pass.

It prints one JSON line per round and a summary with the medians and the ratios of a pass to
each baseline. A LocalCluster of ``--workers`` processes, 1 thread and ``--memory-limit``
each, OPENBLAS_NUM_THREADS=1 in the workers (distributed's default).

Example (the numbers in ``benchmarks/README.md``)::

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dask_passes.py \\
        --data /work/bench_io/n3e7 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
from bench_dask import IO_COLS, IO_FORMULA, _xtx


def passes(data: str, workers: int, memory_limit: str, repeats: int,
           strings_too: bool = False) -> dict:
    """The alternated timings (see the module docstring); returns the summary."""
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import glmclass as gc
    import glmclass.data.dask as D
    from glmclass.rows.gram import fused_pass
    from glmclass.solvers.irls_exact import block_terms

    D.PERSIST = "0"
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit=memory_limit)
    client = Client(cluster)
    ddf = dd.read_parquet(data)
    ddf.partitions[0]["y"].sum().compute()  # warm up: workers import pandas, pyarrow, dask
    model = gc.Logit.from_formula(IO_FORMULA, ddf)
    rows = model.problem.rows
    terms = block_terms(rows, model.family)
    coef = np.zeros(rows.n_cols)
    coef[0] = -0.4  # near the estimates: an iteration's work, not the start pass's

    def xtx(columns):
        parts = dd.read_parquet(data, columns=columns).to_delayed()
        return sum(dask.compute(*[dask.delayed(_xtx)(p) for p in parts]))

    steps = {
        "dask X'X, numeric columns read": lambda: xtx(IO_COLS),
        "dask X'X, every used column read": lambda: xtx(["y", "g", *IO_COLS]),
        "glmclass IRLS pass": lambda: fused_pass(
            rows, None, lambda b, e: terms(b, e, False, True, wz=True), coef=coef),
    }
    if strings_too:
        from glmclass.formula.incremental import PartitionDesign

        held = PartitionDesign.level_columns
        PartitionDesign.level_columns = lambda self: {}
        try:
            plain = gc.Logit.from_formula(IO_FORMULA, ddf).problem.rows
        finally:
            PartitionDesign.level_columns = held
        steps["glmclass IRLS pass, strings read every pass"] = lambda: fused_pass(
            plain, None, lambda b, e: terms(b, e, False, True, wz=True), coef=coef)
    times: dict[str, list[float]] = {k: [] for k in steps}
    for rep in range(repeats):
        for name, step in steps.items():
            t0 = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t0)
        print(json.dumps({"round": rep, **{k: v[-1] for k, v in times.items()}}), flush=True)
    client.close()
    cluster.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    one = med["glmclass IRLS pass"]
    out = {"data": data, "workers": workers, "memory_limit": memory_limit,
           "repeats": repeats, "load1": os.getloadavg()[0], "median_s": med,
           "pass / numeric X'X": one / med["dask X'X, numeric columns read"],
           "pass / used-column X'X": one / med["dask X'X, every used column read"],
           "all_s": times}
    if strings_too:
        out["strings read every pass / level codes held"] = (
            med["glmclass IRLS pass, strings read every pass"] / one)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="1.5GB")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--strings-too", action="store_true",
                    help="also time the pass of a model that holds no level codes")
    a = ap.parse_args(argv)
    print(json.dumps(passes(a.data, a.workers, a.memory_limit, a.repeats, a.strings_too)),
          flush=True)


if __name__ == "__main__":
    main()
