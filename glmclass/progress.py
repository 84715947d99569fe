"""Progress lines of iterative fits: ``fit(disp=True)`` prints one line per iteration.

Each line gives the iteration, the objective (deviance, or minus twice the log posterior), its
relative change (R's convergence measure), the size of the step (the largest change of a
coefficient), the number of step halvings and the time since the fit started. On Dask data each
iteration is one pass over the partitions, so a Dask progress bar
(``dask.diagnostics.ProgressBar`` or ``distributed.progress``) shows the passes between the
lines.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class IterationLog:
    """Print one line per iteration of a fit.

    Parameters
    ----------
    what : str
        Name of the objective in the header, e.g. ``"deviance"``.
    stream : file-like, optional
        Where to print (default ``sys.stdout`` at the time of each line).
    preamble : str, optional
        A line printed before the header (how the data were read, e.g. the design pass of
        Dask data).
    """

    def __init__(self, what: str = "deviance", stream: TextIO | None = None,
                 preamble: str | None = None) -> None:
        self.what = what
        self.preamble = preamble
        self.stream = stream
        self.start = time.perf_counter()
        self.last: float | None = None

    def __call__(self, iteration: int, objective: float, step: float, halvings: int = 0) -> None:
        """Report iteration ``iteration`` (1-based): its objective, the largest coefficient
        change ``step`` and the number of step halvings."""
        out = self.stream or sys.stdout
        if self.last is None:
            if self.preamble:
                print(self.preamble, file=out, flush=True)
            print(f"{'iter':>4}  {self.what:>22}  {'rel. change':>11}  {'step':>10}  "
                  f"{'halvings':>8}  {'time (s)':>9}", file=out, flush=True)
        change = (abs(objective - self.last) / (abs(objective) + 0.1)
                  if self.last is not None else float("nan"))
        print(f"{iteration:>4}  {objective:>22.12g}  {change:>11.3e}  {step:>10.3e}  "
              f"{halvings:>8d}  {time.perf_counter() - self.start:>9.3f}", file=out, flush=True)
        self.last = objective
