"""Out-of-core and distributed Logit fits on Dask: time per iteration, total time, peak memory.

Subcommands (each prints JSON lines; ``run`` is the whole benchmark, every measurement in a
fresh child process):

``write --rows N --out DIR``
    A Parquet dataset of N rows: y (0/1) and 24 standard-normal float64 features x1..x24,
    written in files of ``--rows-per-file`` rows (one Dask partition each), never holding more
    than one file's rows in memory. Logistic truth: intercept -0.5, slopes 0.3 (-1)^j / sqrt(j).
``fit --data DIR``
    ``gc.Logit.from_formula("y ~ x1 + ... + x24", dd.read_parquet(DIR)).fit(disp=True)`` with the
    local threaded scheduler (``--workers 0``) or a LocalCluster of ``--workers`` processes with
    one thread each; ``--persist`` auto/1/0. Reports the model build time, every iteration's
    time (from the ``disp`` lines), the fit time and the peak RSS of this process and its
    children (sampled every 0.1 s; for the threaded scheduler also the kernel's VmHWM).
``memory --rows N``
    The same fit on the same rows read into pandas first (the in-memory baseline), and on
    ``dd.from_pandas`` of them (Dask on data already in memory): the overhead of Dask.
``write-io --rows N --files F --out DIR``
    The dataset of issue 24: 10 standard-normal x0..x9, a 0/1 y and a string column g of 5
    levels, N rows in F Parquet files (one file's rows in memory at a time).
``io --data DIR``
    In one run (so the machine's load is shared alike): dask's own baselines (read + sum of
    the used columns; ``g.value_counts()``; a ``map_partitions`` X'X of the numeric design,
    read from Parquet each time, once reading the numeric columns only and once every column
    the fit reads) next to glmclass's model build (its design pass timed
    apart), each fit pass, the total fit, and the peak memory of the workers (their RSS
    sampled every 0.1 s), and glmclass's passes over the partitions (build, fit, and the
    log-likelihoods asked after the fit; ``glmclass.rows.dask.counting_passes``). A
    LocalCluster of ``--workers`` processes, 1 thread each,
    ``--memory-limit`` each; ``--workers 0``: the threaded scheduler in this process.
``part --file FILE``
    One partition in this process, deterministic timings (best of ``--repeats``, each result
    dropped before the next run): the Parquet read of the used columns (pyarrow, and dask's
    own task on the synchronous scheduler), glmclass's design build of the partition
    (``data.parts.formula_part``), the IRLS block kernel of one pass on it
    (``rows.gram.fused_pass``), and the baseline's read + X'X of the same file.
``run``
    The comparisons: writes the 1e6- and 1e7-row datasets if absent, runs ``memory`` on 1e6
    rows ``--repeats`` times in fresh child processes for OPENBLAS_NUM_THREADS=1 and 2, and
    ``fit`` on 1e7 rows with 1 and 2 local workers, persisted and re-read.

Example (what ``benchmarks/README.md`` reports)::

    python benchmarks/bench_dask.py write --rows 1000000 --out /work/bench/dask_1e6
    python benchmarks/bench_dask.py memory --data /work/bench/dask_1e6
    python benchmarks/bench_dask.py fit --data /work/bench/dask_1e6 --workers 2
    python benchmarks/bench_dask.py write-io --rows 3e6 --files 30 --out /work/bench_io/n3e6
    python benchmarks/bench_dask.py io --data /work/bench_io/n3e6 --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time

COLS = [f"x{j}" for j in range(1, 25)]
FORMULA = "y ~ " + " + ".join(COLS)
IO_COLS = [f"x{j}" for j in range(10)]
IO_LEVELS = ["alpha", "beta", "gamma", "delta", "epsilon"]
IO_FORMULA = "y ~ " + " + ".join(IO_COLS) + " + C(g)"


def _rss_tree() -> int:
    import psutil

    me = psutil.Process()
    total = 0
    for p in [me] + me.children(recursive=True):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


class PeakSampler:
    """Peak of the summed RSS of this process and its children, sampled every ``dt`` s."""

    def __init__(self, dt: float = 0.1) -> None:
        self.dt, self.peak, self._stop = dt, 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss_tree())
            self._stop.wait(self.dt)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, _rss_tree())


def _vmhwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) * 1024
    return 0


def write(rows: int, out: str, rows_per_file: int, seed: int, first_file: int = 0) -> dict:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(out, exist_ok=True)
    beta = 0.3 * np.array([(-1) ** j / np.sqrt(j) for j in range(1, 25)])
    rng = np.random.default_rng(seed)
    t0, written, k = time.perf_counter(), 0, first_file
    while written < rows:
        n = min(rows_per_file, rows - written)
        X = rng.standard_normal((n, 24))
        eta = X @ beta - 0.5
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
        table = pa.table({"y": y, **{c: X[:, j] for j, c in enumerate(COLS)}})
        pq.write_table(table, os.path.join(out, f"part-{k:05d}.parquet"), compression="none",
                       row_group_size=n)
        written += n
        k += 1
        del X, eta, y, table
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    return {"what": "write", "rows": rows, "files": k - first_file, "bytes": size,
            "seconds": time.perf_counter() - t0}


def write_io(rows: int, files: int, out: str, seed: int) -> dict:
    """Issue 24's dataset: x0..x9, y (0/1), g (5 string levels); N rows in F files."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(out, exist_ok=True)
    beta = 0.3 * np.array([(-1) ** j / np.sqrt(j + 1) for j in range(10)])
    shift = np.linspace(-0.4, 0.4, len(IO_LEVELS))
    t0, written = time.perf_counter(), 0
    for k in range(files):
        n = rows // files + (1 if k < rows % files else 0)
        rng = np.random.default_rng([seed, k])
        X = rng.standard_normal((n, 10))
        g = rng.integers(0, len(IO_LEVELS), n)
        eta = X @ beta - 0.5 + shift[g]
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.int8)
        table = pa.table({"y": y, **{c: X[:, j] for j, c in enumerate(IO_COLS)},
                          "g": np.asarray(IO_LEVELS, dtype=object)[g]})
        pq.write_table(table, os.path.join(out, f"part-{k:05d}.parquet"), row_group_size=n)
        written += n
        del X, g, eta, y, table
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    return {"what": "write-io", "rows": written, "files": files, "bytes": size,
            "seconds": time.perf_counter() - t0}


class WorkerPeak:
    """Peak summed RSS of the given processes (the cluster's workers), sampled every ``dt``
    s, and the peak of any one of them."""

    def __init__(self, pids: list[int], dt: float = 0.1) -> None:
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.dt, self.total, self.single, self._stop = dt, 0, 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        rss = []
        for p in self.procs:
            try:
                rss.append(p.memory_info().rss)
            except Exception:  # noqa: BLE001 - a worker restarting
                pass
        self.total = max(self.total, sum(rss))
        self.single = max([self.single] + rss)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.dt)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join()
        self._sample()


def _xtx(df):
    import numpy as np

    X = np.column_stack([np.ones(len(df)), df[IO_COLS].to_numpy(dtype=float)])
    return X.T @ X


def io(data: str, workers: int, memory_limit: str, persist: str, repeats: int) -> list[dict]:
    """Dask's baselines and glmclass's build and fit passes, on the same cluster."""
    import contextlib

    import dask
    import dask.dataframe as dd

    import glmclass as gc
    import glmclass.data.dask as D
    from glmclass.rows.dask import counting_passes

    D.PERSIST = persist
    client = cluster = None
    if workers:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit=memory_limit)
        client = Client(cluster)
        pids = list(client.run(os.getpid).values())
    else:
        dask.config.set(scheduler="threads")
        pids = [os.getpid()]
    used = ["y", "g"] + IO_COLS
    rows, meta = [], {"data": data, "workers": workers, "memory_limit": memory_limit,
                      "glmclass": os.path.dirname(gc.__file__),
                      "persist": persist, "load1": os.getloadavg()[0]}

    def timed(what, fn):
        for rep in range(repeats):
            t0 = time.perf_counter()
            fn()
            r = {"what": "io", "step": what, "seconds": time.perf_counter() - t0,
                 "repeat": rep, **meta}
            rows.append(r)
            print(json.dumps(r), flush=True)

    ddf = dd.read_parquet(data)
    ddf.partitions[0]["y"].sum().compute()  # warm up: workers import pandas, pyarrow, dask
    timed("dask read+sum used columns",
          lambda: dd.read_parquet(data, columns=used)[["y"] + IO_COLS].sum().compute())
    timed("dask g.value_counts",
          lambda: dd.read_parquet(data, columns=["g"])["g"].value_counts().compute())
    def xtx_pass():
        parts = dd.read_parquet(data, columns=IO_COLS).to_delayed()
        return sum(dask.compute(*[dask.delayed(_xtx)(p) for p in parts]))

    timed("dask read+map_partitions X'X", xtx_pass)

    def xtx_used_pass():  # the same X'X, reading every column the fit reads (y and g too)
        parts = dd.read_parquet(data, columns=used).to_delayed()
        return sum(dask.compute(*[dask.delayed(_xtx)(p) for p in parts]))

    timed("dask read used columns+map_partitions X'X", xtx_used_pass)
    for rep in range(repeats):
        with WorkerPeak(pids) as peak:
            t0 = time.perf_counter()
            with counting_passes() as build_passes:
                model = gc.Logit.from_formula(IO_FORMULA, ddf)
            t_build = time.perf_counter() - t0
            timings = dict(getattr(model.data, "timings", {}) or {})
            out = _Tee(echo=True)
            t1 = time.perf_counter()
            with contextlib.redirect_stdout(out), counting_passes() as fit_passes:
                res = model.fit(disp=True)
            t_fit = time.perf_counter() - t1
            t2 = time.perf_counter()
            with counting_passes() as ll_passes:
                lls = float(res.llf), float(res.llnull), float(res.null_deviance)
            t_ll = time.perf_counter() - t2
        its = _iterations(out.getvalue())
        r = {"what": "io", "step": "glmclass", "build_s": t_build, "timings": timings,
             "persisted": bool(getattr(model.data, "persisted", False)), "fit_s": t_fit,
             "n_iter": int(res.n_iter), "iter_s": its, "peak_workers_rss": peak.total,
             "passes": {"build": build_passes, "fit": fit_passes, "llf_llnull_null": ll_passes},
             "llf_llnull_null": lls, "llf_llnull_null_s": t_ll,
             "peak_worker_rss": peak.single, "params": [float(v) for v in res.params],
             "disp": out.getvalue(), "repeat": rep, **meta}
        rows.append(r)
        print(json.dumps(r), flush=True)
        del model, res
    if client is not None:
        client.close()
        cluster.close()
    return rows


def part_profile(path: str, repeats: int) -> dict:
    """Where one pass's time goes on one partition (one Parquet file), in this process: the
    steps of a pass in their order (read, design, IRLS kernel; then the baseline's read and
    X'X), ``repeats`` times, every result dropped before the next step; per step the best
    wall time (``perf_counter``) and the best CPU time of this process (``process_time``,
    Arrow's threads included: on a loaded machine the wall time of a 50 ms step includes
    other processes' time slices)."""
    import dask
    import dask.dataframe as dd
    import numpy as np
    import pyarrow.parquet as pq

    import glmclass as gc
    from glmclass.data.parts import formula_part
    from glmclass.rows.blocks import ArrayBlocks
    from glmclass.rows.gram import fused_pass

    dask.config.set(scheduler="synchronous")
    used = ["y", "g"] + IO_COLS
    ddf = dd.read_parquet(path)
    model = gc.Logit.from_formula(IO_FORMULA, ddf)
    recipe, family = model.data.recipe, model.family
    (task,) = ddf[used].to_delayed()
    p = len(recipe.column_names)
    coef = np.zeros(p)

    def terms(b, eta):
        w, u, dev = family.irls_terms(b.y, eta, b.weights)
        return w, w * (eta - b.offset) + u, dev

    best: dict[str, list[float]] = {}

    def timed(name, fn):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        got = best.setdefault(name, [float("inf"), float("inf")])
        got[0], got[1] = min(got[0], wall), min(got[1], cpu)
        return out

    n = 0
    def one_pass() -> int:
        frame = timed("read (dask task)", task.compute)
        part = timed("design (formula_part)",
                     lambda: formula_part(frame, recipe, {}, "drop"))[0]
        rows = ArrayBlocks(part[0], np.asarray(part[1], dtype=float))
        timed("IRLS kernel (fused_pass)", lambda: fused_pass(rows, None, terms, coef=coef))
        return part[0].shape[0]

    for _ in range(repeats):
        n = one_pass()
        timed("baseline read + X'X", lambda: _xtx(pq.read_table(path, columns=IO_COLS)
                                                   .to_pandas()))
    out = {"what": "part", "file": path, "rows": n, "cols": p, "repeats": repeats,
           "glmclass": os.path.dirname(gc.__file__), "load1": os.getloadavg()[0],
           "wall_s": {k: v[0] for k, v in best.items()},
           "cpu_s": {k: v[1] for k, v in best.items()}}
    for kind in ("wall_s", "cpu_s"):
        t = out[kind]
        t["pass"] = sum(v for k, v in t.items() if not k.startswith("baseline"))
        t["pass / baseline"] = t["pass"] / t["baseline read + X'X"]
    return out


def _iterations(text: str) -> list[float]:
    """Per-iteration times from ``fit(disp=True)`` output (differences of the time column)."""
    times = [float(m.group(1)) for m in re.finditer(r"^\s*\d+\s+\S+\s+\S+\s+\S+\s+\d+\s+(\S+)$",
                                                      text, re.M)]
    return [b - a for a, b in zip([0.0] + times[:-1], times, strict=True)]


class _Tee:
    """Collects the ``disp`` lines and echoes them to stderr as they come (long runs)."""

    def __init__(self, echo: bool) -> None:
        self.parts, self.echo = [], echo

    def write(self, text: str) -> int:
        self.parts.append(text)
        if self.echo:
            sys.stderr.write(text)
            sys.stderr.flush()
        return len(text)

    def flush(self) -> None:
        pass

    def getvalue(self) -> str:
        return "".join(self.parts)


def _pass_log():
    """A local-scheduler callback that logs every Dask compute (one pass over the partitions,
    or a small graph) with its duration and the process's RSS, to stderr."""
    from dask.callbacks import Callback

    class PassLog(Callback):
        def _start(self, dsk):
            self.t0, self.n = time.perf_counter(), len(dsk)

        def _finish(self, dsk, state, errored):
            sys.stderr.write(f"pass: {self.n} tasks, {time.perf_counter() - self.t0:.2f} s, "
                             f"rss {_rss_tree() / 1e9:.2f} GB\n")
            sys.stderr.flush()

    return PassLog()


def _fit_and_time(build, echo: bool = False) -> dict:
    import contextlib

    t0 = time.perf_counter()
    model = build()
    t_build = time.perf_counter() - t0
    out = _Tee(echo)
    if echo:
        sys.stderr.write(f"build: {t_build:.2f} s\n")
    t1 = time.perf_counter()
    with contextlib.redirect_stdout(out):
        res = model.fit(disp=True)
    t_fit = time.perf_counter() - t1
    # the results' llf is computed lazily: one more pass, timed on its own
    t2 = time.perf_counter()
    llf = float(res.llf)
    t_llf = time.perf_counter() - t2
    its = _iterations(out.getvalue())
    return {"build_s": t_build, "fit_s": t_fit, "llf_s": t_llf, "n_iter": res.n_iter,
            "iter_s": its, "deviance": float(res.deviance), "llf": llf,
            "params": [float(v) for v in res.params]}


def fit(data: str, workers: int, persist: str) -> dict:
    import contextlib

    import dask
    import dask.dataframe as dd

    import glmclass as gc
    import glmclass.data.dask as D

    D.PERSIST = persist
    client = cluster = None
    if workers:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit="8GiB")
        client = Client(cluster)
    else:
        dask.config.set(scheduler="threads")
    log = contextlib.nullcontext() if workers else _pass_log()
    with PeakSampler() as peak, log:
        out = _fit_and_time(lambda: gc.Logit.from_formula(FORMULA, dd.read_parquet(data)),
                            echo=True)
    out.update({"what": "fit", "data": data, "workers": workers, "persist": persist,
                "peak_rss_tree": peak.peak, "vmhwm_self": _vmhwm()})
    if client is not None:
        client.close()
        cluster.close()
    return out


def memory(data: str) -> list[dict]:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd

    import glmclass as gc

    df = pd.read_parquet(data)
    y = df["y"].to_numpy()
    X = np.column_stack([np.ones(len(df)), df[COLS].to_numpy()])
    parts = len(os.listdir(data))
    cases = {  # name: (scheduler, model builder)
        "pandas formula": (None, lambda: gc.Logit.from_formula(FORMULA, df)),
        "numpy arrays": (None, lambda: gc.Logit(y, X)),
        "dask arrays, 1 thread": ("sync", lambda: gc.Logit(
            da.from_array(y, chunks=len(y) // parts),
            da.from_array(X, chunks=(len(y) // parts, -1)))),
        "dask from_pandas formula, 1 thread": ("sync", lambda: gc.Logit.from_formula(
            FORMULA, dd.from_pandas(df, npartitions=parts))),
        "dask from_pandas formula, 2 threads": ("threads", lambda: gc.Logit.from_formula(
            FORMULA, dd.from_pandas(df, npartitions=parts))),
        "dask read_parquet formula, 2 threads": ("threads", lambda: gc.Logit.from_formula(
            FORMULA, dd.read_parquet(data))),
    }
    rows = []
    for kind, (scheduler, build) in cases.items():
        with dask.config.set(scheduler=scheduler or "sync"):
            r = _fit_and_time(build)
        r.update({"what": "memory", "kind": kind, "rows": len(df), "partitions": parts})
        rows.append(r)
    return rows


def _child(args: list[str], threads: int) -> list[dict]:
    import subprocess

    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__] + args, env=env, capture_output=True,
                         text=True, check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    for r in rows:
        r["blas_threads"] = threads
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--rows", type=float, required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--rows-per-file", type=int, default=1_000_000)
    w.add_argument("--seed", type=int, default=20261122)
    w.add_argument("--first-file", type=int, default=0,
                   help="number of the first file (to add files to a dataset; use a new seed)")
    f = sub.add_parser("fit")
    f.add_argument("--data", required=True)
    f.add_argument("--workers", type=int, default=0)
    f.add_argument("--persist", default="auto")
    wi = sub.add_parser("write-io")
    wi.add_argument("--rows", type=float, required=True)
    wi.add_argument("--files", type=int, default=30)
    wi.add_argument("--out", required=True)
    wi.add_argument("--seed", type=int, default=20261127)
    i = sub.add_parser("io")
    i.add_argument("--data", required=True)
    i.add_argument("--workers", type=int, default=2)
    i.add_argument("--memory-limit", default="1.5GB")
    i.add_argument("--persist", default="auto")
    i.add_argument("--repeats", type=int, default=2)
    pp = sub.add_parser("part")
    pp.add_argument("--file", required=True, action="append")
    pp.add_argument("--repeats", type=int, default=20)
    m = sub.add_parser("memory")
    m.add_argument("--data", required=True)
    r = sub.add_parser("run")
    r.add_argument("--small", default="/work/bench_dask/n1e6")
    r.add_argument("--medium", default="/work/bench_dask/n1e7")
    r.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    if a.cmd == "write":
        print(json.dumps(write(int(a.rows), a.out, a.rows_per_file, a.seed, a.first_file)),
              flush=True)
    elif a.cmd == "write-io":
        print(json.dumps(write_io(int(a.rows), a.files, a.out, a.seed)), flush=True)
    elif a.cmd == "io":
        io(a.data, a.workers, a.memory_limit, a.persist, a.repeats)
    elif a.cmd == "part":
        for path in a.file:
            print(json.dumps(part_profile(path, a.repeats)), flush=True)
    elif a.cmd == "fit":
        print(json.dumps(fit(a.data, a.workers, a.persist)), flush=True)
    elif a.cmd == "memory":
        for row in memory(a.data):
            print(json.dumps(row), flush=True)
    else:
        if not os.path.isdir(a.small):
            print(json.dumps(write(1_000_000, a.small, 125_000, 20261122)), flush=True)
        if not os.path.isdir(a.medium):
            print(json.dumps(write(10_000_000, a.medium, 625_000, 20261122)), flush=True)
        for threads in (1, 2):
            for _ in range(a.repeats):
                for row in _child(["memory", "--data", a.small], threads):
                    print(json.dumps(row), flush=True)
        for _ in range(a.repeats):
            for workers in (1, 2):
                for persist in ("auto", "0"):
                    for row in _child(["fit", "--data", a.medium, "--workers", str(workers),
                                       "--persist", persist], 1):
                        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
