"""Model comparison tables: information criteria, BIC weights, evidence and Bayes factors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def _kind(res) -> str:
    """``"joint"`` for generative models (LDA, QDA, naive Bayes), ``"conditional"`` else."""
    return getattr(res, "likelihood_kind", "conditional")


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


def compare(results: Sequence, names: Sequence[str] | None = None,
            likelihood: str = "auto") -> pd.DataFrame:
    """Compare fitted models on the same rows by llf, AIC, BIC, BIC weights and evidence.

    Parameters
    ----------
    results : sequence of results objects
        Fits of any glmclass models to the same rows.
    names : sequence of str, optional
        Row labels; default the formulas (or ``model 1``, ``model 2``, ... without one).
    likelihood : {"auto", "joint", "conditional"}
        What ``llf`` means in the table. Generative classifiers (LDA, QDA, naive Bayes) have a
        joint likelihood p(x, class) that cannot be compared with the conditional likelihood
        p(class | x) of discriminative models; mixing them needs ``"conditional"``, which
        compares every model on sum ln p(class_n | x_n).

    Returns
    -------
    pandas.DataFrame
        One row per model, sorted by ``bic`` (best first), with columns ``nobs``, ``df_model``,
        ``llf``, ``aic``, ``bic``, ``delta_bic``, ``bic_weight``, ``log_evidence`` (NaN where a
        model has none) and ``bayes_factor`` (evidence ratio to the model with the largest
        evidence; NaN without evidence). ``attrs["likelihood"]`` says which likelihood was used.

    Raises
    ------
    ValueError
        When the models were fit to different rows, or joint and conditional likelihoods are
        mixed without ``likelihood="conditional"``.
    """
    results = list(results)
    if not results:
        raise ValueError("compare needs at least one fitted model")
    if likelihood not in ("auto", "joint", "conditional"):
        raise ValueError(f"likelihood must be 'auto', 'joint' or 'conditional', got {likelihood!r}")
    if names is None:
        names = _default_names(results)
    names = list(names)
    if len(names) != len(results):
        raise ValueError(f"{len(names)} names for {len(results)} models")
    names = _disambiguate(names)
    keys = {r._row_key for r in results}
    if len(keys) > 1 or len({float(r.nobs) for r in results}) > 1:
        raise ValueError("the models were fit to different rows (different data, missing-value "
                         "drops or weights); compare models fit to the same rows")
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
    rows = []
    for r in results:
        llf = r.llf_conditional if (likelihood == "conditional" and _kind(r) == "joint") else r.llf
        k, n = r.k_params, float(r.nobs)
        rows.append({"nobs": n, "df_model": float(r.df_model), "llf": float(llf),
                     "aic": -2 * llf + 2 * k, "bic": -2 * llf + k * np.log(n),
                     "log_evidence": float(getattr(r, "log_evidence", np.nan))})
    table = pd.DataFrame(rows, index=pd.Index(names, name="model"))
    table["delta_bic"] = table["bic"] - table["bic"].min()
    rel = np.exp(-0.5 * table["delta_bic"])
    table["bic_weight"] = rel / rel.sum()
    ev = table["log_evidence"]
    table["bayes_factor"] = np.exp(ev - ev.max()) if ev.notna().any() else np.nan
    cols = ["nobs", "df_model", "llf", "aic", "bic", "delta_bic", "bic_weight", "log_evidence",
            "bayes_factor"]
    table = table[cols].sort_values("bic", kind="stable")
    table.attrs["likelihood"] = likelihood
    return table
