"""Small datasets shipped with glmclass, for examples, docs and notebooks.

>>> from glmclass import datasets
>>> datasets.list()[:5]
['birthwt', 'breast_cancer', 'cbpp', 'crabs', 'endometrial']
>>> df = datasets.load("spector")
>>> df.shape
(32, 4)

Each dataset is a CSV file installed with the package (no download, no other library), read
into a fresh pandas DataFrame on every :func:`load`, so changing it never changes the next one.
:func:`describe` says where it comes from, what its columns are and under which terms it may
be used. The files are written by ``tests/reference/make_datasets.py`` from the same sources
as the R reference values of the test suite.
"""

from __future__ import annotations

import builtins
import textwrap
from dataclasses import dataclass
from importlib import resources

import pandas as pd

__all__ = ["load", "list", "describe"]


@dataclass(frozen=True)
class _Dataset:
    file: str
    title: str
    columns: dict
    source: str
    terms: str
    example: str


_DATASETS = {
    "spector": _Dataset(
        "spector.csv",
        "Does a new teaching method raise grades? 32 students of intermediate macroeconomics.",
        {"GPA": "grade point average", "TUCE": "score on a pre-test of economics knowledge",
         "PSI": "1 if taught by the personalised system of instruction (the new method)",
         "GRADE": "1 if the final grade improved over the earlier one, else 0"},
        "Spector, L. C. and Mazzeo, M. (1980). Probit analysis and economic education. "
        "Journal of Economic Education 11, 37-44. As distributed with statsmodels "
        "(statsmodels.datasets.spector) and in Greene, Econometric Analysis, Table F14.1.",
        "Published data; statsmodels (BSD-3-Clause) distributes them 'with express permission "
        "of the original author'.",
        'gcf.logit("GRADE ~ GPA + TUCE + PSI", df)'),
    "birthwt": _Dataset(
        "birthwt.csv",
        "Risk factors of low birth weight: 189 births at Baystate Medical Center, 1986.",
        {"low": "1 if birth weight below 2.5 kg", "age": "mother's age in years",
         "lwt": "mother's weight in pounds at the last menstrual period",
         "race": "mother's race: white, black or other (MASS codes 1, 2, 3)",
         "smoke": "1 if smoking during pregnancy", "ptl": "number of previous premature labours",
         "ht": "1 if history of hypertension", "ui": "1 if uterine irritability",
         "ftv": "number of physician visits in the first trimester",
         "bwt": "birth weight in grams"},
        "Hosmer, D. W. and Lemeshow, S. (1989). Applied Logistic Regression. Wiley. As in R's "
        "MASS::birthwt (Venables and Ripley 2002), with race as labels.",
        "Published study data, distributed with MASS and widely reproduced for teaching.",
        'gcf.logit("low ~ age + lwt + C(race) + smoke", df)'),
    "iris": _Dataset(
        "iris.csv",
        "Fisher's (Anderson's) iris data: 50 flowers of each of three species.",
        {"Sepal_Length": "cm", "Sepal_Width": "cm", "Petal_Length": "cm", "Petal_Width": "cm",
         "Species": "setosa, versicolor or virginica"},
        "Fisher, R. A. (1936). The use of multiple measurements in taxonomic problems. Annals "
        "of Eugenics 7, 179-188; measurements by E. Anderson (1935). As R's datasets::iris, "
        "with underscores for the dots in the names.",
        "Public domain.",
        'gcf.lda("Species ~ Sepal_Length + Sepal_Width + Petal_Length + Petal_Width", df)'),
    "menarche": _Dataset(
        "menarche.csv",
        "Age at menarche of 3918 Warsaw girls, grouped into 25 age classes (binomial counts).",
        {"Age": "mean age of the group in years", "Total": "girls in the group",
         "Menarche": "girls in the group who had reached menarche"},
        "Milicer, H. and Szczotka, F. (1966). Age at menarche in Warsaw girls in 1965. Human "
        "Biology 38, 199-203. As in R's MASS::menarche.",
        "Published data, distributed with MASS.",
        'gcf.glm("I(Menarche / Total) ~ Age", df, var_weights=df["Total"])'),
    "crabs": _Dataset(
        "crabs.csv",
        "Morphology of 200 rock crabs of the genus Leptograpsus: 50 of each colour form and sex.",
        {"sp": "colour form: B (blue) or O (orange)", "sex": "F or M",
         "index": "1 to 50 within each of the four groups", "FL": "frontal lobe size (mm)",
         "RW": "rear width (mm)", "CL": "carapace length (mm)", "CW": "carapace width (mm)",
         "BD": "body depth (mm)"},
        "Campbell, N. A. and Mahon, R. J. (1974). A multivariate study of variation in two "
        "species of rock crab of genus Leptograpsus. Australian Journal of Zoology 22, 417-425. "
        "As in R's MASS::crabs.",
        "Published data, distributed with MASS.",
        'gcf.lda("sp ~ FL + RW + CL + CW + BD", df)'),
    "housing": _Dataset(
        "housing.csv",
        "Satisfaction with housing of 1681 Copenhagen tenants, as counts of 72 combinations.",
        {"Sat": "satisfaction: Low, Medium or High", "Infl": "perceived influence on the "
         "management: Low, Medium or High", "Type": "Tower, Apartment, Atrium or Terrace",
         "Cont": "contact with other residents: Low or High",
         "Freq": "number of tenants with these values (use as freq_weights)"},
        "Madsen, M. (1976). Statistical analysis of multiple contingency tables. Two examples. "
        "Scandinavian Journal of Statistics 3, 97-106. As in R's MASS::housing, the labels as "
        "plain strings (R's level orders: Low < Medium < High; Tower, Apartment, Atrium, "
        "Terrace).",
        "Published data, distributed with MASS.",
        'gcf.mnlogit("Sat ~ Infl + Type + Cont", df, freq_weights=df["Freq"])'),
    "endometrial": _Dataset(
        "endometrial.csv",
        "Histology grade of 79 endometrial cancer patients; NV quasi-completely separates HG.",
        {"NV": "neovasculation: 1 present, 0 absent", "PI": "pulsatility index of the uterine "
         "artery", "EH": "endometrium height (mm)", "HG": "histology grade: 1 high, 0 low"},
        "Heinze, G. and Schemper, M. (2002). A solution to the problem of separation in "
        "logistic regression. Statistics in Medicine 21, 2409-2419. As in R's "
        "brglm2::endometrial (identical values).",
        "Published study data, distributed with brglm2 and logistf.",
        'gcf.bayes_logit("HG ~ NV + PI + EH", df)'),
    "cbpp": _Dataset(
        "cbpp.csv",
        "Contagious bovine pleuropneumonia: new cases in 15 zebu herds of Ethiopia, counted in "
        "four periods (56 herd-periods; binomial counts grouped by herd).",
        {"herd": "herd number, 1 to 15 (the grouping factor)",
         "incidence": "new serological cases in the period",
         "size": "herd size at the start of the period",
         "period": "period of the study, 1 to 4"},
        "Lesnoff, M. et al. (2004). Within-herd spread of contagious bovine pleuropneumonia "
        "in Ethiopian highlands. Preventive Veterinary Medicine 64, 27-40. As in R's "
        "lme4::cbpp, with herd and period as integers.",
        "Published study data, distributed with lme4.",
        'gcf.mixed_logit("cbind(incidence, size - incidence) ~ C(period) + (1 | herd)", df)'),
    "breast_cancer": _Dataset(
        "breast_cancer.csv.gz",
        "Breast Cancer Wisconsin (Diagnostic): 569 fine-needle aspirates, 212 malignant and "
        "357 benign, with 30 features of the cell nuclei in a digitised image.",
        {"diagnosis": "malignant or benign",
         "mean_<feature>": "mean over the nuclei of radius, texture, perimeter, area, "
                           "smoothness, compactness, concavity, concave_points, symmetry, "
                           "fractal_dimension",
         "<feature>_error": "standard error of that feature",
         "worst_<feature>": "mean of the three largest values"},
        "Wolberg, W. H., Street, W. N. and Mangasarian, O. L. (1995). UCI Machine Learning "
        "Repository, https://doi.org/10.24432/C5DW2B. As in scikit-learn's "
        "load_breast_cancer, with underscores for the spaces in the names ('mean radius' is "
        "mean_radius) and the target as labels.",
        "Creative Commons Attribution 4.0 (CC BY 4.0): cite the source above.",
        'gcf.logit("diagnosis ~ mean_radius + mean_texture", df)'),
}


def list() -> builtins.list[str]:  # noqa: A001 - the name the docs promise: datasets.list()
    """Names of the bundled datasets, sorted.

    Returns
    -------
    list of str
    """
    return sorted(_DATASETS)


def _get(name: str) -> _Dataset:
    if not isinstance(name, str) or name not in _DATASETS:
        raise ValueError(f"no dataset named {name!r}; the bundled datasets are "
                         f"{', '.join(sorted(_DATASETS))}")
    return _DATASETS[name]


def load(name: str) -> pd.DataFrame:
    """Read a bundled dataset.

    Parameters
    ----------
    name : str
        One of :func:`list` (``"spector"``, ``"birthwt"``, ``"iris"``, ``"menarche"``,
        ``"crabs"``, ``"housing"``, ``"endometrial"``, ``"breast_cancer"``, ``"cbpp"``).

    Returns
    -------
    pandas.DataFrame
        A new frame on every call (rows in the order of the source; string columns hold labels,
        whole-number columns are integers).

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).

    Examples
    --------
    >>> import glmclass as gc
    >>> gc.datasets.load("iris")["Species"].value_counts().to_dict()
    {'setosa': 50, 'versicolor': 50, 'virginica': 50}
    """
    ds = _get(name)
    with resources.files(__name__).joinpath(ds.file).open("rb") as fh:
        compression = "gzip" if ds.file.endswith(".gz") else None
        return pd.read_csv(fh, compression=compression, keep_default_na=False,
                           na_values=[""])


def describe(name: str) -> str:
    """What a dataset is: title, columns, source and terms of use, and an example model.

    Parameters
    ----------
    name : str
        One of :func:`list`.

    Returns
    -------
    str
    """
    ds = _get(name)
    width = max(len(c) for c in ds.columns)
    pad = " " * (width + 4)
    cols = [textwrap.fill(d, 88, initial_indent=f"  {c:<{width}}  ", subsequent_indent=pad)
            for c, d in ds.columns.items()]
    parts = [textwrap.fill(f"{name}: {ds.title}", 88), "", "Columns:", *cols, "",
             textwrap.fill(f"Source: {ds.source}", 88), textwrap.fill(f"Terms: {ds.terms}", 88),
             f"Example: {ds.example}"]
    return "\n".join(parts)
