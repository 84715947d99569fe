"""Write data/spector.csv from statsmodels' copy of the Spector & Mazzeo (1980) data.

Run from the repository root:  python tests/reference/make_spector.py
(The other CSVs come from R: see make_data.R.)
"""

from pathlib import Path

import pandas as pd
import statsmodels.datasets.spector as spector

out = Path(__file__).resolve().parent / "data" / "spector.csv"
df = spector.load_pandas().data[["GPA", "TUCE", "PSI", "GRADE"]]
df.to_csv(out, index=False)
back = pd.read_csv(out)
assert back.equals(df), "spector.csv does not round-trip"
print(f"wrote {out} ({len(df)} rows)")
