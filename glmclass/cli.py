"""Command line: ``python -m glmclass demo | fit | compare``.

Bad arguments and data problems print one line ``glmclass: error: ...`` and exit with code 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

import glmclass as gc

_FAMILIES = {"binomial": "Binomial", "gaussian": "Gaussian", "poisson": "Poisson"}


class _UsageError(Exception):
    """A bad command line: reported in one line with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not usage + message
        raise _UsageError(message)


def _models() -> dict:
    """Model names the CLI accepts: the GLMs, plus any other model class the package has."""
    names = {"logit": "Logit", "probit": "Probit", "glm": "GLM", "mnlogit": "MNLogit",
             "lda": "LDA", "qda": "QDA", "bayes_logit": "BayesLogit"}
    return {k: getattr(gc, v) for k, v in names.items() if hasattr(gc, v)}


def _build(model: str, formula: str, data: pd.DataFrame, family: str | None, link: str | None):
    cls = _models()[model]
    if model == "glm":
        fam_cls = getattr(gc.families, _FAMILIES[family or "binomial"])
        fam = fam_cls(gc.links.get_link(link)) if link else fam_cls()
        return cls.from_formula(formula, data, family=fam)
    if link or family:
        raise _UsageError("--link and --family apply to --model glm only")
    return cls.from_formula(formula, data)


def _read(path: str) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise _UsageError(f"no such file: {path}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise _UsageError(f"cannot read {path} as CSV: {str(exc).splitlines()[0]}") from None


def _jsonable(obj):
    if isinstance(obj, pd.DataFrame):
        return {str(c): _jsonable(obj[c]) for c in obj.columns}
    if isinstance(obj, pd.Series):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (np.floating, float)):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, (np.integer, np.bool_)):
        return obj.item()
    return obj


def results_dict(res) -> dict:
    """The numbers of a results object as plain JSON-ready values."""
    out = {"model": type(res.model).__name__, "formula": getattr(res, "formula", None)}
    for name in ("params", "bse", "pvalues"):
        if hasattr(res, name):
            out[name] = _jsonable(getattr(res, name))
    for name in ("nobs", "df_model", "df_resid", "llf", "llnull", "deviance", "aic", "bic",
                 "converged", "n_iter", "log_evidence"):
        if hasattr(res, name):
            out[name] = _jsonable(getattr(res, name))
    return out


def _render(res, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(results_dict(res), indent=2)
    s = res.summary()
    return {"text": s.as_text, "html": s.as_html, "latex": s.as_latex}[fmt]()


def _render_table(table: pd.DataFrame, fmt: str) -> str:
    if fmt == "json":
        return table.to_json(orient="index", indent=2)
    title = f"Model comparison (likelihood: {table.attrs.get('likelihood', 'conditional')})"
    s = gc.summary.Summary(title, [], [(None, table)])
    return {"text": s.as_text, "html": s.as_html, "latex": s.as_latex}[fmt]()


def demo() -> str:
    """Fit Logit, Probit and a cloglog GLM to statsmodels' Spector data; report and compare."""
    from statsmodels.datasets import spector

    data = spector.load_pandas().data
    formula = "GRADE ~ GPA + TUCE + PSI"
    fits = {
        "logit": gc.Logit.from_formula(formula, data).fit(),
        "probit": gc.Probit.from_formula(formula, data).fit(),
        "cloglog": gc.GLM.from_formula(
            formula, data, family=gc.families.Binomial(link=gc.links.CLogLog())).fit(),
    }
    parts = [
        "glmclass demo: does a new teaching method (PSI) raise grades?",
        "Spector & Mazzeo (1980) data, shipped with statsmodels: 32 students, GRADE = 1 if the",
        "final grade improved; GPA, TUCE (a pre-test score) and PSI as predictors.", "",
    ]
    for res in fits.values():
        parts += [str(res.summary()), ""]
    table = gc.compare(list(fits.values()), names=list(fits))
    parts.append(_render_table(table, "text"))
    best = table.index[0]
    parts.append(f"\nLowest BIC: {best} (BIC weight {table.loc[best, 'bic_weight']:.2f}).")
    return "\n".join(parts)


def _parser() -> _Parser:
    p = _Parser(prog="glmclass", description="Linear models for classification.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("demo", help="fit Logit, Probit and cloglog models to bundled data")
    models = sorted(_models())
    f = sub.add_parser("fit", help="fit one model and print its summary")
    f.add_argument("formula", help='patsy formula, e.g. "y ~ x1 + C(g)"')
    f.add_argument("data", help="CSV file with a header row")
    c = sub.add_parser("compare", help="fit several formulas and print a comparison table")
    c.add_argument("data", help="CSV file with a header row")
    c.add_argument("formulas", nargs="+", help="patsy formulas")
    for q in (f, c):
        q.add_argument("--model", choices=models, default="logit")
        q.add_argument("--link", default=None, help="link for --model glm (logit, probit, "
                       "cloglog, loglog, cauchit, log, identity)")
        q.add_argument("--family", choices=sorted(_FAMILIES), default=None,
                       help="family for --model glm (default binomial)")
        q.add_argument("--format", choices=["text", "html", "latex", "json"], default="text")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 success, 2 bad arguments or data)."""
    try:
        args = _parser().parse_args(argv)
        if args.command == "demo":
            print(demo())
            return 0
        if args.family and args.family not in _FAMILIES:
            raise _UsageError(f"unknown family {args.family!r}")
        data = _read(args.data)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.command == "fit":
                res = _build(args.model, args.formula, data, args.family, args.link).fit()
                out = _render(res, args.format)
            else:
                fits = [_build(args.model, f, data, args.family, args.link).fit()
                        for f in args.formulas]
                out = _render_table(gc.compare(fits, names=args.formulas), args.format)
        print(out)
        for w in {str(w.message) for w in caught if issubclass(w.category, UserWarning)}:
            print(f"glmclass: warning: {w}", file=sys.stderr)
        return 0
    except (_UsageError, ValueError, TypeError, KeyError, gc.GlmclassError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"glmclass: error: {msg}", file=sys.stderr)
        return 2
