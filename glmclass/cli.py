"""Command line: ``glmclass demo | fit | compare | predict | datasets``.

``fit``, ``compare`` and ``predict`` take a CSV file and formulas in either order (a formula is
the argument with a ``~``). Bad arguments and data problems print one line
``glmclass: error: ...`` and exit with code 2, never a traceback; run bare, the program prints
its usage. Only the formula is evaluated (through ``from_formula``); weights and offsets are
column names, never expressions.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import json
import os
import re
import sys
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

import glmclass as gc

from .models.registry import MODELS, ModelEntry

_FAMILIES = {"binomial": "Binomial", "gaussian": "Gaussian", "poisson": "Poisson"}
_WHICH = ("prob", "mean", "class", "linear", "score")
_ROW_OPTIONS = (("weights", "freq_weights"), ("var_weights", "var_weights"), ("offset", "offset"))

_EPILOG = """\
examples:
  glmclass datasets spector > spector.csv
  glmclass fit spector.csv "GRADE ~ GPA + TUCE + PSI" --model probit
  glmclass compare spector.csv "GRADE ~ GPA" "GRADE ~ GPA + PSI" --format latex
  glmclass predict spector.csv "GRADE ~ GPA + PSI" --newdata new.csv --output pred.csv

The CSV file and the formulas may come in either order. A column whose name has spaces or
symbols is written Q("mean radius") in a formula."""


class _UsageError(Exception):
    """A bad command line: reported in one line with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not usage + message
        raise _UsageError(message)


def _models() -> dict[str, ModelEntry]:
    """The ``--model`` choices: every model of the package's model list, by name."""
    return {entry.name: entry for entry in MODELS}


def _takes(entry: ModelEntry, argument: str) -> bool:
    """Whether the model's constructor has the keyword ``argument``."""
    return argument in inspect.signature(entry.cls).parameters


def _taking(argument: str) -> str:
    """The ``--model`` names whose constructor takes ``argument`` (and whose name does not
    fix it), for a message."""
    return " and ".join(e.name for e in MODELS
                        if _takes(e, argument) and argument not in dict(e.options))


# --- reading ----------------------------------------------------------------------------------
def _read(path: str, sep: str = ",") -> pd.DataFrame:
    """A CSV file (``-`` for standard input) as a DataFrame; every failure as one line.
    ``sep`` as typed (``\\t`` for a tab)."""
    sep = "\t" if sep in ("\\t", "tab") else sep
    try:
        source = sys.stdin if path == "-" else os.path.expanduser(path)
        data = pd.read_csv(source, sep=sep)
    except FileNotFoundError:
        raise _UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise _UsageError(f"{path} is a directory, not a CSV file") from None
    except PermissionError:
        raise _UsageError(f"cannot read {path}: permission denied") from None
    except UnicodeDecodeError as exc:
        raise _UsageError(f"cannot read {path}: it is not UTF-8 text ({exc.reason} at byte "
                          f"{exc.start}); save it as UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise _UsageError(f"cannot read {path} as CSV: {str(exc).splitlines()[0]}") from None
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a device
        raise _UsageError(f"cannot read {_short(path)}: "
                          f"{exc.strerror or exc if isinstance(exc, OSError) else exc}") from None
    _check_separator(data, path, sep)
    return data


_OTHER_SEPARATORS = {";": "';'", "\t": "'\\t' (a tab)", "|": "'|'"}


def _check_separator(data: pd.DataFrame, path: str, sep: str) -> None:
    """A file read as one column whose header holds another separator was split on the wrong
    character (a European ``;`` CSV, a TSV): say so and name ``--sep``."""
    if data.shape[1] != 1:
        return
    name = str(data.columns[0])
    for other, shown in _OTHER_SEPARATORS.items():
        if other != sep and other in name:
            raise _UsageError(f"{_short(path)} was read as one column {_short(name, 40)!r}: its "
                              f"fields look separated by {shown}; pass --sep {shown.split()[0]}")


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _is_file(arg: str) -> bool:
    try:
        return os.path.isfile(os.path.expanduser(arg))
    except (OSError, ValueError):
        return False


def _split(args: list[str], command: str) -> tuple[str, list[str]]:
    """The data file and the formulas among the positional arguments, in either order."""
    formulas = [a for a in args if "~" in a and not _is_file(a)]
    data = [a for a in args if a not in formulas]
    if not formulas:
        raise _UsageError(f"{command} needs a formula such as \"y ~ x1 + x2\" (with a '~') "
                          "beside the CSV file")
    if not data:
        raise _UsageError(f"{command} needs a CSV file beside the formula: glmclass {command} "
                          f"data.csv \"{_short(formulas[0], 40)}\"")
    if len(data) > 1:
        raise _UsageError(f"{command} takes one CSV file, got {len(data)} "
                          f"({', '.join(map(repr, (_short(d, 30) for d in data[:3])))}); "
                          "a formula needs a '~', e.g. \"y ~ x\"")
    if command != "compare" and len(formulas) > 1:
        raise _UsageError(f"{command} takes one formula, got {len(formulas)}; use compare to "
                          "fit several")
    return data[0], formulas


def _column(data: pd.DataFrame, name: str, option: str) -> pd.Series:
    if name in data.columns:
        return data[name]
    lower = {str(c).lower(): str(c) for c in data.columns}
    close = [lower[c] for c in difflib.get_close_matches(name.lower(), list(lower), n=3)]
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    raise _UsageError(f"{option} {name!r} is not a column of the data{hint} (give a column "
                      "name, not an expression)")


# --- building ---------------------------------------------------------------------------------
def _options(args, data: pd.DataFrame) -> tuple[type, dict]:
    """The model class and its constructor options from the command line."""
    entry = _models()[args.model]
    kw = dict(entry.options)  # what the name fixes (ordered_probit: the probit link)
    if _takes(entry, "family"):
        fam_cls = getattr(gc.families, _FAMILIES[args.family or "binomial"])
        kw["family"] = fam_cls(gc.links.get_link(args.link)) if args.link else fam_cls()
    elif args.family:
        raise _UsageError(f"--family applies to --model {_taking('family')} only")
    elif _takes(entry, "link"):
        if args.link and "link" in kw:
            raise _UsageError(f"--model {args.model} fixes the link ({kw['link']}); drop "
                              f"--link, or use --model {_taking('link').split(' and ')[-1]} "
                              f"--link {args.link}")
        if args.link:
            kw["link"] = gc.links.get_link(args.link)
    elif args.link:
        raise _UsageError(f"--link applies to --model {_taking('family')} and "
                          f"{_taking('link')} only")
    for option, key in _ROW_OPTIONS:
        col = getattr(args, option)
        if col is None:
            continue
        flag = "--" + option.replace("_", "-")
        if not _takes(entry, key):
            raise _UsageError(f"{flag} is not available for --model {args.model}")
        kw[key] = _column(data, col, flag)
    return entry.cls, kw


_QUOTED = re.compile(r"""Q\(\s*(['"]).*?\1\s*\)""")


def _formula_hint(formula: str, data: pd.DataFrame) -> str | None:
    """Why a formula may have failed: a column name with spaces or symbols written bare, or
    R's ``y ~ .``."""
    bare = _QUOTED.sub(" ", formula)
    words = {_norm(w) for w in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", bare)}
    for c in data.columns:
        name = str(c)
        if not name.isidentifier() and (name in bare or _norm(name) in words):
            return (f"the column {name!r} has spaces or symbols in its name: write "
                    f"Q(\"{name}\") in the formula")
    if re.search(r"(~|\+)\s*\.\s*($|[+\-])", formula):
        return ("R's '.' (all other columns) is not understood here: list the columns, "
                "e.g. \"y ~ a + b + c\"")
    return None


_UNKNOWN_NAME = re.compile(r"uses '([^']+)', which is neither a column of the data")


def _unknown_name(exc: BaseException, data: pd.DataFrame) -> str | None:
    """The command line's own message for a formula name that is not a column: the closest
    columns and ``Q("...")`` (the library's advice, ``eval_env=``, is not available here)."""
    match = _UNKNOWN_NAME.search(str(exc))
    if match is None:
        return None
    name = match.group(1)
    lower = {str(c).lower(): str(c) for c in data.columns}
    close = [lower[c] for c in difflib.get_close_matches(name.lower(), list(lower), n=3)]
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    return (f"the formula uses {name!r}, which is not a column of the data{hint} (a column "
            "whose name has spaces or symbols is written Q(\"name\") in the formula)")


def _norm(name: str) -> str:
    """A name without case, spaces and symbols: 'mean_radius' and 'Mean Radius' meet."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _fit(args, formula: str, data: pd.DataFrame):
    cls, kw = _options(args, data)
    try:
        model = cls.from_formula(formula, data, **kw)
    except Exception as exc:
        hint = _formula_hint(formula, data)
        if hint is not None:
            raise _UsageError(f"{hint} ({_message(exc)})") from None
        unknown = _unknown_name(exc, data)
        if unknown is not None:
            raise _UsageError(unknown) from None
        raise
    return model.fit(**_cov_options(args, model))


def _cov_options(args, model) -> dict:
    """``fit(cov_type=..., cov_kwds=...)`` from ``--cov-type`` and ``--cov-groups``."""
    cov_type = getattr(args, "cov_type", None)
    groups = getattr(args, "cov_groups", None)
    if cov_type is None and groups is None:
        return {}
    if groups is not None and cov_type not in (None, "cluster"):
        raise _UsageError(f"--cov-groups gives cluster labels: use it with --cov-type cluster, "
                          f"not {cov_type}")
    if "cov_type" not in inspect.signature(model.fit).parameters:
        raise _UsageError(f"--cov-type is not available for --model {args.model} (it has no "
                          "covariance of its estimates)")
    if groups is None:
        if cov_type == "cluster":
            raise _UsageError("--cov-type cluster needs --cov-groups COLUMN (or two columns "
                              "A,B for two-way clustering)")
        return {"cov_type": cov_type}
    columns = [c.strip() for c in groups.split(",") if c.strip()]
    if not 1 <= len(columns) <= 2:
        raise _UsageError(f"--cov-groups takes one column or two (A,B); got {groups!r}")
    return {"cov_type": "cluster",
            "cov_kwds": {"groups": columns[0] if len(columns) == 1 else columns}}


# --- output -----------------------------------------------------------------------------------
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
    for name in ("params", "bse", "pvalues", "direction"):
        if hasattr(res, name):
            out[name] = _jsonable(getattr(res, name))
    for name in ("nobs", "df_model", "df_resid", "llf", "llnull", "deviance", "aic", "bic",
                 "converged", "n_iter", "log_evidence", "threshold", "n_epochs"):
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
    kind = table.attrs.get("likelihood", "conditional")
    if fmt == "text":
        return f"Model comparison (likelihood: {kind})\n\n{table.to_text()}"
    s = gc.summary.Summary("Model comparison", [], [(None, table.shown_table())],
                           subtitle=f"likelihood: {kind}")
    return {"html": s.as_html, "latex": s.as_latex}[fmt]()


def _predictions(res, data: pd.DataFrame, which: list[str],
                 offset: str | None = None) -> pd.DataFrame:
    """One column per prediction (``prob_<level>``, ``score_<level>`` for tables), one row per row
    of ``data``, in order (the in-sample file or ``--newdata``): rows with a missing predictor
    give empty fields, rows with a missing response are predicted (R's ``predict(fit,
    newdata)``); ``offset`` is the column of ``data`` added to the linear predictor."""
    kw = {}
    if offset is not None:
        kw["offset"] = _column(data, offset, "--offset").to_numpy(dtype=float, na_value=np.nan)
    parts = []
    for w in which:
        kind = "prob" if w == "prob" else w
        out = res.predict(data, which=kind, **kw)
        if isinstance(out, pd.DataFrame):
            out = out.set_axis([f"{w}_{c}" for c in out.columns], axis=1)
        else:
            out = pd.Series(out, name=w).to_frame() if not isinstance(out, pd.Series) \
                else out.rename(w).to_frame()
        parts.append(out.reset_index(drop=True))
    table = pd.concat(parts, axis=1)
    if len(table) != len(data):  # never a silent shift of the rows against the input
        raise _UsageError(f"the predictions have {len(table)} rows for {len(data)} input rows")
    return table


def _which(text: str) -> list[str]:
    which = [w.strip() for w in text.split(",") if w.strip()]
    bad = [w for w in which if w not in _WHICH]
    if bad or not which:
        raise _UsageError(f"--which takes a comma-separated list of {', '.join(_WHICH)}; got "
                          f"{text!r}")
    return which


def demo() -> str:
    """Fit Logit, Probit and a cloglog GLM to the bundled Spector data; report and compare."""
    data = gc.datasets.load("spector")
    formula = "GRADE ~ GPA + TUCE + PSI"
    fits = {
        "logit": gc.Logit.from_formula(formula, data).fit(),
        "probit": gc.Probit.from_formula(formula, data).fit(),
        "cloglog": gc.GLM.from_formula(
            formula, data, family=gc.families.Binomial(link=gc.links.CLogLog())).fit(),
    }
    parts = [
        "glmclass demo: does a new teaching method (PSI) raise grades?",
        "Spector & Mazzeo (1980) data, bundled as glmclass.datasets.load('spector'): 32",
        "students, GRADE = 1 if the final grade improved; GPA, TUCE (a pre-test score) and PSI",
        "as predictors.", "",
    ]
    for res in fits.values():
        parts += [str(res.summary()), ""]
    table = gc.compare(list(fits.values()), names=list(fits))
    parts.append(_render_table(table, "text"))
    best = table.index[0]
    parts.append(f"\nLowest BIC: {best} (BIC weight {table.loc[best, 'bic_weight']:.2f}).")
    return "\n".join(parts)


# --- the parser ---------------------------------------------------------------------------------
def _parser() -> _Parser:
    p = _Parser(prog="glmclass", description="Linear models for classification: fit, compare "
                "and predict with formulas on a CSV file.", epilog=_EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"glmclass {gc.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.add_parser("demo", help="fit Logit, Probit and cloglog models to bundled data")
    d = sub.add_parser("datasets", help="list the bundled datasets, or write one as CSV")
    d.add_argument("name", nargs="?", help="dataset to write to standard output")
    models = sorted(_models())
    f = sub.add_parser("fit", help="fit one model and print its summary")
    c = sub.add_parser("compare", help="fit several formulas and print a comparison table")
    r = sub.add_parser("predict", help="fit one model and write its predictions as CSV")
    f.add_argument("args", nargs="+", metavar="DATA FORMULA",
                   help='a CSV file with a header row and a patsy formula, e.g. "y ~ x1 + C(g)" '
                        "(either order; - reads the CSV from standard input)")
    c.add_argument("args", nargs="+", metavar="DATA FORMULA...",
                   help="a CSV file and two or more formulas (any order)")
    r.add_argument("args", nargs="+", metavar="DATA FORMULA", help="as for fit")
    r.add_argument("--newdata", help="CSV file of the rows to predict (default: DATA)")
    r.add_argument("--output", "-o", help="write the predictions here (default: standard "
                   "output)")
    r.add_argument("--which", default=None,
                   help="comma-separated: prob (one column per level), mean, class, linear, "
                        "score (default prob,class; score,class for --model "
                        f"{', '.join(e.name for e in MODELS if not e.probabilities)}, which "
                        "estimate no probabilities)")
    c.add_argument("--likelihood", choices=["auto", "joint", "conditional"], default="auto",
                   help="compare LDA/QDA/naive Bayes on the joint likelihood p(x, class) "
                        "(same features only) or every model on p(class | x)")
    for q in (f, c, r):
        q.add_argument("--model", choices=models, default="logit")
        q.add_argument("--link", default=None, help="link for --model glm (logit, probit, "
                       "cloglog, loglog, cauchit, log, identity)")
        q.add_argument("--family", choices=sorted(_FAMILIES), default=None,
                       help="family for --model glm (default binomial)")
        q.add_argument("--weights", metavar="COLUMN",
                       help="column of frequency weights (a row with weight 3 counts three "
                            "times)")
        q.add_argument("--var-weights", metavar="COLUMN",
                       help="column of variance weights (binomial: the number of trials of a "
                            "proportion; R's glm weights=)")
        q.add_argument("--offset", metavar="COLUMN", help="column added to the linear "
                       "predictor (e.g. a log exposure)")
        q.add_argument("--sep", default=",", help="the field separator of the CSV files "
                       "(default ','; e.g. ';' or '\\t')")
    for q in (f, c):
        q.add_argument("--format", choices=["text", "html", "latex", "json"], default="text")
        q.add_argument("--cov-type", choices=["nonrobust", "HC0", "HC1", "HC2", "HC3",
                                              "cluster"], default=None,
                       help="covariance of the estimates (default nonrobust; cluster needs "
                            "--cov-groups)")
        q.add_argument("--cov-groups", metavar="COLUMN", default=None,
                       help="cluster labels: a column, or two (A,B) for two-way clustering "
                            "(implies --cov-type cluster)")
    return p


def _message(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "the formula is too long or too deeply nested to parse; use fewer terms"
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if isinstance(exc, (SyntaxError, MemoryError, RuntimeError, ArithmeticError,
                        AttributeError, IndexError, LookupError)):
        first = f"{type(exc).__name__}: {first}"
    return _short(first, 400)


def _run(args) -> int:
    if args.command == "demo":
        print(demo())
        return 0
    if args.command == "datasets":
        if args.name is None:
            print("\n".join(gc.datasets.list()))
        else:
            sys.stdout.write(gc.datasets.load(args.name).to_csv(index=False))
        return 0
    path, formulas = _split(args.args, args.command)
    if args.command == "compare" and len(formulas) < 2:
        raise _UsageError("compare needs two or more formulas; use fit for one")
    entry = _models()[args.model]
    if args.command == "compare" and not entry.probabilities:
        raise _UsageError(f"compare needs models with a likelihood, and --model {args.model} "
                          "has none (it estimates no probabilities); compare logit, probit, "
                          "lda, ... fits instead")
    which = None
    if args.command == "predict":
        which = _which(args.which or ("prob,class" if entry.probabilities else "score,class"))
    data = _read(path, args.sep)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.command == "fit":
            out = _render(_fit(args, formulas[0], data), args.format)
        elif args.command == "compare":
            fits = [_fit(args, f, data) for f in formulas]
            out = _render_table(gc.compare(fits, names=formulas, likelihood=args.likelihood),
                                args.format)
        else:
            res = _fit(args, formulas[0], data)
            new = _read(args.newdata, args.sep) if args.newdata else data
            out = _predictions(res, new, which, args.offset).to_csv(index=False)
    if args.command == "predict" and args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as fh:
                fh.write(out)
        except OSError as exc:
            raise _UsageError(f"cannot write {_short(args.output)}: {exc.strerror}") from None
    elif args.command == "predict":
        sys.stdout.write(out)
    else:
        print(out)
    for w in dict.fromkeys(str(w.message) for w in caught
                           if issubclass(w.category, (UserWarning, RuntimeWarning))):
        print(f"glmclass: warning: {w.splitlines()[0] if w else ''}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 success, 2 bad arguments or data, 130 when
    interrupted). Never raises and never prints a traceback."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        parser.print_help(sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise _UsageError("give a command: demo, datasets, fit, compare or predict "
                              "(glmclass --help)")
        return _run(args)
    except SystemExit as exc:  # --help and --version print and exit 0
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("glmclass: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (head, less) went away: nothing more to say
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except Exception as exc:  # anything else: one line, never a traceback
        print(f"glmclass: error: {_message(exc)}", file=sys.stderr)
        return 2
