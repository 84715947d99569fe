"""Summary reports: header pairs and tables rendered as text, HTML or LaTeX.

Output is deterministic (no dates or times; fixed number formats), so reports can be compared
in tests and committed to docs.
"""

from __future__ import annotations

import html
import math
import textwrap
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


def response_label(endog_name: str, formula: str | None) -> str:
    """The response as a report names it: a formula's ``cbind(successes, failures)`` as the
    user wrote it (the response's name joins the two columns with ``+``, which reads as a
    sum), else the response's name."""
    if formula and "~" in formula:
        lhs = formula.split("~", 1)[0].strip()
        if lhs.startswith("cbind(") and lhs.endswith(")"):
            return lhs
    return endog_name


def modelled_line(endog_name: str, levels: list | None) -> str:
    """The line under a binary model's title that says which level is modelled.

    Parameters
    ----------
    endog_name : str
        The response's name.
    levels : list of two labels, or None
        ``[failure, success]``; None for a response of proportions.

    Returns
    -------
    str
        ``"P(low = 1) is modelled; the other level is 0"``, or for proportions
        ``"P(success) is modelled: the response I(k / n) holds proportions"``.
    """
    if levels is None and endog_name.startswith("cbind("):
        return f"P(success) is modelled: {endog_name} gives the successes and failures"
    if levels is None:
        return f"P(success) is modelled: the response {endog_name} holds proportions"
    return f"P({endog_name} = {levels[1]}) is modelled; the other level is {levels[0]}"


def _is_whole(col: pd.Series) -> bool:
    """Whether a float column holds whole numbers (NaN aside: the first row of an anova has no
    df)."""
    if col.dtype.kind not in "f":
        return False
    v = col.to_numpy()
    if np.any(np.isinf(v)):
        return False
    v = v[~np.isnan(v)]
    return bool(v.size and np.all(v == np.round(v)) and np.all(np.abs(v) < 1e15))


#: Widest line of a text report: a terminal or a code cell of 100 columns shows it unwrapped.
MAX_WIDTH = 100


def _scientific(col: pd.Series, digits: int) -> bool:
    """Whether a float column prints in scientific notation: one format per column, fixed
    decimals unless its largest value needs more (>= 1e6) or every value is too small to show
    (``-9.78e-04`` under ``2.1921`` prints ``-0.0010``, as statsmodels)."""
    if col.dtype.kind != "f":
        return False
    v = np.abs(col.to_numpy(dtype=float))
    v = v[np.isfinite(v) & (v > 0)]
    return bool(v.size) and (v.max() >= 1e6 or v.max() < 10 ** -(digits - 1))


def _cell(v, whole: bool, sci: bool, digits: int) -> str:
    if whole and not (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return fmt(int(v), digits)
    if isinstance(v, (float, np.floating)) and math.isfinite(v):
        return f"{v:.{digits}e}" if sci else f"{v:.{digits}f}"
    return fmt(v, digits)


def table_cells(df: pd.DataFrame, digits: int = 4) -> list[list[str]]:
    """The cells of a table as strings: a header row, then the index label and the values of
    each row; columns of whole numbers (counts, degrees of freedom) print without decimals,
    every other column in one format (:func:`_scientific`)."""
    rows = [[""] + [str(c) for c in df.columns]]
    whole = [_is_whole(df[c]) for c in df.columns]
    sci = [_scientific(df[c], digits) for c in df.columns]
    for idx, row in zip(df.index, df.itertuples(index=False), strict=True):
        label = " ".join(map(str, idx)) if isinstance(idx, tuple) else str(idx)
        rows.append([label] + [_cell(v, w, e, digits)
                               for v, w, e in zip(row, whole, sci, strict=True)])
    return rows


def _chunks(widths: list[int], room: int) -> list[list[int]]:
    """Value columns (1-based) packed greedily into blocks that fit ``room`` characters."""
    chunks, cur, used = [], [], 0
    for j, w in enumerate(widths[1:], start=1):
        if cur and used + 2 + w > room:
            chunks.append(cur)
            cur, used = [], 0
        cur.append(j)
        used += 2 + w
    return chunks + [cur] if cur else chunks


def shortened(label: str, room: int, taken: dict) -> str:
    """``label`` cut in the middle to ``room`` characters (``start...end``: the end keeps a
    level such as ``[T.2]``), different from the labels already in ``taken``."""
    tail = max(4, min(14, (room - 3) // 2))
    for extra in range(room):
        head = max(1, room - 3 - tail - extra)
        short = label[:head] + "..." + label[len(label) - tail - extra:]
        if short not in taken or taken[short] == label:
            return short
    return label


def text_table(rows: list[list[str]], max_width: int = MAX_WIDTH, rule: int = 0,
               short: dict | None = None) -> list[str]:
    """Lines of a table within ``max_width`` columns.

    A table too wide for the width keeps its numbers intact: row labels longer than the room
    left by the values go on a line of their own above their values (or, given a dict
    ``short``, are cut in the middle to fit and recorded there, short -> full, so that no
    row wraps), and when the values alone do not fit, the columns are printed in blocks (as R
    prints a wide matrix), each block with the row labels. ``rule`` > 0 draws a rule of that
    width under each header row.
    """
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    values = sum(widths[1:]) + 2 * (len(widths) - 1)
    if widths[0] + values <= max_width:
        room, chunks = widths[0], [list(range(1, len(widths)))]
    elif values + 12 <= max_width:
        room, chunks = max_width - values, [list(range(1, len(widths)))]
    else:
        room = min(widths[0], 30)
        chunks = _chunks(widths, max_width - room)
    out: list[str] = []
    for c, cols in enumerate(chunks):
        if c:
            out.append("")
        for k, r in enumerate(rows):
            cells = "  ".join(r[j].rjust(widths[j]) for j in cols)
            if len(r[0]) > room and short is not None and k > 0 and room >= 12:
                label = shortened(r[0], room, short)
                short[label] = r[0]
                out.append(label.ljust(room) + "  " + cells)
            elif len(r[0]) > room:  # the label on its own line, the values under it
                out += [r[0], " " * room + "  " + cells]
            else:
                out.append(r[0].ljust(room) + "  " + cells)
            if k == 0 and rule:
                out.append("-" * rule)
    return out


def keyed_table(frame: pd.DataFrame, width: int) -> list[str]:
    """Lines of a comparison table (its index the models' names) within ``width`` columns:
    when the names do not fit, the rows are numbered ``[1]``, ``[2]`` under a key of the
    names, and columns that still do not fit wrap into blocks (:func:`text_table`)."""
    rows = table_cells(frame)
    rows[0][0] = frame.index.name or ""
    lines = text_table(rows, 10**9)
    if max(map(len, lines)) > width:
        key = [f"[{i}] {name}" for i, name in enumerate(frame.index, start=1)]
        for i in range(1, len(rows)):
            rows[i][0] = f"[{i}]"
        lines = key + [""] + text_table(rows, width)
    return lines


@dataclass
class Summary:
    """A statistical report.

    Parameters
    ----------
    title : str
    header : list of (str, object)
        Key/value pairs shown in two columns above the tables.
    sections : list of (str or None, pandas.DataFrame)
        Titled tables (index shown as the first column). :attr:`tables` gives them as
        statsmodels does: the header first, then these tables.
    notes : list of str
        Lines printed at the end.
    digits : int
        Decimals shown for table values.
    subtitle : str
        A line under the title (what is modelled, e.g. ``P(low = 1)``); empty for none.

    Notes
    -----
    The text form is at most :data:`MAX_WIDTH` (100) columns wide: wide tables are printed in
    column blocks, long row labels on lines of their own, long header pairs on full lines and
    notes wrapped.
    """

    title: str
    header: list = field(default_factory=list)
    sections: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    digits: int = 4
    subtitle: str = ""

    @property
    def tables(self) -> list[pd.DataFrame]:
        """The report as DataFrames, statsmodels' ``summary().tables``: ``tables[0]`` the
        header (indexed by item, one column ``value``), ``tables[1]`` the coefficient table
        (numbers, not text), then any further tables (a multinomial model: one per level)."""
        values = np.empty(len(self.header), dtype=object)
        values[:] = [v for _, v in self.header]
        head = pd.DataFrame({"value": values},
                            index=pd.Index([str(k) for k, _ in self.header], name="item"))
        return [head] + [df.copy() for _, df in self.sections]

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return _HTML_STYLE + self.as_html()

    # --- text -----------------------------------------------------------------------------
    def _table_lines(self, df: pd.DataFrame) -> list[list[str]]:
        return table_cells(df, self.digits)

    def _header_lines(self, width: int) -> list[str]:
        """Key/value pairs in two columns (column-major); a pair too long for half the width
        gets a full line after them."""
        pairs = [(str(k), fmt(v)) for k, v in self.header]
        colw = (width - 3) // 2
        short = [p for p in pairs if len(p[0]) + len(p[1]) + 2 <= colw]
        long = [p for p in pairs if len(p[0]) + len(p[1]) + 2 > colw]
        half = (len(short) + 1) // 2
        left, right = short[:half], short[half:]
        out = []
        for i in range(half):
            lk, lv = left[i]
            line = f"{lk + ':':<{colw - len(lv)}}{lv}"
            if i < len(right):
                rk, rv = right[i]
                line += "   " + f"{rk + ':':<{colw - len(rv)}}{rv}"
            out.append(line)
        for k, v in long:
            if len(k) + len(v) + 2 <= width:
                out.append(f"{k + ':':<{width - len(v)}}{v}")
            else:
                out += textwrap.wrap(f"{k}: {v}", width, subsequent_indent="    ")
        return out

    def as_text(self) -> str:
        """Plain-text report, at most :data:`MAX_WIDTH` columns wide."""
        cells = [self._table_lines(df) for _, df in self.sections]
        natural = [len(line) for rows in cells for line in text_table(rows, MAX_WIDTH)]
        width = min(MAX_WIDTH, max([len(self.title) + 4, len(self.subtitle), 78] + natural))
        out = [self.title.center(width).rstrip()]
        if self.subtitle:
            out.append(self.subtitle.center(width).rstrip())
        if self.header:
            out.append("=" * width)
            out.extend(self._header_lines(width))
        short: dict = {}
        for (title, _), rows in zip(self.sections, cells, strict=True):
            out.append("=" * width)
            if title:
                out.extend(textwrap.wrap(str(title), width))
                out.append("-" * width)
            out.extend(text_table(rows, width, rule=width, short=short))
        out.append("=" * width)
        notes = list(self.notes)
        if short:  # long term names are cut to keep each row on one line; the key
            notes += ["Shortened names:"] + [f"  {a} = {b}" for a, b in short.items()]
        for note in notes:
            out.extend(textwrap.wrap(note, width, subsequent_indent="    ") or [""])
        return "\n".join(out)

    def as_html(self) -> str:
        """HTML report (tables with class ``glmclass-summary``)."""
        esc = html.escape
        parts = [f'<div class="glmclass-summary"><h4>{esc(self.title)}</h4>']
        if self.subtitle:
            parts.append(f"<p>{esc(self.subtitle)}</p>")
        if self.header:
            parts.append("<table>")
            pairs = [(esc(str(k)), esc(fmt(v))) for k, v in self.header]
            for i in range(0, len(pairs), 2):
                cells = "".join(f"<th>{k}:</th><td>{v}</td>" for k, v in pairs[i: i + 2])
                parts.append(f"<tr>{cells}</tr>")
            parts.append("</table>")
        for title, df in self.sections:
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

        out = [r"\begin{center}", rf"\textbf{{{tex(self.title)}}}\\[4pt]"]
        if self.subtitle:
            out.append(rf"{tex(self.subtitle)}\\[4pt]")
        if self.header:  # no empty tabular when there is no header (a comparison table)
            out += [r"\begin{tabular}{lrlr}", r"\hline"]
            pairs = [(tex(str(k)), tex(fmt(v))) for k, v in self.header]
            for i in range(0, len(pairs), 2):
                cells = [f"{k}: & {v}" for k, v in pairs[i: i + 2]]
                out.append(" & ".join(cells + ([" & "] if len(cells) == 1 else [])) + r" \\")
            out += [r"\hline", r"\end{tabular}"]
        for title, df in self.sections:
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


# Styling of the HTML view in Jupyter and in the documentation site, scoped to the report's class
# and written against the structure as_html() emits (header rows: th td th td; coefficient
# tables: a first row of th only, then th + td...), so the markup itself stays plain. The class
# is doubled to outrank JupyterLab's own table rules (two classes and an element).
_HTML_STYLE = """<style>
.glmclass-summary.glmclass-summary { overflow-x: auto; }
.glmclass-summary.glmclass-summary h4 { margin: 0.3em 0 0.5em; font-size: 1.1em; }
.glmclass-summary.glmclass-summary table { border-collapse: collapse; margin: 0 0 0.9em;
  border: none; font-size: 0.92em; font-variant-numeric: tabular-nums; }
.glmclass-summary.glmclass-summary th, .glmclass-summary.glmclass-summary td {
  padding: 0.12em 0.65em; border: none; white-space: nowrap; vertical-align: baseline; }
.glmclass-summary.glmclass-summary th { text-align: left; font-weight: 600; }
.glmclass-summary.glmclass-summary td {
  text-align: right; font-family: ui-monospace, Menlo, Consolas, monospace; }
.glmclass-summary.glmclass-summary td + th { padding-left: 2.2em; }
.glmclass-summary.glmclass-summary th + th { text-align: right; border-bottom: 1px solid; }
.glmclass-summary.glmclass-summary th:empty { border-bottom: 1px solid; }
.glmclass-summary.glmclass-summary p { margin: 0.2em 0; font-size: 0.88em; }
</style>
"""
