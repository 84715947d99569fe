"""How many passes over the partitions a build and a fit from a Dask DataFrame make.

Out of core every pass re-reads the source and rebuilds each partition's design, so the pass
count is the cost: the build is one design pass and one facts pass (the weight and response
sums, the column scales are folded into the facts), with the level codes of a string column
read only as a categorical factor held first (a pass reading that column alone; the facts
pass and every later one read the other columns), and an IRLS fit is its start pass plus
one pass per iteration, with the null deviance and both log-likelihoods gathered in the first
pass (nothing after the last iteration). Counted twice: by glmclass
(:func:`glmclass.rows.dask.counting_passes`) and by Dask's own scheduler callbacks, so no
compute escapes the count. The numbers are checked against the in-memory fit of the same rows.
"""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pytest
from dask.callbacks import Callback

import glmclass as gc
import glmclass.data.dask as D
from glmclass.rows.dask import counting_passes

NUMBERS = ("llf", "llnull", "null_deviance", "deviance", "aic", "bic", "llr", "llr_pvalue",
           "prsquared", "nobs", "df_resid")


class _Computes(Callback):
    """Counts the graphs Dask's local scheduler runs."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def _start(self, dsk) -> None:
        self.n += 1


@pytest.fixture
def out_of_core(monkeypatch):
    """The parts are not persisted: every pass reads and builds them again."""
    monkeypatch.setattr(D, "PERSIST", False)


def _passes(build, frame_fit):
    with counting_passes() as built, _Computes() as seen_build:
        model = build()
    with counting_passes() as fitted, _Computes() as seen_fit:
        res = model.fit()
        numbers = {k: float(getattr(res, k)) for k in NUMBERS}
        bse = res.bse.to_numpy()
    assert seen_build.n == len(built) and seen_fit.n == len(fitted)
    mem = frame_fit()
    for k, v in numbers.items():
        np.testing.assert_allclose(v, float(getattr(mem, k)), rtol=1e-10, err_msg=k)
    np.testing.assert_allclose(res.params.to_numpy(), mem.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(bse, mem.bse.to_numpy(), rtol=1e-10)
    return built, fitted, res


@pytest.mark.usefixtures("out_of_core")
def test_logit_build_is_two_passes_and_fit_one_per_iteration(frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    built, fitted, res = _passes(lambda: gc.Logit.from_formula("y ~ x + z + C(g)", ddf),
                                 lambda: gc.Logit.from_formula("y ~ x + z + C(g)", frame).fit())
    assert built == ["design", "level codes", "facts"]
    # R's start pass at mustart, then one per iteration; the separation check reads the
    # column scales from the facts, the null model's numbers come from the first pass
    assert fitted == ["reduce"] * (res.n_iter + 1)


@pytest.mark.usefixtures("out_of_core")
@pytest.mark.parametrize("weights", [None, "freq_weights", "var_weights"])
def test_poisson_passes_with_weights(frame, weights):
    ddf = dd.from_pandas(frame, npartitions=4)
    kw_dask = {} if weights is None else {weights: "w"}
    kw_mem = {} if weights is None else {weights: frame.loc[frame.x.notna(), "w"].to_numpy()}
    fam = gc.families.Poisson()
    built, fitted, res = _passes(
        lambda: gc.GLM.from_formula("count ~ x + C(g)", ddf, family=fam, **kw_dask),
        lambda: gc.GLM.from_formula("count ~ x + C(g)", frame.dropna(subset=["x"]), family=fam,
                                    **kw_mem).fit())
    assert built == ["design", "level codes", "facts"]
    assert fitted == ["reduce"] * (res.n_iter + 1)


@pytest.mark.usefixtures("out_of_core")
def test_binomial_counts_and_label_response(frame):
    """(successes, failures) counts: proportions with the trials as variance weights; a
    string response: its sums by label, coded by the levels after the facts pass."""
    df = frame.assign(k1=frame["count"], k2=(frame["w"] + 1).astype(int),
                      lab=np.where(frame["y"], "yes", "no"))
    ddf = dd.from_pandas(df, npartitions=3)
    fam = gc.families.Binomial()
    for formula in ("cbind(k1, k2) ~ x + z", "lab ~ x + C(g)"):
        built, fitted, res = _passes(
            lambda f=formula: gc.GLM.from_formula(f, ddf, family=fam),
            lambda f=formula: gc.GLM.from_formula(f, df, family=fam).fit())
        # the string response is read every pass; g's level codes are held
        assert built == ["design"] + ["level codes"] * ("C(g)" in formula) + ["facts"]
        assert fitted == ["reduce"] * (res.n_iter + 1)


@pytest.mark.usefixtures("out_of_core")
def test_offset_null_fit_iterates_and_still_agrees(frame):
    """With an offset the null model's constant needs its own IRLS: passes of its own (and
    the log-likelihoods one each), the numbers unchanged."""
    ddf = dd.from_pandas(frame, npartitions=4)
    fam = gc.families.Poisson()
    built, fitted, res = _passes(
        lambda: gc.GLM.from_formula("count ~ x + C(g)", ddf, family=fam, offset="off"),
        lambda: gc.GLM.from_formula("count ~ x + C(g)", frame, family=fam,
                                    offset="off").fit())
    assert built == ["design", "facts"]  # an offset() term: patsy builds it, from the strings
    assert len(fitted) > res.n_iter + 1


def test_persisted_build_reads_the_source_once(frame):
    """Persisted parts: the design pass, one persist (read and build), the facts of the
    persisted parts, and the GLM's encoded parts persisted from them."""
    ddf = dd.from_pandas(frame, npartitions=4)
    with counting_passes() as built:
        model = gc.Logit.from_formula("y ~ x + z + C(g)", ddf)
    assert model.data.persisted
    assert built == ["design", "parts", "facts", "parts"]
