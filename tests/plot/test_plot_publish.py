"""Plots worth publishing (issue 26, section 4): nothing clipped at the default size, short
legends off the data, off-scale intervals of separated data marked, path curves named at the
edge, and the two new diagnostics: the influence plot (against statsmodels' influence_plot)
and binned residuals (against R's arm::binned.resids, tests/reference/binned.json from
tests/reference/r/binned.R)."""

from __future__ import annotations

import json
import pathlib
import warnings

import pytest

matplotlib = pytest.importorskip("matplotlib", reason="the plots need the plot extra")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import statsmodels.api as sm  # noqa: E402
from scipy import stats  # noqa: E402

import glmclass as gc  # noqa: E402
import glmclass.formula.api as gcf  # noqa: E402
from glmclass import plot as gp  # noqa: E402

REF = pathlib.Path(__file__).resolve().parents[1] / "reference"
BINNED = json.loads((REF / "binned.json").read_text())
BW_FORMULA = "low ~ age + lwt + race + smoke + ht + ui"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _read(name: str) -> pd.DataFrame:
    return pd.read_csv(REF / "data" / f"{name}.csv")


@pytest.fixture(scope="module")
def bw() -> pd.DataFrame:
    return _read("birthwt")


@pytest.fixture(scope="module")
def logit(bw):
    return gcf.logit(BW_FORMULA, bw).fit()


def _drawn_texts(fig) -> list:
    """The texts a draw shows: annotations, titles, axis labels, legend entries and the tick
    labels of ticks inside the view (matplotlib keeps labels of ticks beyond it, undrawn)."""
    out = []
    for ax in fig.axes:
        out += [*ax.texts, ax.title, ax.xaxis.label, ax.yaxis.label]
        if ax.get_legend() is not None:
            out += ax.get_legend().get_texts()
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(lo, hi), max(lo, hi)
            for minor in (False, True):
                ticks = axis.get_ticklocs(minor=minor)
                labels = axis.get_ticklabels(minor=minor)
                out += [t for loc, t in zip(ticks, labels, strict=False) if lo <= loc <= hi]
    return [t for t in out if t.get_visible() and t.get_text().strip()]


def assert_nothing_clipped(ax) -> None:
    """Every text a draw shows lies inside the figure."""
    fig = ax.figure
    fig.canvas.draw()
    box = fig.bbox
    texts = _drawn_texts(fig)
    assert texts
    renderer = fig.canvas.get_renderer()
    for t in texts:
        e = t.get_window_extent(renderer)
        assert (e.x0 >= box.x0 - 1 and e.y0 >= box.y0 - 1 and e.x1 <= box.x1 + 1
                and e.y1 <= box.y1 + 1), f"text {t.get_text()!r} at {e} outside {box}"


def _separated() -> tuple[pd.DataFrame, object]:
    rng = np.random.default_rng(0)
    n = 120
    df = pd.DataFrame({"age_in_years_at_enrolment": rng.normal(40, 10, n),
                       "dose": rng.normal(0, 1, n), "z": rng.integers(0, 2, n)})
    eta = 0.03 * (df["age_in_years_at_enrolment"] - 40) + 0.8 * df["dose"]
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    df.loc[df["z"] == 1, "y"] = 1          # z = 1 always has y = 1: quasi-complete separation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = gcf.logit("y ~ age_in_years_at_enrolment + dose + z", df).fit()
    return df, res


# --- layout and legends -------------------------------------------------------------------------


def test_new_figures_use_constrained_layout_and_keep_every_text(logit):
    for ax in (gp.coefficients(logit), gp.coefficients(logit, odds_ratios=True),
               gp.roc(logit), gp.calibration(logit, bins=6), gp.influence(logit),
               gp.binned_residuals(logit)):
        assert ax.figure.get_layout_engine() is not None
        assert type(ax.figure.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
        assert_nothing_clipped(ax)


def test_roc_and_calibration_legends_are_short_and_numbered(bw, logit):
    probit = gcf.probit(BW_FORMULA, bw).fit()
    ax = gp.roc(logit)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts[0] == f"Logit (AUC = {gp.roc_auc(logit):.3f})"
    gp.roc(probit, ax=ax)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == [f"[1] Logit (AUC = {gp.roc_auc(logit):.3f})",
                     f"[2] Probit (AUC = {gp.roc_auc(probit):.3f})", "chance"]
    assert ax.get_legend()._loc == 4           # lower right: below the curves  # noqa: SLF001
    assert_nothing_clipped(ax)
    ax = gp.calibration(logit, bins=6)
    gp.calibration(probit, bins=6, ax=ax, counts=False)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == ["perfectly calibrated", "[1] Logit", "[2] Probit"]
    assert sum(line.get_label() == "perfectly calibrated" for line in ax.get_lines()) == 1
    # an explicit label is kept as given
    ax = gp.roc(logit, label="full model")
    gp.roc(probit, ax=ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == [
        f"full model (AUC = {gp.roc_auc(logit):.3f})",
        f"[2] Probit (AUC = {gp.roc_auc(probit):.3f})"]


# --- coefficients on separated data -------------------------------------------------------------


def test_coefficients_clip_the_axis_to_the_finite_intervals():
    df, res = _separated()
    assert res.separation.separated and res.separation.columns == (3,)
    ci = res.conf_int()
    assert ci.loc["z"].abs().min() > 1e3     # the separated interval: tens of thousands
    ax = gp.coefficients(res)
    lo, hi = ax.get_xlim()
    finite = ci.drop(index=["Intercept", "z"])
    assert lo < min(finite["lower"].min(), 0) and hi > finite["upper"].max()
    assert hi - lo < 3 * (finite["upper"].max() - min(finite["lower"].min(), 0))
    notes = [t.get_text() for t in ax.texts]
    assert notes == [f"off scale: {res.params['z']:.3g} [{ci.loc['z', 'lower']:.3g}, "
                     f"{ci.loc['z', 'upper']:.3g}]"]
    # the other intervals are drawn as before: points at the estimates
    (bars,) = ax.containers
    np.testing.assert_allclose(bars.lines[0].get_xdata(),
                               res.params[["age_in_years_at_enrolment", "dose"]])
    assert_nothing_clipped(ax)
    # odds ratios: the infinite upper bound is off-scale too, the axis stays on the others
    ax = gp.coefficients(res, odds_ratios=True)
    lo, hi = ax.get_xlim()
    assert 0 < lo < 1 < hi < 10 and ax.get_xscale() == "log"
    assert ax.texts[0].get_text().startswith("off scale:")
    assert_nothing_clipped(ax)


def test_coefficients_without_separation_keep_autoscaling(logit):
    ax = gp.coefficients(logit)
    assert not ax.texts
    ci = logit.conf_int().drop(index="Intercept")
    lo, hi = ax.get_xlim()
    assert lo <= ci["lower"].min() and hi >= ci["upper"].max()


# --- regularisation path ------------------------------------------------------------------------


def test_path_curves_are_named_at_the_right_edge():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 30))
    y = (rng.random(300) < 1 / (1 + np.exp(-X[:, :5].sum(axis=1)))).astype(float)
    names = [f"predictor_{j:02d}" for j in range(30)]
    exog = pd.DataFrame(X, columns=names).assign(const=1.0)[["const", *names]]
    path = gc.Logit(y, exog).regularization_path(30, cv=3, seed=1)
    ax = gp.regularization_path(path)
    assert ax.get_legend() is None
    left, right = ax.get_xlim()
    assert left == path.alphas.max() and right == path.alphas.min()   # penalty decreasing
    edge = [t for t in ax.texts if t.get_text().startswith("predictor_")]
    assert sorted(t.get_text() for t in edge) == names
    # each name at its curve's end unless moved apart; never overlapping after the draw
    ax.figure.canvas.draw()
    boxes = sorted((t.get_window_extent().y0, t.get_window_extent().y1) for t in edge)
    assert all(b[0] >= a[1] - 0.5 for a, b in zip(boxes, boxes[1:], strict=False))
    assert {t.get_text().strip() for t in ax.texts} >= {"alpha_min", "alpha_1se"}
    assert_nothing_clipped(ax)
    ax = gp.cv_curve(path)
    assert ax.get_xlim()[0] > ax.get_xlim()[1]
    assert_nothing_clipped(ax)


# --- influence ----------------------------------------------------------------------------------


def test_influence_plot_equals_statsmodels(bw, logit):
    infl = logit.get_influence()
    ax = gp.influence(logit, external=False)
    (pts,) = ax.collections
    np.testing.assert_allclose(pts.get_offsets()[:, 0], infl.hat_matrix_diag, rtol=1e-12)
    np.testing.assert_allclose(pts.get_offsets()[:, 1], infl.resid_studentized, rtol=1e-12)
    # statsmodels' GLM influence_plot (internally studentized Pearson residuals): the same
    # points and the same sizes by Cook's distance
    X = pd.get_dummies(bw[["age", "lwt", "race", "smoke", "ht", "ui"]], columns=["race"],
                       drop_first=True, dtype=float)
    sm_res = sm.GLM(bw["low"], sm.add_constant(X), family=sm.families.Binomial()).fit(
        tol=1e-12)
    fig = sm_res.get_influence().plot_influence(external=False)
    (theirs,) = fig.axes[0].collections
    np.testing.assert_allclose(pts.get_offsets(), theirs.get_offsets(), rtol=1e-6)
    np.testing.assert_allclose(pts.get_sizes(), theirs.get_sizes(), rtol=1e-6)
    # the named rows: beyond the t cut-off or above 2 (df_model + 1) / nobs
    cut_lev = 2 * (logit.df_model + 1) / logit.nobs
    cut_res = stats.t.ppf(0.975, logit.df_resid)
    big = (infl.hat_matrix_diag > cut_lev) | (infl.resid_studentized.abs() > cut_res)
    assert 0 < big.sum() < len(big)
    assert {t.get_text() for t in ax.texts} == {str(i) for i in infl.hat_matrix_diag.index[big]}
    ax = gp.influence(logit)
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 1],
                               infl.resid_studentized_external, rtol=1e-12)
    assert ax.get_ylabel() == "Studentized residual (externally)"
    assert ax.get_xlabel() == "Leverage (hat value)"


# --- binned residuals ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", BINNED["cases"],
                         ids=lambda c: f"{c['data']}-{c['x']}-{c['nclass']}")
def test_binned_residuals_equal_arm(case):
    df = _read(case["data"])
    res = gcf.logit(case["formula"], df).fit(tol=1e-12)
    x = None if case["x"] == "fitted" else case["x"]
    table = gp.binned_residuals_table(res, x, bins=case["nclass"])
    assert table["n"].tolist() == case["n"]
    for ours, theirs in [("xbar", "xbar"), ("ybar", "ybar"), ("x_lo", "x_lo"),
                         ("x_hi", "x_hi"), ("two_se", "se2")]:
        np.testing.assert_allclose(table[ours], case[theirs], rtol=1e-6, atol=1e-12)
    ax = gp.binned_residuals(res, x, bins=case["nclass"])
    pts, upper, lower = ax.get_lines()[:3]
    np.testing.assert_allclose(pts.get_xydata(), table[["xbar", "ybar"]])
    np.testing.assert_allclose(upper.get_ydata(), table["two_se"])
    np.testing.assert_allclose(lower.get_ydata(), -table["two_se"])
    assert ax.get_ylabel() == "Average residual"
    assert_nothing_clipped(ax)


def test_binned_residuals_default_bins_and_errors(logit, bw):
    assert len(gp.binned_residuals_table(logit)) == int(np.sqrt(len(bw)))  # arm: sqrt(n)
    with pytest.raises(ValueError, match="x='weight'"):
        gp.binned_residuals_table(logit, "weight")
    with pytest.raises(ValueError, match="one value per row"):
        gp.binned_residuals_table(logit, np.arange(5.0))
    with pytest.raises(ValueError, match="bins"):
        gp.binned_residuals_table(logit, bins=0)
