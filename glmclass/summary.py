"""Summary reports: header pairs and tables rendered as text, HTML or LaTeX.

Output is deterministic (no dates or times; fixed number formats), so reports can be compared
in tests and committed to docs.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


def fmt(value, digits: int = 4) -> str:
    """Format one value: numbers to ``digits`` significant decimals, others with ``str``."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 10 ** -(digits - 1)):
            return f"{v:.{digits}e}"
        if v == int(v) and abs(v) < 1e6 and digits == 0:
            return str(int(v))
        return f"{v:.{digits}f}"
    return str(value)


def _is_whole(col: pd.Series) -> bool:
    if col.dtype.kind not in "f":
        return False
    v = col.to_numpy()
    return bool(np.all(np.isfinite(v)) and np.all(v == np.round(v)) and np.all(np.abs(v) < 1e15))


@dataclass
class Summary:
    """A statistical report.

    Parameters
    ----------
    title : str
    header : list of (str, object)
        Key/value pairs shown in two columns above the tables.
    tables : list of (str or None, pandas.DataFrame)
        Titled tables (index shown as the first column).
    notes : list of str
        Lines printed at the end.
    digits : int
        Decimals shown for table values.
    """

    title: str
    header: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    digits: int = 4

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return self.as_html()

    # --- text -----------------------------------------------------------------------------
    def _table_lines(self, df: pd.DataFrame) -> list[list[str]]:
        cols = [""] + [str(c) for c in df.columns]
        rows = [cols]
        # columns of whole numbers (counts, degrees of freedom) print without decimals
        whole = [_is_whole(df[c]) for c in df.columns]
        for idx, row in zip(df.index, df.itertuples(index=False), strict=True):
            label = " ".join(map(str, idx)) if isinstance(idx, tuple) else str(idx)
            rows.append([label] + [fmt(int(v) if w else v, self.digits)
                                   for v, w in zip(row, whole, strict=True)])
        return rows

    def as_text(self) -> str:
        """Plain-text report."""
        blocks = [self._table_lines(df) for _, df in self.tables]
        width = max([len(self.title) + 4, 78] + [
            sum(max(len(r[j]) for r in b) for j in range(len(b[0]))) + 2 * (len(b[0]) - 1)
            for b in blocks
        ])
        out = [self.title.center(width)]
        if self.header:
            out.append("=" * width)
        pairs = [(str(k), fmt(v)) for k, v in self.header]
        half = (len(pairs) + 1) // 2
        left, right = pairs[:half], pairs[half:]
        colw = (width - 3) // 2
        for i in range(half):
            lk, lv = left[i]
            line = f"{lk + ':':<{colw - len(lv)}}{lv}"
            if i < len(right):
                rk, rv = right[i]
                line += "   " + f"{rk + ':':<{colw - len(rv)}}{rv}"
            out.append(line)
        for (title, _), rows in zip(self.tables, blocks, strict=True):
            out.append("=" * width)
            if title:
                out.append(str(title))
                out.append("-" * width)
            widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
            for k, r in enumerate(rows):
                cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in
                                                   zip(r[1:], widths[1:], strict=True)]
                out.append("  ".join(cells))
                if k == 0:
                    out.append("-" * width)
        out.append("=" * width)
        out.extend(self.notes)
        return "\n".join(out)

    def as_html(self) -> str:
        """HTML report (tables with class ``glmclass-summary``)."""
        esc = html.escape
        parts = [f'<div class="glmclass-summary"><h4>{esc(self.title)}</h4>', "<table>"]
        pairs = [(esc(str(k)), esc(fmt(v))) for k, v in self.header]
        for i in range(0, len(pairs), 2):
            cells = "".join(f"<th>{k}:</th><td>{v}</td>" for k, v in pairs[i: i + 2])
            parts.append(f"<tr>{cells}</tr>")
        parts.append("</table>")
        for title, df in self.tables:
            rows = self._table_lines(df)
            if title:
                parts.append(f"<p><b>{esc(str(title))}</b></p>")
            parts.append("<table>")
            parts.append("<tr>" + "".join(f"<th>{esc(c)}</th>" for c in rows[0]) + "</tr>")
            for r in rows[1:]:
                parts.append(f"<tr><th>{esc(r[0])}</th>"
                             + "".join(f"<td>{esc(c)}</td>" for c in r[1:]) + "</tr>")
            parts.append("</table>")
        parts.extend(f"<p>{esc(n)}</p>" for n in self.notes)
        parts.append("</div>")
        return "\n".join(parts)

    def as_latex(self) -> str:
        """LaTeX report (``tabular`` environments)."""

        def tex(s: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"),
                         ("#", r"\#"), ("_", r"\_"), ("{", r"\{"), ("}", r"\}"),
                         ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}")):
                s = s.replace(a, b)
            return s

        out = [r"\begin{center}", rf"\textbf{{{tex(self.title)}}}\\[4pt]", r"\begin{tabular}{lrlr}",
               r"\hline"]
        pairs = [(tex(str(k)), tex(fmt(v))) for k, v in self.header]
        for i in range(0, len(pairs), 2):
            cells = [f"{k}: & {v}" for k, v in pairs[i: i + 2]]
            out.append(" & ".join(cells + ([" & "] if len(cells) == 1 else [])) + r" \\")
        out += [r"\hline", r"\end{tabular}"]
        for title, df in self.tables:
            rows = self._table_lines(df)
            if title:
                out.append(rf"\\[4pt]\textbf{{{tex(str(title))}}}\\")
            out.append(r"\begin{tabular}{l" + "r" * (len(rows[0]) - 1) + "}")
            out.append(r"\hline")
            for k, r in enumerate(rows):
                out.append(" & ".join(tex(c) for c in r) + r" \\")
                if k == 0:
                    out.append(r"\hline")
            out += [r"\hline", r"\end{tabular}"]
        out.extend(tex(n) + r"\\" for n in self.notes)
        out.append(r"\end{center}")
        return "\n".join(out)
