"""The command line: demo, fit, compare, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import statsmodels.formula.api as smf
from statsmodels.datasets import spector

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
    ([], "required"),
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
