"""The command line: demo, fit, compare, and one-line errors with exit code 2."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.datasets import spector

import glmclass as gc
import glmclass.formula.api as gcf
from glmclass.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def csv(tmp_path):
    path = tmp_path / "spector.csv"
    df = spector.load_pandas().data
    df["group"] = ["a", "b"] * 16
    df.to_csv(path, index=False)
    return path


def test_demo_prints_three_summaries_and_a_bic_table(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count("Regression Results") == 3
    assert "cloglog" in out and "bic_weight" in out and "Lowest BIC" in out


def test_fit_json_matches_statsmodels(csv, capsys):
    assert main(["fit", "GRADE ~ GPA + PSI + C(group)", str(csv), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = smf.logit("GRADE ~ GPA + PSI + C(group)", spector.load_pandas().data.assign(
        group=["a", "b"] * 16)).fit(disp=0)
    for name, value in ref.params.items():
        assert got["params"][name] == pytest.approx(value, rel=1e-7)
    assert got["llf"] == pytest.approx(ref.llf, rel=1e-10)
    assert got["bic"] == pytest.approx(ref.bic, rel=1e-10)


@pytest.mark.parametrize("fmt,marker", [("text", "Log-Likelihood:"), ("html", "<table>"),
                                        ("latex", r"\begin{tabular}")])
def test_fit_formats(csv, capsys, fmt, marker):
    assert main(["fit", "GRADE ~ GPA", str(csv), "--model", "glm", "--link", "cloglog",
                 "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert marker in out and "cloglog" in out


def test_compare_sorts_by_bic(csv, capsys):
    assert main(["compare", str(csv), "GRADE ~ GPA", "GRADE ~ GPA + PSI", "--format",
                 "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    bics = [row["bic"] for row in table.values()]
    assert bics == sorted(bics) and set(table) == {"GRADE ~ GPA", "GRADE ~ GPA + PSI"}


@pytest.mark.parametrize("argv,needle", [
    (["fit", "GRADE ~ GPA", "missing.csv"], "no such file"),
    (["fit", "GRADE ~ nothere", "CSV"], "nothere"),
    (["fit", "GRADE ~ GPA", "CSV", "--model", "nope"], "invalid choice"),
    (["fit", "GRADE ~ GPA", "CSV", "--model", "glm", "--link", "weird"], "unknown link"),
    (["fit", "GRADE ~ GPA", "CSV", "--link", "probit"], "--model glm"),
    (["fit"], "required"),
])
def test_bad_arguments_give_one_line_and_exit_2(csv, capsys, argv, needle):
    argv = [str(csv) if a == "CSV" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("glmclass: error:")
    assert needle in err and "Traceback" not in err


def test_module_entry_point_exit_code(csv):
    proc = subprocess.run([sys.executable, "-m", "glmclass", "fit", "GRADE ~ GPA",
                           str(csv), "--model", "nope"], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"```bash\n(pip install .+?)\n```", readme)
    assert len(commands) == 2, "the README's set-up is two commands"
    for command in commands:
        assert command in ci


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, needle):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("glmclass: error:"), err
    assert needle in err, err
    assert "Traceback" not in err


def test_bare_prints_usage_and_exits_2(capsys):
    code, out, err = run([], capsys)
    assert code == 2 and out == ""
    assert err.startswith("usage: glmclass") and "predict" in err and "Q(\"mean radius\")" in err


def test_version_and_help_exit_0(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.strip() == f"glmclass {gc.__version__}"
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and "usage: glmclass" in out
    code, out, _ = run(["fit", "--help"], capsys)
    assert code == 0 and "--weights" in out and "--offset" in out


def test_fit_and_compare_take_data_and_formulas_in_either_order(csv, capsys):
    outs = [run(argv, capsys)[1] for argv in (["fit", csv, "GRADE ~ GPA"],
                                             ["fit", "GRADE ~ GPA", csv])]
    assert outs[0] == outs[1] and "Logit Regression Results" in outs[0]
    tables = [run(argv, capsys)[1] for argv in (
        ["compare", csv, "GRADE ~ GPA", "GRADE ~ GPA + PSI"],
        ["compare", "GRADE ~ GPA", "GRADE ~ GPA + PSI", csv])]
    assert tables[0] == tables[1] and "GRADE ~ GPA + PSI" in tables[0]


@pytest.mark.parametrize("argv,needle", [
    (["fit", "CSV"], "needs a formula"),
    (["fit", "GRADE ~ GPA"], "needs a CSV file"),
    (["fit", "CSV", "CSV2", "GRADE ~ GPA"], "one CSV file, got 2"),
    (["fit", "CSV", "GRADE ~ GPA", "GRADE ~ PSI"], "use compare"),
    (["compare", "CSV", "GRADE ~ GPA"], "two or more formulas"),
    (["fit", "DIR", "GRADE ~ GPA"], "is a directory"),
    (["fit", "/tmp/" + "x" * 5000 + ".csv", "GRADE ~ GPA"], "cannot read"),
    (["fit", "CSV", "GRADE ~ GPA", "--weights", "tuce"], "did you mean 'TUCE'"),
    (["fit", "CSV", "GRADE ~ GPA", "--offset", "np.log(TUCE)"], "not a column"),
    (["fit", "CSV", "GRADE ~ GPA", "--model", "lda", "--weights", "TUCE"], "not available"),
    (["predict", "CSV", "GRADE ~ GPA", "--which", "prob,odds"], "--which"),
    (["predict", "CSV", "GRADE ~ GPA", "--newdata", "missing.csv"], "no such file"),
    (["datasets", "spectre"], "no dataset named"),
])
def test_never_a_traceback(csv, tmp_path, capsys, argv, needle):
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    subs = {"CSV": str(csv), "CSV2": str(tmp_path / "other.csv"), "DIR": str(tmp_path)}
    code, _, err = run([subs.get(a, a) for a in argv], capsys)
    one_line_error(code, err, needle)


def fits_or_one_line(code, err):
    """Formulas the formula layer may come to accept (issue 10: "support it, or say so"):
    either they fit, or they fail in one line with exit code 2."""
    assert "Traceback" not in err
    assert code == 0 or (code == 2 and err.count("\n") == 1 and
                         err.startswith("glmclass: error:")), err


@pytest.mark.parametrize("formula", ["GRADE ~ .", "GRADE ~ " + " + ".join(["GPA"] * 3000),
                                     "GRADE ~ " + "(" * 500 + "GPA" + ")" * 500])
def test_dot_and_huge_formulas_never_give_a_traceback(csv, capsys, formula):
    code, _, err = run(["fit", csv, formula], capsys)
    fits_or_one_line(code, err)


def test_huge_formula_in_a_fresh_process(csv):
    """The recursion limit of a fresh interpreter, and the exit code of ``python -m``."""
    argv = ["fit", str(csv), "GRADE ~ " + " + ".join(["GPA"] * 3000)]
    proc = subprocess.run([sys.executable, "-m", "glmclass", *argv], capture_output=True,
                          text=True, cwd=ROOT)
    fits_or_one_line(proc.returncode, proc.stderr)


def test_formula_hints():
    from glmclass.cli import _formula_hint

    df = pd.DataFrame({"y": [0, 1], "mean radius": [1.0, 2.0], "a": [1, 2]})
    assert 'Q("mean radius")' in _formula_hint("y ~ mean radius", df)
    assert 'Q("mean radius")' in _formula_hint("y ~ Mean_Radius + a", df)
    assert _formula_hint("y ~ Q('mean radius') + b", df) is None
    assert "list the columns" in _formula_hint("y ~ .", df)
    assert "list the columns" in _formula_hint("y ~ a + .", df)
    assert _formula_hint("y ~ np.log(a)", df) is None


@pytest.fixture()
def spaced(tmp_path):
    path = tmp_path / "bc.csv"
    df = gc.datasets.load("breast_cancer").iloc[:, :4]
    df.columns = [c.replace("_", " ") for c in df.columns]
    df.to_csv(path, index=False)
    return path, df


@pytest.mark.parametrize("formula", ["diagnosis ~ mean radius",
                                     "diagnosis ~ mean_radius + Q('mean texture')"])
def test_a_column_with_spaces_is_hinted_with_q(spaced, capsys, formula):
    code, _, err = run(["fit", spaced[0], formula], capsys)
    one_line_error(code, err, 'write Q("mean radius")')


def test_a_column_with_spaces_fits_with_q(spaced, capsys):
    path, df = spaced
    code, out, _ = run(["fit", path, "diagnosis ~ Q('mean radius')", "--format", "json"],
                       capsys)
    ref = gcf.logit("diagnosis ~ Q('mean radius')", df).fit()
    assert code == 0
    assert json.loads(out)["llf"] == pytest.approx(ref.llf, rel=1e-12)
    assert "P(diagnosis = malignant) is modelled" in run(["fit", path,
                                                          "diagnosis ~ Q('mean radius')"],
                                                         capsys)[1]


def test_weights_and_offset_are_columns(csv, capsys):
    df = pd.read_csv(csv)
    code, out, _ = run(["fit", csv, "GRADE ~ GPA", "--weights", "TUCE", "--offset", "PSI",
                        "--format", "json"], capsys)
    ref = gcf.logit("GRADE ~ GPA", df, freq_weights=df["TUCE"], offset=df["PSI"]).fit()
    got = json.loads(out)
    assert code == 0 and got["nobs"] == df["TUCE"].sum()
    assert got["params"]["GPA"] == pytest.approx(ref.params["GPA"], rel=1e-12)
    assert got["llf"] == pytest.approx(ref.llf, rel=1e-12)
    code, out, _ = run(["fit", csv, "GRADE ~ GPA", "--var-weights", "TUCE", "--format",
                        "json"], capsys)
    ref = gcf.logit("GRADE ~ GPA", df, var_weights=df["TUCE"]).fit()
    assert json.loads(out)["nobs"] == 32 and json.loads(out)["llf"] == pytest.approx(ref.llf)


def test_predict_writes_csv_as_the_library_predicts(csv, tmp_path, capsys):
    df = pd.read_csv(csv)
    new = df.head(5).copy()
    new.loc[2, "GPA"] = np.nan  # a missing predictor: empty fields
    new.to_csv(tmp_path / "new.csv", index=False)
    out_path = tmp_path / "pred.csv"
    code, out, _ = run(["predict", "GRADE ~ GPA + PSI", csv, "--newdata", tmp_path / "new.csv",
                        "-o", out_path, "--which", "prob,mean,class,linear"], capsys)
    assert code == 0 and out == ""
    got = pd.read_csv(out_path)
    res = gcf.logit("GRADE ~ GPA + PSI", df).fit()
    assert list(got.columns) == ["prob_0", "prob_1", "mean", "class", "linear"]
    np.testing.assert_allclose(got["mean"], res.predict(new), rtol=1e-14)
    np.testing.assert_allclose(got["linear"], res.predict(new, which="linear"), rtol=1e-14)
    assert got["class"].isna().tolist() == [False, False, True, False, False]
    assert (out_path.read_text().splitlines()[3]) == ",,,,"
    # default: in-sample probabilities and labels on standard output
    code, out, _ = run(["predict", csv, "GRADE ~ GPA"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0] == "prob_0,prob_1,class" and len(lines) == 33


def test_predict_multiclass_labels(tmp_path, capsys):
    path = tmp_path / "iris.csv"
    gc.datasets.load("iris").to_csv(path, index=False)
    code, out, _ = run(["predict", path, "Species ~ Petal_Length + Petal_Width", "--model",
                        "lda"], capsys)
    first = out.splitlines()[:2]
    assert code == 0
    assert first[0] == "prob_setosa,prob_versicolor,prob_virginica,class"
    assert first[1].endswith(",setosa")


def test_compare_generative_models_needs_the_same_features(tmp_path, capsys):
    path = tmp_path / "iris.csv"
    gc.datasets.load("iris").to_csv(path, index=False)
    f2, f4 = ("Species ~ Sepal_Length + Sepal_Width",
              "Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width")
    code, _, err = run(["compare", path, f2, f4, "--model", "lda"], capsys)
    one_line_error(code, err, "likelihood='conditional'")
    code, out, _ = run(["compare", path, f2, f4, "--model", "qda", "--likelihood",
                        "conditional"], capsys)
    assert code == 0 and "likelihood: conditional" in out
    code, out, _ = run(["compare", path, f2, f4, "--model", "lda", "--likelihood",
                        "conditional", "--format", "json"], capsys)
    table = json.loads(out)
    iris = gc.datasets.load("iris")
    assert table[f4]["llf"] == pytest.approx(gcf.lda(f4, iris).fit().llf_conditional)
    assert list(table) == [f4, f2]  # conditionally the 4-feature LDA is far better


def test_compare_text_fits_80_columns_and_latex_has_no_empty_table(csv, capsys):
    argv = ["compare", csv, "GRADE ~ GPA", "GRADE ~ GPA + PSI", "GRADE ~ GPA + TUCE + PSI"]
    code, out, _ = run(argv, capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80
    assert "log_evidence" not in out and " 32 " in out and "32.0" not in out
    code, out, _ = run(argv + ["--format", "latex"], capsys)
    assert out.count(r"\begin{tabular}") == 1 and r"\hline\n\hline" not in out
    code, out, _ = run(argv + ["--format", "html"], capsys)
    assert out.count("<table>") == 1


def test_datasets_and_stdin(capsys, monkeypatch):
    code, out, _ = run(["datasets"], capsys)
    assert code == 0 and out.split() == gc.datasets.list()
    code, out, _ = run(["datasets", "spector"], capsys)
    assert code == 0 and out.splitlines()[0] == "GPA,TUCE,PSI,GRADE" and len(out.splitlines()) == 33
    monkeypatch.setattr(sys, "stdin", io.StringIO(out))
    code, fitted, _ = run(["fit", "-", "GRADE ~ GPA", "--format", "json"], capsys)
    assert code == 0 and json.loads(fitted)["nobs"] == 32


def test_demo_needs_no_statsmodels_datasets(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "statsmodels.datasets", None)  # importing it would fail
    code, out, _ = run(["demo"], capsys)
    assert code == 0 and "bundled" in out and out.count("Regression Results") == 3


def test_every_generative_model_is_available(tmp_path, capsys):
    path = tmp_path / "iris.csv"
    gc.datasets.load("iris").to_csv(path, index=False)
    for model, title in (("gaussian_nb", "Gaussian Naive Bayes"), ("qda", "Quadratic")):
        code, out, _ = run(["fit", path, "Species ~ Petal_Length + Petal_Width", "--model",
                            model], capsys)
        assert code == 0 and title in out


# --- the models the command line reaches through the model registry ---------------------------
def test_every_registered_model_is_a_model_choice(capsys):
    from glmclass.models.registry import MODELS

    code, out, _ = run(["fit", "--help"], capsys)
    choices = re.search(r"--model \{([^}]*)\}", out).group(1).split(",")
    assert code == 0 and sorted(choices) == sorted(e.name for e in MODELS)
    assert {"bayes_glm", "least_squares", "fisher", "perceptron"} <= set(choices)


def test_bayes_glm_takes_a_link(csv, capsys):
    df = pd.read_csv(csv)
    code, out, _ = run(["fit", csv, "GRADE ~ GPA + PSI", "--model", "bayes_glm", "--link",
                        "probit", "--weights", "TUCE", "--format", "json"], capsys)
    got = json.loads(out)
    ref = gcf.bayes_glm("GRADE ~ GPA + PSI", df, link=gc.links.Probit(),
                        freq_weights=df["TUCE"]).fit()
    assert code == 0 and got["model"] == "BayesGLM"
    for name, value in ref.params.items():
        assert got["params"][name] == pytest.approx(value, rel=1e-12)
    assert got["llf"] == pytest.approx(ref.llf, rel=1e-12)
    assert got["log_evidence"] == pytest.approx(ref.log_evidence, rel=1e-12)
    logit = gcf.bayes_glm("GRADE ~ GPA + PSI", df).fit()
    assert abs(ref.llf - logit.llf) > 1e-3  # the link was used
    code, _, err = run(["fit", csv, "GRADE ~ GPA", "--model", "bayes_glm", "--family",
                        "poisson"], capsys)
    one_line_error(code, err, "--family applies to --model glm and mixed_glm only")
    code, _, err = run(["fit", csv, "GRADE ~ GPA", "--model", "lda", "--link", "probit"],
                       capsys)
    # every model whose constructor takes a link (and whose name does not fix one)
    one_line_error(code, err,
                   "--link applies to --model glm and mixed_glm and bayes_glm and ordinal only")


@pytest.fixture()
def iris_csv(tmp_path):
    path = tmp_path / "iris.csv"
    gc.datasets.load("iris").to_csv(path, index=False)
    return path


def test_least_squares_fits_predicts_scores_and_is_not_compared(iris_csv, tmp_path, capsys):
    iris = gc.datasets.load("iris")
    formula = "Species ~ Petal_Length + Petal_Width"
    code, out, _ = run(["fit", iris_csv, formula, "--model", "least_squares", "--format",
                        "json"], capsys)
    ref = gcf.least_squares(formula, iris).fit()
    got = json.loads(out)
    assert code == 0 and got["model"] == "LeastSquaresClassifier"
    for level in ref.params.columns:
        for name, value in ref.params[level].items():
            assert got["params"][str(level)][name] == pytest.approx(value, rel=1e-12, abs=1e-14)
    code, out, _ = run(["predict", iris_csv, formula, "--model", "least_squares", "-o",
                        tmp_path / "p.csv"], capsys)
    pred = pd.read_csv(tmp_path / "p.csv")
    assert code == 0 and list(pred.columns) == ["score_setosa", "score_versicolor",
                                                "score_virginica", "class"]
    np.testing.assert_allclose(pred.iloc[:, :3], ref.predict(which="score"), rtol=1e-12,
                               atol=1e-14)
    assert pred["class"].tolist() == ref.predict(which="class").tolist()
    code, _, err = run(["predict", iris_csv, formula, "--model", "least_squares", "--which",
                        "prob"], capsys)
    one_line_error(code, err, "estimates no class probabilities")
    code, _, err = run(["compare", iris_csv, formula, "Species ~ Petal_Length", "--model",
                        "least_squares"], capsys)
    one_line_error(code, err, "--model least_squares has none")


def test_fisher_direction_threshold_and_labels(csv, capsys):
    df = pd.read_csv(csv)
    formula = "GRADE ~ GPA + TUCE"
    code, out, _ = run(["fit", csv, formula, "--model", "fisher", "--format", "json"], capsys)
    ref = gcf.fisher(formula, df).fit()
    got = json.loads(out)
    assert code == 0 and got["model"] == "FisherDiscriminant"
    assert got["threshold"] == pytest.approx(ref.threshold, rel=1e-12)
    for name, value in ref.direction.items():
        assert got["direction"][name] == pytest.approx(value, rel=1e-12)
    code, out, _ = run(["fit", csv, formula, "--model", "fisher"], capsys)
    assert code == 0 and "Fisher Discriminant Results" in out
    code, out, _ = run(["predict", csv, formula, "--model", "fisher"], capsys)
    pred = pd.read_csv(io.StringIO(out))
    assert code == 0 and list(pred.columns) == ["score", "class"]
    np.testing.assert_allclose(pred["score"], ref.predict(which="score"), rtol=1e-12)
    assert pred["class"].tolist() == ref.predict(which="class").tolist()


def test_perceptron_separates_separable_classes(iris_csv, tmp_path, capsys):
    iris = gc.datasets.load("iris")
    two = iris[iris["Species"] != "virginica"]
    path = tmp_path / "two.csv"
    two.to_csv(path, index=False)
    formula = "Species ~ Petal_Length + Petal_Width"
    code, out, _ = run(["fit", path, formula, "--model", "perceptron", "--format", "json"],
                       capsys)
    got = json.loads(out)
    assert code == 0 and got["model"] == "Perceptron" and got["converged"] is True
    assert set(got["params"]) == {"Intercept", "Petal_Length", "Petal_Width"}
    code, out, _ = run(["predict", path, formula, "--model", "perceptron", "--which", "class"],
                       capsys)
    assert code == 0 and out.splitlines()[1:] == two["Species"].tolist()  # all separated
    code, out, _ = run(["predict", path, formula, "--model", "perceptron"], capsys)
    assert code == 0 and out.splitlines()[0] == "score,class"
    code, _, err = run(["fit", iris_csv, formula, "--model", "perceptron"], capsys)
    one_line_error(code, err, "multiclass")  # three classes need a scheme: said in one line


# --- one output row per input row, offsets of the predicted file, --sep, --cov-type ----------
@pytest.fixture()
def holes(tmp_path):
    """birthwt with a missing predictor (row 3), a missing response (row 5) and an offset."""
    df = gc.datasets.load("birthwt")
    df.loc[3, "age"] = np.nan
    df.loc[5, "low"] = np.nan
    df["t"] = np.linspace(0.5, 2.0, len(df))
    path = tmp_path / "holes.csv"
    df.to_csv(path, index=False)
    return path, df


def _fit_mem(df, offset=None):
    return gcf.logit("low ~ age + lwt", df, offset=offset).fit()


def test_predict_in_sample_one_row_per_input_row(holes, tmp_path):
    path, df = holes
    out = tmp_path / "p.csv"
    assert main(["predict", str(path), "low ~ age + lwt", "-o", str(out)]) == 0
    got = pd.read_csv(out)
    assert len(got) == len(df)                      # was 187: rows 3 and 5 dropped
    assert got.iloc[3].isna().all()                 # a missing predictor: empty fields
    res = _fit_mem(df)
    want = res.predict(df.drop(index=3), which="prob")
    np.testing.assert_allclose(got.drop(index=3)[["prob_0", "prob_1"]].to_numpy(),
                               want.to_numpy(), rtol=1e-12)
    assert np.isfinite(got.loc[5, "prob_1"])        # a missing response is predicted


def test_predict_uses_the_offset_column_of_the_predicted_file(holes, tmp_path):
    path, df = holes
    new = df.head(6).assign(t=3.0)
    new.to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "p.csv"
    assert main(["predict", str(path), "low ~ age + lwt", "--offset", "t", "--newdata",
                 str(tmp_path / "new.csv"), "--which", "linear", "-o", str(out)]) == 0
    got = pd.read_csv(out)["linear"].to_numpy()
    res = _fit_mem(df.dropna(subset=["age", "low"]), offset=df.dropna(subset=["age", "low"]).t)
    b = res.params
    want = b["Intercept"] + b["age"] * new["age"] + b["lwt"] * new["lwt"] + 3.0
    np.testing.assert_allclose(got, want.to_numpy(), rtol=1e-10)   # was: offset 0
    assert np.isnan(got[3])


def test_semicolon_file_names_sep(holes, tmp_path, capsys):
    path, df = holes
    df.to_csv(tmp_path / "semi.csv", index=False, sep=";")
    assert main(["fit", str(tmp_path / "semi.csv"), "low ~ age + lwt"]) == 2
    err = capsys.readouterr().err
    assert "one column" in err and "--sep ';'" in err
    assert main(["fit", str(tmp_path / "semi.csv"), "low ~ age + lwt", "--sep", ";",
                 "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["llf"] == pytest.approx(_fit_mem(df).llf, rel=1e-12)
    df.to_csv(tmp_path / "tab.tsv", index=False, sep="\t")
    assert main(["fit", str(tmp_path / "tab.tsv"), "low ~ age + lwt", "--sep", "\\t",
                 "--format", "json"]) == 0


@pytest.mark.parametrize("argv,cov_type,cov_kwds", [
    (["--cov-type", "HC3"], "HC3", None),
    (["--cov-groups", "race"], "cluster", {"groups": "race"}),
    (["--cov-type", "cluster", "--cov-groups", "race,ui"], "cluster",
     {"groups": ["race", "ui"]}),
])
def test_fit_cov_type(holes, capsys, argv, cov_type, cov_kwds):
    path, df = holes
    assert main(["fit", str(path), "low ~ age + lwt", "--format", "json", *argv]) == 0
    got = json.loads(capsys.readouterr().out)
    want = gcf.logit("low ~ age + lwt", df).fit(cov_type=cov_type, cov_kwds=cov_kwds)
    for name, value in want.bse.items():
        if np.isfinite(value):
            assert got["bse"][name] == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("argv,needle", [
    (["--cov-type", "cluster"], "needs --cov-groups"),
    (["--cov-type", "HC1", "--cov-groups", "race"], "with --cov-type cluster"),
    (["--cov-groups", "a,b,c"], "one column or two"),
    (["--model", "lda", "--cov-type", "HC0"], "not available for --model lda"),
])
def test_fit_cov_type_errors(holes, capsys, argv, needle):
    path, _ = holes
    assert main(["fit", str(path), "low ~ age + lwt", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_unknown_column_suggests_q_not_eval_env(holes, capsys):
    path, _ = holes
    assert main(["fit", str(path), "low ~ agex + lwt"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'age'" in err and 'Q("name")' in err and "eval_env" not in err


def test_ordinal_models_from_the_command_line(tmp_path, capsys):
    from statsmodels.datasets import spector

    df = spector.load_pandas().data.assign(grade=lambda d: d["PSI"] + d["GRADE"])
    path = tmp_path / "ordinal.csv"
    df.to_csv(path, index=False)
    code, out, _ = run(["fit", str(path), "grade ~ GPA + TUCE", "--model", "ordinal", "--link",
                        "cloglog", "--format", "json"], capsys)
    ref = gcf.ordinal("grade ~ GPA + TUCE", df, link="cloglog").fit()
    assert code == 0 and json.loads(out)["llf"] == pytest.approx(ref.llf, rel=1e-12)
    code, out, _ = run(["fit", str(path), "grade ~ GPA + TUCE", "--model", "ordered_probit",
                        "--format", "json"], capsys)
    ref = gcf.ordered_probit("grade ~ GPA + TUCE", df).fit()
    assert code == 0 and json.loads(out)["llf"] == pytest.approx(ref.llf, rel=1e-12)
    code, _, err = run(["fit", str(path), "grade ~ GPA", "--model", "ordered_probit",
                        "--link", "logit"], capsys)
    one_line_error(code, err, "--model ordered_probit fixes the link (probit); drop --link, "
                   "or use --model ordinal --link logit")

