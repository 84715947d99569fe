"""glmclass.plot on the Agg backend: the drawn data equal the model's numbers (probabilities on
the grid, ROC points and AUC as scikit-learn, reliability bins as scikit-learn, intervals as
conf_int, the evidence curve, the discriminant coordinates), with the expected labels and
limits."""

from __future__ import annotations

import subprocess
import sys

import pytest

matplotlib = pytest.importorskip("matplotlib", reason="the plots need the plot extra")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.contour import ContourSet  # noqa: E402
from sklearn import calibration as skcal  # noqa: E402
from sklearn import metrics  # noqa: E402
from statsmodels.datasets import anes96, spector  # noqa: E402

import glmclass as gc  # noqa: E402
import glmclass.formula.api as gcf  # noqa: E402
from glmclass import plot as gp  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def spec() -> pd.DataFrame:
    return spector.load_pandas().data


@pytest.fixture(scope="module")
def anes() -> pd.DataFrame:
    a = anes96.load_pandas().data.copy()
    a["party"] = pd.cut(a["PID"], [-1, 1.5, 3.5, 7], labels=["Dem", "Ind", "Rep"])
    return a


@pytest.fixture(scope="module")
def logit2(spec):
    return gcf.logit("GRADE ~ GPA + TUCE", spec).fit()


@pytest.fixture(scope="module")
def mnl(anes):
    return gcf.mnlogit("party ~ selfLR + age", anes).fit()


def test_import_glmclass_does_not_import_matplotlib():
    code = "import sys, glmclass, glmclass.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# --- decision boundary --------------------------------------------------------------------------


def test_decision_boundary_binary_image_is_the_posterior(logit2, spec):
    ax = gp.decision_boundary(logit2, spec, resolution=30)
    (img,) = ax.images
    Z = np.asarray(img.get_array())
    assert Z.shape == (30, 30)
    lo, hi = spec[["GPA", "TUCE"]].min(), spec[["GPA", "TUCE"]].max()
    pad = 0.05 * (hi - lo)
    assert ax.get_xlim() == pytest.approx((lo["GPA"] - pad["GPA"], hi["GPA"] + pad["GPA"]))
    assert ax.get_ylim() == pytest.approx((lo["TUCE"] - pad["TUCE"], hi["TUCE"] + pad["TUCE"]))
    gx = np.linspace(*ax.get_xlim(), 30)
    gy = np.linspace(*ax.get_ylim(), 30)
    # row i is y = gy[i], column j is x = gx[j] (origin lower)
    for i, j in [(0, 0), (0, 29), (29, 0), (17, 11)]:
        p = logit2.predict(pd.DataFrame({"GPA": [gx[j]], "TUCE": [gy[i]]})).iloc[0]
        assert Z[i, j] == pytest.approx(p, rel=1e-12)
    assert img.get_clim() == (0.0, 1.0)
    assert ax.get_xlabel() == "GPA" and ax.get_ylabel() == "TUCE"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "1"]
    cbar_ax = [a for a in ax.figure.axes if a is not ax][0]
    assert cbar_ax.get_ylabel() == "P(GRADE = 1)"
    assert any(isinstance(c, ContourSet) for c in ax.collections)
    pts = [c for c in ax.collections if isinstance(c, PathCollection)
           and not isinstance(c, ContourSet)]
    offsets = np.vstack([c.get_offsets() for c in pts])
    assert offsets.shape == (len(spec), 2)
    np.testing.assert_allclose(np.sort(offsets[:, 0]), np.sort(spec["GPA"]))


def test_decision_boundary_contour_is_where_p_is_one_half(logit2, spec):
    ax = gp.decision_boundary(logit2, spec, resolution=60, scatter=False)
    cs = next(c for c in ax.collections if isinstance(c, ContourSet))
    verts = np.vstack([p.vertices for p in cs.get_paths() if len(p.vertices)])
    p = logit2.predict(pd.DataFrame({"GPA": verts[:, 0], "TUCE": verts[:, 1]}))
    np.testing.assert_allclose(p, 0.5, atol=0.02)   # linear interpolation on a 60x60 grid


def test_decision_boundary_needs_named_features_and_holds_the_others(spec):
    res = gcf.logit("GRADE ~ GPA + TUCE + PSI", spec).fit()
    with pytest.raises(ValueError, match=r"3 features \(GPA, TUCE, PSI\).*x= and y="):
        gp.decision_boundary(res, spec)
    with pytest.raises(ValueError, match="x='gpa' is not a feature"):
        gp.decision_boundary(res, spec, x="gpa", y="TUCE")
    with pytest.raises(ValueError, match="pass data="):
        gp.decision_boundary(res, x="GPA", y="TUCE")
    cat = gcf.logit("GRADE ~ GPA + C(grp)", spec.assign(grp=np.where(spec["PSI"] > 0, "a", "b")))
    with pytest.raises(ValueError, match="y='grp' is not numeric"):
        gp.decision_boundary(cat.fit(), spec.assign(grp=np.where(spec["PSI"] > 0, "a", "b")))
    ax = gp.decision_boundary(res, spec, x="GPA", y="TUCE", fixed={"PSI": 1}, resolution=5)
    assert ax.get_title() == "held at PSI = 1"
    Z = np.asarray(ax.images[0].get_array())
    gx, gy = np.linspace(*ax.get_xlim(), 5), np.linspace(*ax.get_ylim(), 5)
    want = res.predict(pd.DataFrame({"GPA": [gx[2]], "TUCE": [gy[3]], "PSI": [1]})).iloc[0]
    assert Z[3, 2] == pytest.approx(want, rel=1e-12)
    ax = gp.decision_boundary(res, spec, x="GPA", y="TUCE", resolution=5)
    assert ax.get_title() == f"held at PSI = {spec['PSI'].median():.4g}"


def test_decision_boundary_multiclass_regions_follow_the_most_probable_class(mnl, anes):
    ax = gp.decision_boundary(mnl, anes, resolution=25)
    rgb = np.asarray(ax.images[0].get_array())
    assert rgb.shape == (25, 25, 3)
    gx, gy = np.linspace(*ax.get_xlim(), 25), np.linspace(*ax.get_ylim(), 25)
    xx, yy = np.meshgrid(gx, gy)
    probs = mnl.predict(pd.DataFrame({"selfLR": xx.ravel(), "age": yy.ravel()}))
    top = probs.to_numpy().argmax(axis=1).reshape(25, 25)
    colors = plt.get_cmap("tab10")
    # a cell's colour is its class colour blended with white: the channel order of the colour
    # survives the blend, so the most saturated channel identifies the class
    for k in np.unique(top):
        cells = rgb[top == k]
        base = np.array(colors(k)[:3])
        blend = 1.0 - cells
        direction = (1.0 - base) / np.linalg.norm(1.0 - base)
        cos = blend @ direction / np.maximum(np.linalg.norm(blend, axis=1), 1e-300)
        assert np.all(cos[np.linalg.norm(blend, axis=1) > 1e-9] > 0.999)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Dem", "Ind", "Rep"]
    assert any(isinstance(c, ContourSet) for c in ax.collections)
    ax2 = gp.decision_boundary(mnl, anes, level="Ind", resolution=10)
    Z = np.asarray(ax2.images[0].get_array())
    assert Z[0, 0] == pytest.approx(
        mnl.predict(pd.DataFrame({"selfLR": [ax2.get_xlim()[0]], "age": [ax2.get_ylim()[0]]}))
        ["Ind"].iloc[0], rel=1e-12)


def test_decision_boundary_of_an_array_model_and_generative_models(spec):
    X = spec[["GPA", "TUCE"]].assign(const=1.0)[["const", "GPA", "TUCE"]]
    res = gc.Logit(spec["GRADE"], X).fit()
    ax = gp.decision_boundary(res, resolution=8)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("GPA", "TUCE")
    Z = np.asarray(ax.images[0].get_array())
    gx, gy = np.linspace(*ax.get_xlim(), 8), np.linspace(*ax.get_ylim(), 8)
    assert Z[5, 2] == pytest.approx(res.predict(np.array([[1.0, gx[2], gy[5]]])).iloc[0])
    for fit in (gcf.lda("GRADE ~ GPA + TUCE", spec).fit(),
                gcf.qda("GRADE ~ GPA + TUCE", spec).fit(),
                gcf.bayes_logit("GRADE ~ GPA + TUCE", spec).fit()):
        ax = gp.decision_boundary(fit, spec, resolution=6)
        Z = np.asarray(ax.images[0].get_array())
        g = pd.DataFrame({"GPA": [ax.get_xlim()[1]], "TUCE": [ax.get_ylim()[1]]})
        assert Z[-1, -1] == pytest.approx(fit.predict(g, which="prob").iloc[0, 1], rel=1e-12)


def test_decision_boundary_draws_on_the_given_axes(logit2, spec):
    fig, ax = plt.subplots()
    assert gp.decision_boundary(logit2, spec, ax=ax, resolution=4, colorbar=False) is ax
    assert len(fig.axes) == 1


# --- ROC ----------------------------------------------------------------------------------------


def test_roc_curve_and_auc_equal_scikit_learn(spec):
    res = gcf.logit("GRADE ~ GPA + TUCE + PSI", spec).fit()
    curve = gp.roc_curve(res)
    fpr, tpr, _ = metrics.roc_curve(spec["GRADE"], res.predict(), drop_intermediate=False)
    np.testing.assert_allclose(curve["fpr"], fpr, atol=1e-15)
    np.testing.assert_allclose(curve["tpr"], tpr, atol=1e-15)
    assert gp.roc_auc(res) == pytest.approx(metrics.roc_auc_score(spec["GRADE"], res.predict()),
                                            rel=1e-14)
    ax = gp.roc(res, label="logit")
    auc = metrics.roc_auc_score(spec["GRADE"], res.predict())
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == [f"logit (AUC = {auc:.3f})", "chance"]
    np.testing.assert_allclose(ax.get_lines()[0].get_xydata(), curve[["fpr", "tpr"]])
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    assert "False-positive rate" in ax.get_xlabel() and "True-positive" in ax.get_ylabel()
    # overlaying a second model adds one line and keeps one chance line
    gp.roc(gcf.probit("GRADE ~ GPA", spec).fit(), ax=ax)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(ax.get_lines()) == 3 and texts.count("chance") == 1


def test_roc_with_ties_weights_and_new_data():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.integers(0, 4, 300).astype(float),
                       "w": rng.integers(1, 4, 300).astype(float)})
    df["y"] = (rng.random(300) < 1 / (1 + np.exp(1 - df["x"]))).astype(int)
    res = gcf.logit("y ~ x", df, freq_weights=df["w"]).fit()      # 4 distinct scores: ties
    p = res.predict()
    want = metrics.roc_auc_score(df["y"], p, sample_weight=df["w"])
    assert gp.roc_auc(res) == pytest.approx(want, rel=1e-13)
    fpr, tpr, _ = metrics.roc_curve(df["y"], p, sample_weight=df["w"])
    np.testing.assert_allclose(gp.roc_curve(res)[["fpr", "tpr"]], np.c_[fpr, tpr])
    new = df.iloc[:100]
    assert gp.roc_auc(res, new) == pytest.approx(
        metrics.roc_auc_score(new["y"], res.predict(new)), rel=1e-13)
    assert gp.roc_auc(res, new.drop(columns="y"), y=new["y"].to_numpy()) == pytest.approx(
        gp.roc_auc(res, new))
    with pytest.raises(ValueError, match="y="):
        gp.roc(res, new.drop(columns="y"))


def test_roc_one_vs_rest_for_multiclass(mnl, anes):
    aucs = gp.roc_auc(mnl)
    p = mnl.predict()
    y = anes["party"].astype(str)
    for lv in ["Dem", "Ind", "Rep"]:
        assert aucs[lv] == pytest.approx(metrics.roc_auc_score(y == lv, p[lv]), rel=1e-13)
    ax = gp.roc(mnl, label="m")
    assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == [
        f"m: {lv} (AUC = {aucs[lv]:.3f})" for lv in ["Dem", "Ind", "Rep"]]
    assert gp.roc_auc(mnl, level="Rep") == pytest.approx(aucs["Rep"])
    with pytest.raises(ValueError, match="level='Green'"):
        gp.roc(mnl, level="Green")


def test_roc_refuses_proportions():
    df = pd.DataFrame({"x": [0.0, 1, 2, 3], "p": [0.1, 0.4, 0.5, 0.9], "n": [10, 10, 10, 10]})
    res = gcf.glm("p ~ x", df, var_weights=df["n"]).fit()
    with pytest.raises(ValueError, match="proportions"):
        gp.roc(res)


# --- calibration --------------------------------------------------------------------------------


def test_calibration_table_equals_scikit_learn(mnl, anes):
    res = mnl
    y = (anes["party"].astype(str) == "Rep").to_numpy()
    p = res.predict()["Rep"].to_numpy()
    table = gp.calibration_table(res, level="Rep", bins=10)
    obs, pred = skcal.calibration_curve(y, p, n_bins=10, strategy="uniform")
    np.testing.assert_allclose(table["observed"], obs, rtol=1e-12)
    np.testing.assert_allclose(table["predicted"], pred, rtol=1e-12)
    assert table["count"].sum() == len(anes)
    q = gp.calibration_table(res, level="Rep", bins=5, strategy="quantile")
    obs, pred = skcal.calibration_curve(y, p, n_bins=5, strategy="quantile")
    np.testing.assert_allclose(q["observed"], obs, rtol=1e-12)
    np.testing.assert_allclose(q["predicted"], pred, rtol=1e-12)
    assert q["count"].tolist() == pytest.approx([len(anes) / 5] * 5, abs=3)   # ties
    # Wilson interval of one bin, from its definition
    k, n = table["observed"].iloc[3] * table["count"].iloc[3], table["count"].iloc[3]
    z = 1.959963984540054
    centre = (k + z * z / 2) / (n + z * z)
    half = z * np.sqrt(n) / (n + z * z) * np.sqrt(k / n * (1 - k / n) + z * z / (4 * n))
    assert table["lower"].iloc[3] == pytest.approx(centre - half, rel=1e-12)
    assert table["upper"].iloc[3] == pytest.approx(centre + half, rel=1e-12)


def test_calibration_plot_has_the_points_counts_and_diagonal(logit2):
    table = gp.calibration_table(logit2, bins=5)
    ax = gp.calibration(logit2, bins=5, label="logit")
    diag, curve = ax.get_lines()[0], ax.get_lines()[1]
    np.testing.assert_allclose(diag.get_xydata(), [[0, 0], [1, 1]])
    np.testing.assert_allclose(curve.get_xydata(), table[["predicted", "observed"]])
    assert [t.get_text() for t in ax.texts] == [f"{n:g}" for n in table["count"]]
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    assert ax.get_xlabel() == "Mean predicted probability"
    assert ax.get_ylabel() == "Observed frequency"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["perfectly calibrated",
                                                                   "logit"]
    assert not gp.calibration(logit2, bins=5, counts=False).texts
    with pytest.raises(ValueError, match="bins"):
        gp.calibration(logit2, bins=0)


# --- coefficients -------------------------------------------------------------------------------


def test_coefficients_forest_plot_is_the_estimates_and_intervals(spec):
    res = gcf.logit("GRADE ~ GPA + TUCE + PSI", spec).fit()
    ci = res.conf_int(0.1)
    ax = gp.coefficients(res, alpha=0.1)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["PSI", "TUCE", "GPA"]
    (eb,) = ax.containers
    xy = eb.lines[0].get_xydata()
    np.testing.assert_allclose(xy[:, 0], res.params[["GPA", "TUCE", "PSI"]])
    np.testing.assert_allclose(xy[:, 1], [2, 1, 0])
    segs = eb.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 0] for s in segs], ci.loc[["GPA", "TUCE", "PSI"]])
    assert ax.get_xlabel() == "Coefficient (90% interval)"
    assert ax.get_xscale() == "linear"
    ax = gp.coefficients(res, odds_ratios=True, intercept=True)
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "Odds ratio (95% interval, log scale)"
    xy = ax.containers[0].lines[0].get_xydata()
    np.testing.assert_allclose(xy[:, 0], np.exp(res.params))
    assert [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == ":"] == [1]
    assert gp.coefficients(gcf.probit("GRADE ~ GPA", spec).fit(),
                           odds_ratios=True).get_xlabel().startswith("exp(coefficient)")


def test_coefficients_of_several_fits_and_of_mnlogit(spec, mnl):
    logit = gcf.logit("GRADE ~ GPA + PSI", spec).fit()
    bayes = gcf.bayes_logit("GRADE ~ GPA + PSI", spec).fit()
    ax = gp.coefficients({"ML": logit, "Bayes": bayes}, terms=["PSI", "GPA"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ML", "Bayes"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["GPA", "PSI"]
    bayes_pts = ax.containers[1].lines[0].get_xydata()
    np.testing.assert_allclose(bayes_pts[:, 0], bayes.params[["PSI", "GPA"]])
    ax = gp.coefficients(mnl)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Ind", "Rep"]
    np.testing.assert_allclose(ax.containers[1].lines[0].get_xydata()[:, 0],
                               mnl.params.loc[["selfLR", "age"], "Rep"])
    with pytest.raises(ValueError, match="terms"):
        gp.coefficients(logit, terms=["nope"])


# --- evidence, projection, histories, paths -----------------------------------------------------


def test_evidence_curve_plots_the_results_curve(spec):
    res = gcf.bayes_logit("GRADE ~ GPA + PSI", spec, prior_scale_intercept="flat").fit(
        optimize_prior=True)
    alphas = np.logspace(-2, 1, 9)
    curve = res.evidence_curve(alphas)
    ax = gp.evidence_curve(res, alphas, components=True)
    ev, llf, lp, best = ax.get_lines()[:4]
    np.testing.assert_allclose(ev.get_xydata(), curve[["alpha", "log_evidence"]], rtol=1e-10)
    np.testing.assert_allclose(llf.get_ydata(), curve["llf"], rtol=1e-10)
    i = curve["log_evidence"].idxmax()
    np.testing.assert_allclose(best.get_xydata(), [curve.loc[i, ["alpha", "log_evidence"]]])
    fitted = ax.get_lines()[4]
    assert fitted.get_xdata()[0] == pytest.approx(res.alpha.iloc[0])
    assert ax.get_xscale() == "log"
    assert ax.get_ylabel() == "Log evidence" and "Prior precision" in ax.get_xlabel()
    ax2 = gp.evidence_curve(curve)           # a curve already computed
    np.testing.assert_allclose(ax2.get_lines()[0].get_ydata(), curve["log_evidence"])
    with pytest.raises(ValueError, match="log_evidence"):
        gp.evidence_curve(curve.drop(columns="log_evidence"))


def test_discriminant_projection_is_lda_transform(anes):
    lda = gcf.lda("party ~ selfLR + age + educ + logpopul", anes).fit()
    coords = lda.transform()
    ax = gp.discriminant_projection(lda)
    pts = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Dem", "Ind", "Rep",
                                                                   "class means"]
    y = anes["party"].astype(str).to_numpy()
    for coll, lv in zip(pts[:3], ["Dem", "Ind", "Rep"], strict=True):
        np.testing.assert_allclose(coll.get_offsets(), coords[y == lv][["LD1", "LD2"]])
    np.testing.assert_allclose(pts[3].get_offsets(),
                               [coords[y == lv][["LD1", "LD2"]].mean() for lv in
                                ["Dem", "Ind", "Rep"]])
    share = lda.svd**2 / (lda.svd**2).sum()
    assert ax.get_xlabel() == f"LD1 ({100 * share.iloc[0]:.1f}% of trace)"
    assert ax.get_ylabel() == f"LD2 ({100 * share.iloc[1]:.1f}% of trace)"
    ax = gp.discriminant_projection(lda, components=(2, 1), means=False)
    np.testing.assert_allclose(ax.collections[0].get_offsets(),
                               coords[y == "Dem"][["LD2", "LD1"]])
    with pytest.raises(ValueError, match="components"):
        gp.discriminant_projection(lda, components=(1, 3))


def test_discriminant_projection_of_two_classes_is_a_histogram(spec):
    lda = gcf.lda("GRADE ~ GPA + TUCE", spec).fit()
    ld1 = lda.transform()["LD1"].to_numpy()
    ax = gp.discriminant_projection(lda, bins=8)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "1"]
    edges = np.histogram_bin_edges(ld1, bins=8)
    assert len(ax.patches) == 2        # a stepfilled histogram is one polygon per class
    for patch, lv in zip(ax.patches, [0, 1], strict=True):
        counts, _ = np.histogram(ld1[spec["GRADE"].to_numpy() == lv], bins=edges)
        tops = patch.get_path().vertices
        # the step outline visits every bin's top: (left edge, count) and (right edge, count)
        for i, c in enumerate(counts):
            assert np.any(np.isclose(tops[:, 0], edges[i]) & np.isclose(tops[:, 1], c))
    assert ax.get_ylabel() == "Count" and ax.get_xlabel() == "LD1 (100.0% of trace)"


class _Fit:
    def __init__(self, history, method=None):
        self.history = history
        if method is not None:
            self.method = method


def test_loss_history_duck_type_series_and_reference():
    a = _Fit([5.0, 3.0, 2.5, 2.25], "gd")
    b = _Fit(pd.Series([4.0, 2.6, 2.2], name="deviance",
                       index=pd.RangeIndex(1, 4, name="epoch")), "sgd")
    ax = gp.loss_history([a, b])
    la, lb = ax.get_lines()
    np.testing.assert_allclose(la.get_xydata(), [[1, 5], [2, 3], [3, 2.5], [4, 2.25]])
    np.testing.assert_allclose(lb.get_ydata(), [4.0, 2.6, 2.2])
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("epoch", "deviance")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["gd", "sgd"]
    ax = gp.loss_history({"batch": a}, reference=2.25)
    y = ax.get_lines()[0].get_ydata()
    np.testing.assert_allclose(y[:3], [2.75, 0.75, 0.25])
    assert np.isnan(y[3])           # at the reference: not drawn on a log axis
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "loss - 2.25"
    single = gp.loss_history(_Fit([1.0, 0.5]))
    assert single.get_legend() is None and single.get_xlabel() == "iteration"
    with pytest.raises(TypeError, match="no history"):
        gp.loss_history(object())


def test_regularization_path_lines():
    path = pd.DataFrame({"Intercept": [0.1, 0.2, 0.3], "a": [0.0, 0.5, 1.0], "b": [0, 0, -1.0]},
                        index=pd.Index([1.0, 0.1, 0.01], name="alpha"))
    ax = gp.regularization_path(path)
    assert [line.get_label() for line in ax.get_lines()][:2] == ["a", "b"]
    np.testing.assert_allclose(ax.get_lines()[1].get_xydata(), [[1, 0], [0.1, 0], [0.01, -1]])
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "alpha"
    with pytest.raises(TypeError, match="DataFrame"):
        gp.regularization_path([1, 2])
