"""Marginal effects of the variables of a formula (``results.get_margeff``).

A margin is a property of a *variable*, not of a design column: with ``y ~ age + I(age**2) +
age:smoke`` the effect of age moves three columns. Each design row is a function of the data
row, ``x_i = X(v_i)``, built by the stored formula design, so the derivative of the design in
a numeric variable v is taken through the design builder: ``D_i = dX/dv`` by central
differences with Richardson extrapolation (a step of 1e-3 relative to each value, truncation
error O(h^4): exact to ~1e-12 for polynomials, logs and interactions). With the linear
predictor ``eta_i = X_i B`` and the model's mean ``F(eta)`` (the inverse link, or the softmax
of a multinomial logit):

- ``dydx``: ``dF/dv = J_F(eta_i) D_i B``; ``eyex``: times ``v_i / F``; ``dyex``: times
  ``v_i``; ``eydx``: divided by ``F``;
- categorical variables (a factor of a ``C()`` term, strings, booleans): for each level
  other than the reference, the discrete change ``F(X(level)) - F(X(reference))`` with every
  row set to that level (``log F`` differences for the ``ey`` methods, statsmodels'
  convention); numeric 0/1 variables are derivatives unless ``dummy=True``, then changes from 0
  to 1;
- ``at="overall"``: the average of the per-row effects (weighted by frequency weights);
  ``at="mean"``: the effect at the means of the numeric variables, categorical variables as
  observed and the design rows averaged (for indicator columns: the level proportions, as
  Stata's ``atmeans``).

Standard errors by the delta method ``G V G'``, with V the covariance the fit reports and G
the exact gradient of the effects in the coefficients (second derivatives of F included).
Array models have one variable per design column (the constant excluded), as statsmodels.

References
----------
Greene, W. H. (2012). *Econometric Analysis*, 7th ed., §17.3 (partial effects).
Bartus, T. (2005). Estimation of marginal effects using margeff. *Stata Journal* 5(3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..formula.design import _referenced_columns
from ..rows.blocks import block_rows
from ..summary import Summary
from .base import num

METHODS = ("dydx", "eyex", "dyex", "eydx")
ATS = ("overall", "mean")
#: Relative step of the central differences in a numeric variable (before extrapolation).
STEP = 1e-3


@dataclass(frozen=True)
class Effect:
    """One marginal effect: a derivative in ``variable``, or a discrete change of it from
    ``ref`` to ``level``; ``label`` is how the results name it."""

    label: str
    variable: object  # a column of the data (formula), or a design position (arrays)
    discrete: bool
    level: object = None
    ref: object = None


class MarginalEffects:
    """Marginal effects with delta-method standard errors (``results.get_margeff``).

    Attributes
    ----------
    margeff : pandas.Series
        The effects, by variable label (multinomial models: by (level, variable)).
    margeff_se : pandas.Series
        Their standard errors.
    margeff_cov : pandas.DataFrame
        Their covariance ``G V G'``.
    kind : pandas.Series
        ``"derivative"`` or ``"discrete"`` for each effect.
    at, method : str
    dummy : bool
    cov_type : str
        The covariance of the estimates the standard errors come from.
    """

    def __init__(self, values: np.ndarray, cov: np.ndarray, index: pd.Index, kinds: list,
                 at: str, method: str, dummy: bool, quantile, title: str,
                 cov_type: str = "nonrobust") -> None:
        self.margeff = pd.Series(values, index=index, name="margeff")
        self.margeff_cov = pd.DataFrame(cov, index=index, columns=index)
        with np.errstate(invalid="ignore"):
            se = np.sqrt(np.maximum(np.diag(cov), 0.0))
        self.margeff_se = pd.Series(se, index=index, name="margeff_se")
        self.kind = pd.Series(kinds, index=index, name="kind")
        self.at, self.method, self.dummy, self.cov_type = at, method, dummy, cov_type
        self._quantile = quantile
        self._title = title

    @property
    def tvalues(self) -> pd.Series:
        """margeff / margeff_se."""
        return (self.margeff / self.margeff_se).rename("z")

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values of :attr:`tvalues` (the reference distribution of the fit)."""
        return pd.Series(2.0 * self._quantile.sf(np.abs(self.tvalues.to_numpy())),
                         index=self.margeff.index, name="pvalue")

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Intervals ``margeff -+ q se``: columns ``lower``, ``upper``."""
        if not (isinstance(alpha, (int, float, np.number)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
        q = self._quantile.isf(alpha / 2)
        return pd.DataFrame({"lower": self.margeff - q * self.margeff_se,
                             "upper": self.margeff + q * self.margeff_se})

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Table of the effects: ``margeff, margeff_se, z, pvalue, ci_lower, ci_upper``."""
        ci = self.conf_int(alpha)
        return pd.DataFrame({"margeff": self.margeff, "margeff_se": self.margeff_se,
                             "z": self.tvalues, "pvalue": self.pvalues,
                             "ci_lower": ci["lower"], "ci_upper": ci["upper"]})

    def summary(self, alpha: float = 0.05) -> Summary:
        """Report: what was computed, then the table."""
        header = [("Method", self.method), ("At", self.at), ("Dummy as discrete", self.dummy)]
        notes = ["Discrete changes from the reference level (categorical variables"
                 + (", and 0/1 variables" if self.dummy else "") + "); derivatives otherwise.",
                 f"Standard errors by the delta method, with the {self.cov_type} covariance "
                 "of the estimates."]
        return Summary(self._title, header, [(None, self.summary_frame(alpha))], notes)

    def __repr__(self) -> str:
        return f"<MarginalEffects: {self.method} at {self.at}, {len(self.margeff)} effects>"


# --- what varies ------------------------------------------------------------------------------


def _variables(spec, frame: pd.DataFrame) -> tuple[list[str], dict[str, tuple]]:
    """Data columns of the right-hand side in order of appearance: every one, and the
    categorical ones with (categories, reference, labels of the levels)."""
    info = spec.design_info
    order, categorical = [], {}
    for term in info.terms:
        for sub in info.term_codings[term]:
            for factor in sub.factors:
                cols = _referenced_columns(factor.code, frame)
                order += [c for c in cols if c not in order]
                finfo = info.factor_infos[factor]
                if finfo.type != "categorical":
                    continue
                if len(cols) != 1:
                    raise ValueError(f"get_margeff: the categorical term {factor.name()!r} uses "
                                     f"{len(cols)} columns ({cols}); marginal effects need one")
                col, values = cols[0], frame[cols[0]]
                if not set(pd.unique(values.dropna())) <= set(finfo.categories):
                    # an expression of the column (I(race == 'white'), C(age > 30))
                    if values.dtype.kind in "biuf" and values.dtype.kind != "b":
                        raise ValueError(
                            f"get_margeff: the numeric column {col!r} enters the categorical "
                            f"term {factor.name()!r} through an expression, where it has no "
                            "derivative; enter it as a column of its own or fit the category "
                            "as a column")
                    continue
                if col not in categorical or len(term.factors) == 1:  # prefer a main effect
                    categorical[col] = _levels(factor, finfo, sub.contrast_matrices.get(factor))
    return order, categorical


def _levels(factor, finfo, contrast) -> tuple:
    """(categories, reference, label of each category) of a categorical factor."""
    cats = list(finfo.categories)
    ref, labels = cats[0], {c: f"{factor.name()}[T.{c}]" for c in cats}
    if contrast is not None:
        mat = np.asarray(contrast.matrix)
        zero = np.flatnonzero(~mat.any(axis=1))
        if zero.size == 1 and mat.shape[1] == len(cats) - 1:  # treatment coding
            ref = cats[int(zero[0])]
            others = [c for c in cats if c != ref]
            labels.update({c: f"{factor.name()}{s}"
                           for c, s in zip(others, contrast.column_suffixes, strict=True)})
    return cats, ref, labels


def _binary(values: np.ndarray) -> bool:
    v = values[~np.isnan(values)]
    return v.size > 0 and bool(np.all((v == 0) | (v == 1))) and np.unique(v).size == 2


def formula_effects(spec, frame: pd.DataFrame, dummy: bool) -> list[Effect]:
    """The effects of a formula model, in order of the variables' first appearance."""
    order, categorical = _variables(spec, frame)
    out = []
    for col in order:
        if col in categorical:
            cats, ref, labels = categorical[col]
            out += [Effect(labels[c], col, True, c, ref) for c in cats if c != ref]
            continue
        values = frame[col]
        if values.dtype.kind not in "biuf":  # a string column inside a numeric term
            cats = sorted(pd.unique(values.dropna()), key=str)
            out += [Effect(f"{col}[T.{c}]", col, True, c, cats[0]) for c in cats[1:]]
        elif dummy and _binary(values.to_numpy(dtype=float)):
            out.append(Effect(str(col), col, True, 1, 0))
        else:
            out.append(Effect(str(col), col, False))
    return out


def array_effects(data, dummy: bool) -> list[Effect]:
    """One effect per design column except the constant, as statsmodels."""
    out = []
    for j, name in enumerate(data.exog_names):
        if j == data.intercept_index:
            continue
        binary = dummy and _binary(data.exog[:, j])
        out.append(Effect(name, j, binary, 1.0 if binary else None, 0.0 if binary else None))
    return out


# --- designs at modified data -----------------------------------------------------------------


class FormulaDesigns:
    """Designs (kept columns) of data rows changed through the stored formula design."""

    def __init__(self, spec, keep: np.ndarray) -> None:
        self.spec, self.keep = spec, keep

    def build(self, rows: pd.DataFrame) -> np.ndarray:
        return self.spec.exog(rows)[:, self.keep]

    def value(self, rows: pd.DataFrame, v) -> np.ndarray:
        return rows[v].to_numpy(dtype=float)

    def setting(self, rows: pd.DataFrame, v, value) -> pd.DataFrame:
        col = rows[v]
        if isinstance(col.dtype, pd.CategoricalDtype):
            return rows.assign(**{v: pd.Categorical([value] * len(rows),
                                                   categories=col.cat.categories)})
        return rows.assign(**{v: np.repeat(np.asarray([value], dtype=object if
                                                      col.dtype.kind == "O" else None),
                                           len(rows))})

    def derivative(self, rows: pd.DataFrame, v) -> np.ndarray:
        x = rows[v].to_numpy(dtype=float)
        floor = STEP * np.mean(np.abs(x)) if np.any(x) else 1.0
        h = STEP * np.maximum(np.abs(x), floor)

        def central(step: np.ndarray) -> np.ndarray:
            up = self.build(rows.assign(**{v: x + step}))
            down = self.build(rows.assign(**{v: x - step}))
            return (up - down) / (2.0 * step[:, None])

        return (4.0 * central(h / 2.0) - central(h)) / 3.0  # Richardson: error O(h^4)

    def at_means(self, rows: pd.DataFrame, means: dict) -> pd.DataFrame:
        return rows.assign(**means) if means else rows


class ArrayDesigns:
    """Designs of an array model: a variable is a design column."""

    def __init__(self, keep: np.ndarray) -> None:
        self.keep = keep

    def build(self, rows: np.ndarray) -> np.ndarray:
        return rows[:, self.keep]

    def value(self, rows: np.ndarray, j: int) -> np.ndarray:
        return rows[:, j]

    def setting(self, rows: np.ndarray, j: int, value) -> np.ndarray:
        out = rows.copy()
        out[:, j] = value
        return out

    def derivative(self, rows: np.ndarray, j: int) -> np.ndarray:
        d = np.zeros((rows.shape[0], self.keep.size))
        d[:, j] = 1.0
        return d[:, self.keep]

    def at_means(self, rows: np.ndarray, means: dict) -> np.ndarray:
        out = rows.copy()
        for j, m in means.items():
            out[:, j] = m
        return out


# --- the mean of the response as a function of the linear predictors --------------------------


class GLMMean:
    """F(eta) = g^-1(eta): one output, one linear predictor."""

    def __init__(self, link) -> None:
        self.link = link

    def value(self, eta: np.ndarray) -> np.ndarray:
        return self.link.inverse(eta)

    def jac(self, eta: np.ndarray) -> np.ndarray:
        """(n, M, K1) = (n, 1, 1)."""
        return self.link.mu_eta(eta)[:, :, None]

    def hess_dot(self, eta: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """sum_l d2F_m / deta_j deta_l delta_l, shape (n, 1, 1)."""
        return (self.link.mu_eta2(eta) * delta)[:, :, None]


class SoftmaxMean:
    """F(eta) = softmax([0, eta]) in fit order (reference first)."""

    def value(self, eta: np.ndarray) -> np.ndarray:
        full = np.column_stack([np.zeros(eta.shape[0]), eta])
        full -= full.max(axis=1, keepdims=True)
        e = np.exp(full)
        return e / e.sum(axis=1, keepdims=True)

    def jac(self, eta: np.ndarray) -> np.ndarray:
        """J[n, k, j] = p_k (delta_k,j+1 - p_j+1)."""
        p = self.value(eta)
        J = -p[:, :, None] * p[:, None, 1:]
        J[:, 1:, :] += p[:, 1:, None] * np.eye(eta.shape[1])[None]
        return J

    def hess_dot(self, eta: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """d/deta_j of (J delta)_k = J_kj (delta_k - dbar) - p_k p_j (delta_j - dbar)."""
        p = self.value(eta)
        J = self.jac(eta)
        full = np.column_stack([np.zeros(delta.shape[0]), delta])
        dbar = np.sum(p * full, axis=1)
        dev = full - dbar[:, None]  # (n, K)
        return J * dev[:, :, None] - p[:, :, None] * (p[:, 1:] * dev[:, 1:])[:, None, :]


# --- the effects and their gradients ----------------------------------------------------------


def _derivative(mean_fn, B, X, D, off, w, ey: bool) -> tuple[np.ndarray, np.ndarray]:
    """sum_i w_i dF(eta_i)/dv (or d log F / dv) and its gradient in B, (M,) and (M, K1 r)."""
    eta = X @ B + off[:, None]
    delta = D @ B
    J = mean_fn.jac(eta)
    Hd = mean_fn.hess_dot(eta, delta)
    m = np.einsum("nmj,nj->nm", J, delta)
    if ey:
        F = mean_fn.value(eta)[:, :, None]
        Hd = Hd / F - m[:, :, None] * J / F**2
        J = J / F
        m = m / F[:, :, 0]
    wv = w[:, None, None]
    grad = np.einsum("nmj,na->mja", Hd * wv, X) + np.einsum("nmj,na->mja", J * wv, D)
    return w @ m, grad.reshape(grad.shape[0], -1)


def _discrete(mean_fn, B, X_level, X_ref, off, w, ey: bool) -> tuple[np.ndarray, np.ndarray]:
    """sum_i w_i [T(F(X_level B)) - T(F(X_ref B))], T = identity or log, and its gradient."""
    value, grad = 0.0, 0.0
    for X, sign in ((X_level, 1.0), (X_ref, -1.0)):
        eta = X @ B + off[:, None]
        F, J = mean_fn.value(eta), mean_fn.jac(eta)
        if ey:
            with np.errstate(divide="ignore"):
                J, F = J / F[:, :, None], np.log(F)
        value = value + sign * (w @ F)
        g = np.einsum("nmj,na->mja", J * w[:, None, None], X)
        grad = grad + sign * g.reshape(g.shape[0], -1)
    return value, grad


def _rows(source, sl: slice):
    return source.iloc[sl] if isinstance(source, pd.DataFrame) else source[sl]


def _means(source, effects: list[Effect], designs, w: np.ndarray) -> dict:
    """Weighted means of the numeric variables (categorical ones stay as observed)."""
    out = {}
    for eff in effects:
        v = eff.variable
        if v in out:
            continue
        if isinstance(designs, ArrayDesigns) or source[v].dtype.kind in "biuf":
            if not eff.discrete or eff.ref == 0:
                out[v] = float(w @ designs.value(source, v))
    return out


def get_margeff(res, at: str = "overall", method: str = "dydx",
                dummy: bool = False) -> MarginalEffects:
    """Marginal effects of a GLM-type or multinomial fit (see the module docstring)."""
    if at not in ATS:
        raise ValueError(f"at must be 'overall' or 'mean', got {at!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(dummy, (bool, np.bool_)):
        raise ValueError(f"dummy must be True or False, got {dummy!r}")
    m, keep = res.model, res._keep
    data = m.data
    multi = isinstance(res.params, pd.DataFrame)
    B = res.params.to_numpy()[keep]
    B = B if multi else B[:, None]
    mean_fn = SoftmaxMean() if multi else GLMMean(m.family.link)
    if data.spec is not None:
        source, designs = data.spec._rebuild, FormulaDesigns(data.spec, keep)
        effects = formula_effects(data.spec, source, dummy)
    else:
        source, designs = data.exog, ArrayDesigns(keep)
        effects = array_effects(data, dummy)
    if not effects:
        raise ValueError("get_margeff: the model has no variables besides the intercept")
    f = np.asarray(m.freq_weights, dtype=float)
    w = f / f.sum()
    ey, ex = method.startswith("ey"), method.endswith("ex")
    if at == "mean":
        values, grads = _at_mean(source, designs, effects, mean_fn, B, m.offset, w, ey, ex)
    else:
        values, grads = _overall(source, designs, effects, mean_fn, B, m, w, ey, ex)
    return _assemble(res, effects, values, grads, at, method, bool(dummy), multi)


def _overall(source, designs, effects, mean_fn, B, model, w, ey, ex):
    """Average of the per-row effects, accumulated over blocks of rows."""
    keep = designs.keep
    n, size = model.exog.shape[0], block_rows(4 * keep.size)
    values = [0.0] * len(effects)
    grads = [0.0] * len(effects)
    for s in range(0, n, size):
        sl = slice(s, min(s + size, n))
        rows, wc, off = _rows(source, sl), w[sl], np.asarray(model.offset[sl], dtype=float)
        X = model.exog[sl][:, keep]
        refs = {}
        for i, eff in enumerate(effects):
            v = eff.variable
            if eff.discrete:
                if (v, eff.ref) not in refs:
                    refs[v, eff.ref] = designs.build(designs.setting(rows, v, eff.ref))
                X_level = designs.build(designs.setting(rows, v, eff.level))
                val, grad = _discrete(mean_fn, B, X_level, refs[v, eff.ref], off, wc, ey)
            else:
                scale = wc * designs.value(rows, v) if ex else wc
                val, grad = _derivative(mean_fn, B, X, designs.derivative(rows, v), off, scale,
                                        ey)
            values[i] = values[i] + val
            grads[i] = grads[i] + grad
    return values, grads


def _at_mean(source, designs, effects, mean_fn, B, offset, w, ey, ex):
    """Effects at one averaged design row (numeric variables at their means)."""
    means = _means(source, effects, designs, w)
    n = w.size
    size = block_rows(4 * designs.keep.size)
    acc: dict = {}

    def add(key, block_design, wc):
        acc[key] = acc.get(key, 0.0) + wc @ block_design

    for s in range(0, n, size):
        sl = slice(s, min(s + size, n))
        rows, wc = designs.at_means(_rows(source, sl), means), w[sl]
        add("X", designs.build(rows), wc)
        for eff in effects:
            v = eff.variable
            if eff.discrete:
                for value in (eff.level, eff.ref):
                    if (v, value) not in acc:
                        add((v, value), designs.build(designs.setting(rows, v, value)), wc)
            else:
                add(("d", v), designs.derivative(rows, v), wc)
    one, off = np.ones(1), np.array([float(w @ np.asarray(offset, dtype=float))])
    X = acc["X"][None, :]
    values, grads = [], []
    for eff in effects:
        v = eff.variable
        if eff.discrete:
            val, grad = _discrete(mean_fn, B, acc[v, eff.level][None, :], acc[v, eff.ref][None, :],
                                  off, one, ey)
        else:
            scale = one * means[v] if ex else one
            val, grad = _derivative(mean_fn, B, X, acc["d", v][None, :], off, scale, ey)
        values.append(val)
        grads.append(grad)
    return values, grads


def _assemble(res, effects, values, grads, at, method, dummy, multi) -> MarginalEffects:
    """Label the effects, and their covariance G V G' with the fit's covariance."""
    values = np.array([np.atleast_1d(v) for v in values])  # (E, M)
    G = np.array(grads)  # (E, M, K1 r)
    labels = [e.label for e in effects]
    keep = res._keep
    k1 = res.params.shape[1] if multi else 1
    kept = np.flatnonzero(np.tile(keep, k1))
    V = res._cov.to_numpy()[np.ix_(kept, kept)]
    if multi:
        order = res._natural_order  # fit order -> natural level order
        values, G = values[:, order], G[:, order, :]
        index = pd.MultiIndex.from_product([res.levels, labels], names=["level", "term"])
        values, G = values.T.ravel(), G.transpose(1, 0, 2).reshape(-1, G.shape[2])
        kinds = [_kind(e) for _ in res.levels for e in effects]
        quantile = stats.norm
    else:
        index = pd.Index(labels, name="term")
        values, G = values[:, 0], G[:, 0, :]
        kinds = [_kind(e) for e in effects]
        quantile = stats.t(res.df_resid) if getattr(res, "_use_t", False) else stats.norm
    cov = G @ V @ G.T
    title = f"{type(res.model).__name__} Marginal Effects ({method}, at {at}; nobs = " \
            f"{num(res.nobs)})"
    return MarginalEffects(values, (cov + cov.T) / 2.0, index, kinds, at, method, dummy,
                           quantile, title, getattr(res, "cov_type", "nonrobust"))


def _kind(effect: Effect) -> str:
    return "discrete" if effect.discrete else "derivative"
