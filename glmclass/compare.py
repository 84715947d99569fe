"""Model comparison tables: information criteria, BIC weights, evidence and Bayes factors.

Likelihoods are comparable only when they are probabilities of the same data: the same rows,
the same response and, for the joint likelihoods p(x, class) of generative classifiers, the same
features measured the same way. :func:`compare` checks each of these and refuses, saying why,
rather than rank models by numbers that mean different things.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .results.anova import comparison_llf, mixed_notes
from .results.dask import same_rows
from .results.mixed import MixedGLMResults
from .summary import keyed_table

_COLUMNS = ["nobs", "df_model", "llf", "aic", "bic", "delta_bic", "bic_weight", "log_evidence",
            "bayes_factor"]
_EVIDENCE = ["log_evidence", "bayes_factor"]


class ComparisonTable(pd.DataFrame):
    """The DataFrame :func:`compare` returns, printed to fit a terminal.

    It is a pandas DataFrame with every column (``table["log_evidence"]`` is there, NaN for
    models without evidence); only its printed form is shorter: the evidence columns are shown
    when some model has evidence, counts print as integers, numbers to 4 decimals, and when the
    model names make the table wider than 80 columns the rows are numbered and the names listed
    above the table (as R's ``anova`` does). Frames derived from it (``table[["aic"]]``,
    ``table.sort_values(...)``) are plain DataFrames.
    """

    @property
    def _constructor(self):
        return pd.DataFrame

    def shown_table(self) -> pd.DataFrame:
        """The columns worth showing: the evidence ones only when some model has evidence."""
        frame = pd.DataFrame(self)
        empty = [c for c in _EVIDENCE if c in frame and frame[c].isna().all()]
        return frame.drop(columns=empty)

    def to_text(self, width: int = 80) -> str:
        """The table as text at most ``width`` columns wide (what ``print(table)`` shows).

        Parameters
        ----------
        width : int
            Widest line; rows are numbered with the names listed above when the names do not
            fit, and columns wrap into blocks when the numbers alone do not.
        """
        lines = keyed_table(self.shown_table(), width)
        kind = self.attrs.get("likelihood")
        if kind == "joint":
            lines.append("llf: joint log-likelihood sum ln p(x, class); sorted by BIC")
        elif kind == "conditional":
            lines.append("llf: conditional log-likelihood sum ln p(y | x); sorted by BIC")
        elif kind == "marginal":
            lines.append("llf: marginal log-likelihood ln p(y | x), the random effects "
                         "integrated out (Laplace or adaptive quadrature); npar: fixed effects "
                         "and covariance parameters, as lme4; sorted by BIC")
        lines += [f"Note: {n}" for n in self.attrs.get("notes", [])]
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return self.to_text()

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        return self.shown_table()._repr_html_()


def _kind(res) -> str:
    """``"joint"`` for generative models (LDA, QDA, naive Bayes), ``"conditional"`` else."""
    return getattr(res, "likelihood_kind", "conditional")


def _check_results(results: list) -> None:
    """Every item must be a fitted results object; say what it is otherwise."""
    for i, r in enumerate(results, start=1):
        if all(hasattr(r, a) for a in ("llf", "k_params", "nobs", "rows_fingerprint", "model")):
            continue
        if hasattr(r, "fit") and hasattr(r, "exog"):
            raise TypeError(f"compare: item {i} is a {type(r).__name__} model, not a fitted "
                            "results object: pass model.fit()")
        raise TypeError(f"compare takes the results of fits (e.g. gcf.logit(f, df).fit()); "
                        f"item {i} is {type(r).__name__} {r!r:.40}")


def _default_names(results: list) -> list[str]:
    """The formulas; models sharing a formula (LDA and QDA, say) get their class name too."""
    names = [getattr(r, "formula", None) or f"model {i + 1}" for i, r in enumerate(results)]
    if len(set(names)) == len(names):
        return names
    return [f"{type(r.model).__name__}: {n}" if names.count(n) > 1 else n
            for r, n in zip(results, names, strict=True)]


def _disambiguate(names: list[str]) -> list[str]:
    """Number only the names that are still repeated."""
    return [f"{n} [{i + 1}]" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _response_key(res) -> str:
    """Fingerprint of the response a model was fit to.

    A classifier's response is compared as a partition of the rows (the labels numbered by
    first appearance), so ``y`` and ``y == 1``, 0/1 and "no"/"yes", or two level orders of one
    column are the same response; proportions and other numeric responses are compared by value,
    with the binomial trials. On Dask data the response is identified by its column name and
    the rows (it is never brought to the client).
    """
    m = res.model
    values = m.data.endog
    if not m.data.in_memory:  # the response stays where the rows are (Dask partitions)
        return hashlib.sha1(f"{m.data.endog_name}\0{res.rows_fingerprint}".encode()).hexdigest()
    if getattr(m, "levels", None) is not None:
        codes, _ = pd.factorize(np.asarray(values, dtype=object))
        return _digest(codes.astype(np.int64))
    parts = [np.asarray(values, dtype=float)]
    if getattr(m, "var_weights", None) is not None:
        parts.append(np.asarray(m.var_weights, dtype=float))
    return _digest(*parts)


def _check_responses(results: list, names: list[str]) -> None:
    keys = [_response_key(r) for r in results]
    if not all(r.model.data.in_memory and not getattr(r, "data_removed", False)
               for r in results):  # the rows are the same (checked): by column name
        keys = [r.model.data.endog_name for r in results]
    if len(set(keys)) > 1:
        j = next(i for i, k in enumerate(keys) if k != keys[0])
        a, b = (results[i].model.data.endog_name for i in (0, j))
        what = f"{a!r} and {b!r}" if a != b else f"two different columns named {a!r}"
        raise ValueError(f"{names[0]!r} and {names[j]!r} model different responses ({what}): "
                         "likelihoods of different data cannot be compared; compare models of "
                         "one response")


def _features(res) -> dict:
    """Feature name -> fingerprint of its values (the x of a joint likelihood p(x, class))."""
    m = res.model
    return {n: _digest(np.asarray(m.exog[:, j], dtype=float))
            for j, n in enumerate(m.exog_names)}


def _check_joint(results: list, names: list[str]) -> None:
    """Joint likelihoods p(x, class) are comparable only over the same x, measured alike."""
    measures = {getattr(r, "feature_measure", "lebesgue") for r in results}
    if len(measures) > 1:
        raise ValueError(
            "a Bernoulli naive Bayes joint likelihood is a probability of binary features, "
            "while LDA, QDA and Gaussian naive Bayes give densities of continuous ones: they "
            "cannot be compared; pass likelihood='conditional' to compare all on "
            "ln p(class | x)")
    first = _features(results[0])
    for r, name in zip(results[1:], names[1:], strict=True):
        other = _features(r)
        if other == first:
            continue
        if set(other) != set(first):
            diff = sorted(set(first) ^ set(other))
            why = (f"different features ({', '.join(map(repr, diff[:4]))}"
                   f"{', ...' if len(diff) > 4 else ''} in one but not the other)")
        else:
            why = "features of the same names with different values"
        raise ValueError(
            f"{names[0]!r} and {name!r} have {why}: their joint likelihoods p(x, class) are "
            "densities over different x and cannot be ranked; pass likelihood='conditional' "
            "to compare them on ln p(class | x)")


def compare(results: Sequence, names: Sequence[str] | None = None,
            likelihood: str = "auto") -> pd.DataFrame:
    """Compare fitted models on the same rows by llf, AIC, BIC, BIC weights and evidence.

    Parameters
    ----------
    results : sequence of results objects
        Fits of any glmclass models to the same rows and the same response. A
        :class:`~glmclass.FirthLogit` fit enters with its ordinary (unpenalised) ``llf`` at
        the Firth estimate, as R's ``AIC()`` ranks a ``brglm2`` fit.
    names : sequence of str, optional
        Row labels; default the formulas (or ``model 1``, ``model 2``, ... without one).
    likelihood : {"auto", "joint", "conditional"}
        What ``llf`` means in the table. Generative classifiers (LDA, QDA, naive Bayes) have a
        joint likelihood p(x, class); discriminative ones the conditional likelihood
        p(class | x). ``"auto"`` uses the joint likelihood when every model is generative with
        the same features, and the conditional one when none is; ``"conditional"`` compares
        every model on sum ln p(class_n | x_n), which is always valid.

    Returns
    -------
    ComparisonTable
        A pandas DataFrame, one row per model, sorted by ``bic`` (best first), with columns
        ``nobs``, ``df_model``, ``llf``, ``aic``, ``bic``, ``delta_bic``, ``bic_weight``,
        ``log_evidence`` (NaN where a model has none) and ``bayes_factor`` (evidence ratio to
        the model with the largest evidence; NaN without evidence); counts are integers when
        they are whole. ``attrs["likelihood"]`` says which likelihood was used. Printed, it
        fits 80 columns (:class:`ComparisonTable`). A table with a mixed model
        (:class:`~glmclass.MixedGLM`) compares marginal log-likelihoods (``attrs["likelihood"]
        == "marginal"``; a fit by adaptive quadrature enters with its ``llf_marginal``, the
        saturated constant lme4 leaves out added back, and ``attrs["notes"]`` says so) and
        counts ``npar`` (fixed effects plus covariance parameters, lme4's ``anova``) in place
        of ``df_model``.

    Raises
    ------
    TypeError
        When an item is not a fitted results object (a number, or a model not yet fit).
    ValueError
        When the models were fit to different rows or different responses; when joint and
        conditional likelihoods are mixed without ``likelihood="conditional"``; when joint
        likelihoods are over different features (p(x, class) on different x spaces are not
        comparable) or mix a probability of binary features with densities.
    """
    results = list(results)
    if not results:
        raise ValueError("compare needs at least one fitted model")
    if likelihood not in ("auto", "joint", "conditional"):
        raise ValueError(f"likelihood must be 'auto', 'joint' or 'conditional', got {likelihood!r}")
    _check_results(results)
    if names is None:
        names = _default_names(results)
    names = list(names)
    if len(names) != len(results):
        raise ValueError(f"{len(names)} names for {len(results)} models")
    names = _disambiguate([str(n) for n in names])
    if not all(same_rows(results[0], r) for r in results[1:]):
        raise ValueError("the models were fit to different rows (different data, missing-value "
                         "drops or weights); compare models fit to the same rows")
    _check_responses(results, names)
    kinds = {_kind(r) for r in results}
    if likelihood == "auto":
        if len(kinds) > 1:
            raise ValueError(
                "generative models (LDA, QDA, naive Bayes) have a joint likelihood p(x, class) "
                "that cannot be compared with the conditional likelihood of discriminative models; "
                "pass likelihood='conditional' to compare all on ln p(class | x)")
        likelihood = kinds.pop()
    elif likelihood == "joint" and kinds != {"joint"}:
        raise ValueError("likelihood='joint' needs generative models only (LDA, QDA, naive Bayes)")
    if likelihood == "joint":
        _check_joint(results, names)
    return _table(results, names, likelihood)


def _table(results: list, names: list[str], likelihood: str) -> ComparisonTable:
    mixed = any(isinstance(r, MixedGLMResults) for r in results)
    columns = [c if not (mixed and c == "df_model") else "npar" for c in _COLUMNS]
    rows = []
    for r in results:
        if likelihood == "conditional" and _kind(r) == "joint":
            llf = r.llf_conditional
        else:
            llf = comparison_llf(r)
        k, n = r.k_params, float(r.nobs)
        count = {"npar": float(k)} if mixed else {"df_model": float(r.df_model)}
        rows.append({"nobs": n, **count, "llf": float(llf),
                     "aic": -2 * llf + 2 * k, "bic": -2 * llf + k * np.log(n),
                     "log_evidence": float(getattr(r, "log_evidence", np.nan))})
    table = pd.DataFrame(rows, index=pd.Index(names, name="model"))
    for c in ("nobs", columns[1]):  # counts as integers when they are whole
        v = table[c].to_numpy()
        if np.all(v == np.round(v)) and np.all(np.abs(v) < 2**53):
            table[c] = v.astype(np.int64)
    table["delta_bic"] = table["bic"] - table["bic"].min()
    rel = np.exp(-0.5 * table["delta_bic"])
    table["bic_weight"] = rel / rel.sum()
    ev = table["log_evidence"]
    table["bayes_factor"] = np.exp(ev - ev.max()) if ev.notna().any() else np.nan
    table = table[columns].sort_values("bic", kind="stable")
    out = ComparisonTable(table)
    out.attrs["likelihood"] = "marginal" if mixed else likelihood
    out.attrs["notes"] = mixed_notes(results, tested=False)
    return out
