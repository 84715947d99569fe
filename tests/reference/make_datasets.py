"""Write the CSVs bundled as package data in ``glmclass/datasets/``.

Run from the repository root:  python tests/reference/make_datasets.py

spector, birthwt, iris, menarche, crabs, housing and endometrial are the files of
``tests/reference/data`` (made by ``make_spector.py`` and ``make_data.R``; endometrial copied as
its README says), with whole-number columns written as integers.
breast_cancer comes from scikit-learn's copy of the UCI Breast Cancer Wisconsin (Diagnostic)
data; column names get underscores for spaces and the 0/1 target becomes the ``diagnosis``
labels ``malignant``/``benign``. Nothing is random: running it twice gives the same bytes.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "tests" / "reference" / "data"
OUT = ROOT / "glmclass" / "datasets"


def _ints(df: pd.DataFrame) -> pd.DataFrame:
    """Float columns holding only whole numbers become integers (GRADE 0/1, not 0.0/1.0)."""
    out = df.copy()
    for c in out.columns:
        v = out[c]
        if v.dtype.kind == "f" and v.notna().all() and np.all(v == np.round(v)):
            out[c] = v.astype("int64")
    return out


def main() -> None:
    for name in ("spector", "birthwt", "iris", "menarche", "crabs", "housing", "endometrial"):
        df = _ints(pd.read_csv(SRC / f"{name}.csv", keep_default_na=False, na_values=[""]))
        df.to_csv(OUT / f"{name}.csv", index=False, lineterminator="\n")
    bc = load_breast_cancer(as_frame=True)
    frame = bc.data.rename(columns=lambda c: c.replace(" ", "_"))
    frame.insert(0, "diagnosis", np.asarray(bc.target_names)[bc.target.to_numpy()])
    # no timestamp in the gzip header: the same bytes on every run
    frame.to_csv(OUT / "breast_cancer.csv.gz", index=False, lineterminator="\n",
                 compression={"method": "gzip", "mtime": 0})
    print(f"wrote the bundled datasets to {OUT}")


if __name__ == "__main__":
    main()
