"""The data-only results file: JSON and NumPy arrays in one zip, read without running code.

``results.save(path)`` (``format="safe"``, the default) writes a zip of

- ``meta.json``: the format and its layout, the glmclass version, the model (its class, which
  the reader finds in the model registry), the results class, the formula, the family and
  link by name, whether the rows were removed;
- ``state.json``: the results object as a tree of plain values: numbers, text, lists and
  dicts, pandas indexes, Series and DataFrames, glmclass objects as a class name from a fixed
  table with their attributes, the formula's design as plain data
  (:meth:`~glmclass.formula.patsy_engine.DesignSpec.saved_design`, or formulaic's model spec
  by :mod:`glmclass.formula.formulaic_state`), and references
  ``{"t": "nd", "a": i}`` (a sparse CSR/CSC matrix as its three arrays) to
- ``arrays.npy``: every NumPy array (estimates, covariance, per-row values) as ``.npy``
  records one after another, written and read with ``allow_pickle=False``.

Reading (:func:`read`) parses JSON and ``.npy`` files only; a class name that is not in the
reader's table, an array of Python objects or any malformed piece is a ``ValueError``.
Objects are made with ``cls.__new__`` and given their attributes: no constructor, no
``__setstate__``, nothing from the file is called or evaluated. Values the format cannot
hold (functions, user-defined links and families, Dask collections, a formula evaluated with
the caller's names, formulaic's custom contrasts) are refused when saving, naming what and
saying to use ``format="pickle"``. A random-effects formula is written without its evaluation
environment (its class's ``__getstate__`` leaves it out).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections import OrderedDict
from collections.abc import Mapping
from typing import IO, Any

import numpy as np
import pandas as pd
from scipy import sparse

from .. import version
from ..data.model_data import is_dask
from ..formula.patsy_engine import spec_from_saved
from ..formula.spec import SpecBase

FORMAT = "glmclass-results-safe"
SAFE_LAYOUT = 1  # version of the zip layout
ARRAYS = "arrays.npy"
#: Up to this many labels are written in the JSON, more as one text array.
SMALL = 256
PICKLE_ADVICE = "save these results with format='pickle' (and load them with trusted=True)"

#: pandas' nullable column types a file may hold (besides text and categories).
_PANDAS_DTYPES = frozenset({"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32",
                            "UInt64", "Float32", "Float64", "boolean", "datetime64[ns]",
                            "datetime64[us]", "datetime64[ms]", "datetime64[s]"})

#: Modules whose classes may never be written (they evaluate code or hold environments).
_NEVER = ("glmclass.formula.namespace",)


def class_key(cls: type) -> str | None:
    """The name a glmclass class is written under (``"results.glm:GLMResults"``), or None for
    a class that is not glmclass's own."""
    module = cls.__module__
    if not module.startswith("glmclass.") or module in _NEVER or "<" in cls.__qualname__:
        return None
    return f"{module[len('glmclass.'):]}:{cls.__qualname__}"


# --- writing ----------------------------------------------------------------------------------
class _Writer:
    """Turns an object graph into a JSON tree and a list of arrays."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.memo: dict[int, int] = {}
        self.keep: list = []  # objects whose ids are memo keys stay alive

    def array(self, a: np.ndarray, path: str) -> dict:
        if a.dtype.kind == "O":
            if a.size > SMALL and all(type(x) is str and not x.endswith("\0") for x in a.flat):
                # many labels: one text array (NumPy's text drops trailing NULs: not those)
                return {"t": "ndu", "v": self.array(a.astype(str), path)}
            return {"t": "ndo", "shape": list(a.shape),
                    "v": [self.tree(v, f"{path}[{i}]") for i, v in enumerate(a.ravel())]}
        if a.dtype.kind not in "biufcUSMm" or a.dtype.names is not None:
            raise ValueError(f"{path} is an array of {a.dtype}, which a data-only file cannot "
                             f"hold: {PICKLE_ADVICE}")
        self.arrays.append(np.ascontiguousarray(a) if a.ndim else a)
        return {"t": "nd", "a": len(self.arrays) - 1}

    def tree(self, v: Any, path: str) -> Any:  # noqa: C901 - one branch per type, flat
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int) and type(v) is int:
            return v
        if type(v) is float:
            return {"t": "f", "v": v.hex()}  # exact, NaN and infinities included
        if isinstance(v, np.generic):
            return {"t": "np", "v": self.array(np.asarray(v), path)}
        if isinstance(v, np.ndarray):
            return self.array(v, path)
        if isinstance(v, (list, tuple, set, frozenset)) and type(v) in (list, tuple, set,
                                                                         frozenset):
            items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
            return {"t": type(v).__name__,
                    "v": [self.tree(x, f"{path}[{i}]") for i, x in enumerate(items)]}
        if type(v) in (dict, OrderedDict):
            return {"t": "dict" if type(v) is dict else "odict",
                    "k": [self.tree(k, f"{path} key") for k in v],
                    "v": [self.tree(x, f"{path}[{k!r}]") for k, x in v.items()]}
        if isinstance(v, slice):
            return {"t": "slice", "v": [self.tree(x, path) for x in (v.start, v.stop, v.step)]}
        if is_dask(v):
            raise ValueError(f"{path} is a Dask collection: the rows of this fit live in Dask "
                             "partitions, which a data-only file cannot hold; save with "
                             f"remove_data=True, or {PICKLE_ADVICE}")
        if isinstance(v, pd.Index):
            return self.index(v, path)
        if isinstance(v, pd.Series):
            return {"t": "series", "v": self.values(v.array, path), "i": self.index(v.index, path),
                    "n": self.tree(v.name, path)}
        if isinstance(v, pd.DataFrame):
            return {"t": "frame", "c": self.index(v.columns, path),
                    "i": self.index(v.index, path),
                    "v": [self.values(v.iloc[:, j].array, f"{path}[{c!r}]")
                          for j, c in enumerate(v.columns)]}
        if isinstance(v, pd.api.extensions.ExtensionArray):
            return self.values(v, path)
        if isinstance(v, np.dtype):
            if v.kind == "O" or v.kind in "biufcUSMm":
                return {"t": "dtype", "v": v.str if v.kind != "O" else "O"}
        if isinstance(v, pd.CategoricalDtype):
            return {"t": "catdtype", "c": self.tree(v.categories, path), "o": bool(v.ordered)}
        if sparse.issparse(v) and v.format in ("csr", "csc"):  # e.g. a mixed fit's factor
            return {"t": "sparse", "f": v.format, "shape": [int(k) for k in v.shape],
                    "v": [self.array(np.asarray(a), path)
                          for a in (v.data, v.indices, v.indptr)]}
        if isinstance(v, SpecBase):
            return {"t": "spec", "v": self.tree(v.saved_design(), f"{path} (the formula design)")}
        return self.obj(v, path)

    def values(self, arr, path: str) -> Any:
        """A pandas column's values: NumPy-backed or Categorical."""
        if isinstance(arr, pd.Categorical):
            return {"t": "cat", "codes": self.array(np.asarray(arr.codes), path),
                    "c": self.index(arr.categories, path), "o": bool(arr.ordered)}
        if isinstance(arr, pd.arrays.NumpyExtensionArray):
            return self.array(arr.to_numpy(), path)
        dtype = arr.dtype
        missing = np.asarray(pd.isna(arr), dtype=bool)
        if isinstance(dtype, pd.StringDtype) and len(arr) <= SMALL:  # names: inline
            return {"t": "str", "storage": dtype.storage, "na": dtype.na_value is pd.NA,
                    "l": [None if m else str(x) for x, m in zip(arr, missing, strict=True)]}
        if isinstance(dtype, pd.StringDtype):
            text = np.asarray(arr.to_numpy(dtype=object, na_value=""), dtype=str)
            if np.char.str_len(text).sum() != sum(len(x) for x in arr[~missing]):
                raise ValueError(f"{path} holds text ending in NUL characters, which a "
                                 f"data-only file cannot hold yet: {PICKLE_ADVICE}")
            return {"t": "str", "storage": dtype.storage, "na": dtype.na_value is pd.NA,
                    "v": self.array(text, path), "m": self.array(missing, path)}
        if isinstance(arr, pd.arrays.DatetimeArray) and arr.tz is None:
            return {"t": "pd", "dtype": str(dtype), "m": self.array(missing, path),
                    "v": self.array(arr.to_numpy(), path)}
        numpy_dtype = getattr(dtype, "numpy_dtype", None)
        if isinstance(arr, (pd.arrays.IntegerArray, pd.arrays.FloatingArray,
                            pd.arrays.BooleanArray)) and numpy_dtype is not None:
            return {"t": "pd", "dtype": dtype.name, "m": self.array(missing, path),
                    "v": self.array(arr.to_numpy(dtype=numpy_dtype, na_value=0), path)}
        raise ValueError(f"{path} holds pandas {arr.dtype} values, which a data-only file "
                         f"cannot hold yet: {PICKLE_ADVICE}")

    def index(self, ix: pd.Index, path: str) -> dict:
        if isinstance(ix, pd.RangeIndex):
            return {"t": "range", "v": [ix.start, ix.stop, ix.step], "n": self.tree(ix.name, path)}
        if isinstance(ix, pd.MultiIndex):
            return {"t": "multi", "v": [self.tree(tuple(t), path) for t in ix],
                    "n": self.tree(list(ix.names), path)}
        if isinstance(ix, pd.CategoricalIndex):
            return {"t": "catindex", "v": self.values(ix.array, path),
                    "n": self.tree(ix.name, path)}
        if type(ix) is not pd.Index:
            raise ValueError(f"{path} has a pandas {type(ix).__name__}, which a data-only file "
                             f"cannot hold yet: {PICKLE_ADVICE}")
        return {"t": "index", "v": self.values(ix.array, path), "n": self.tree(ix.name, path)}

    def obj(self, v: Any, path: str) -> dict:
        cls = type(v)
        key = class_key(cls)
        if key is None or not hasattr(v, "__dict__") or getattr(cls, "__slots__", None):
            what = "function" if callable(v) and not hasattr(v, "__dict__") else cls.__name__
            raise ValueError(f"{path} is a {what} ({cls.__module__}.{cls.__qualname__}), which "
                             "is not one of glmclass's own objects and cannot be named in a "
                             f"data-only file (e.g. a user-defined link or family): "
                             f"{PICKLE_ADVICE}")
        if id(v) in self.memo:
            return {"t": "ref", "v": self.memo[id(v)]}
        self.memo[id(v)] = len(self.memo)
        self.keep.append(v)
        state = {k: self.tree(x, f"{path}.{k}") for k, x in _attributes(v).items()}
        return {"t": "obj", "c": key, "id": self.memo[id(v)], "v": state}


def _attributes(v: Any) -> dict:
    """The attributes of a glmclass object to write: what its class's own ``__getstate__``
    keeps (e.g. a random-effects formula without its evaluation environment), else all."""
    if type(v).__getstate__ is object.__getstate__:
        return vars(v)
    state = v.__getstate__()
    if not isinstance(state, dict):
        raise ValueError(f"{type(v).__qualname__} cannot be written to a data-only file: "
                         f"{PICKLE_ADVICE}")
    return state


def write(res, fh: IO[bytes], meta: dict) -> None:
    """Write ``res`` (already without its rows when asked) as a data-only zip to ``fh``.

    Raises
    ------
    ValueError
        Naming the first value the format cannot hold, and saying to use ``format="pickle"``.
    """
    w = _Writer()
    state = w.tree(res, "results")
    head = {"format": FORMAT, "layout": SAFE_LAYOUT, "glmclass": version.__version__, **meta}
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("meta.json", json.dumps(head, allow_nan=False))
        zf.writestr("state.json", json.dumps(state, allow_nan=False))
        buf = io.BytesIO()
        for a in w.arrays:  # one member: the .npy records one after another
            np.save(buf, a, allow_pickle=False)
        zf.writestr(ARRAYS, buf.getvalue(), compress_type=zipfile.ZIP_STORED)  # binary floats


# --- reading ----------------------------------------------------------------------------------
class _Reader:
    """Turns the JSON tree and the arrays back into objects, making only classes of the table."""

    def __init__(self, arrays: list[np.ndarray], classes: Mapping[str, type]) -> None:
        self.arrays = arrays
        self.classes = classes
        self.objs: dict[int, Any] = {}

    def array(self, node: dict) -> np.ndarray:
        return self.arrays[int(node["a"])]

    def tree(self, node: Any) -> Any:  # noqa: C901 - one branch per tag, flat
        if node is None or isinstance(node, (bool, str, int)):
            return node
        t = node["t"]
        if t == "f":
            return float.fromhex(node["v"])
        if t == "np":
            return self.tree(node["v"])[()]
        if t == "nd":
            return self.array(node)
        if t == "ndu":
            text = self.tree(node["v"])
            if not isinstance(text, np.ndarray) or text.dtype.kind != "U":
                raise ValueError("a text array holds something else")
            return text.astype(object)
        if t == "ndo":
            out = np.empty(len(node["v"]), dtype=object)
            for i, x in enumerate(node["v"]):
                out[i] = self.tree(x)
            return out.reshape([int(s) for s in node["shape"]])
        if t in ("list", "tuple", "set", "frozenset"):
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[t](
                self.tree(x) for x in node["v"])
        if t in ("dict", "odict"):
            pairs = zip([self.tree(k) for k in node["k"]], [self.tree(x) for x in node["v"]],
                        strict=True)
            return dict(pairs) if t == "dict" else OrderedDict(pairs)
        if t == "slice":
            return slice(*(self.tree(x) for x in node["v"]))
        if t in ("range", "multi", "catindex", "index"):
            return self.index(node)
        if t == "series":
            values = self.values(node["v"])
            return pd.Series(values, index=self.index(node["i"]), dtype=values.dtype,
                             name=self.tree(node["n"]), copy=False)
        if t == "frame":
            cols = self.index(node["c"])
            index = self.index(node["i"])
            data = {}
            for j, v in enumerate(node["v"]):
                values = self.values(v)  # its own dtype: pandas would read text as str
                data[j] = pd.Series(values, index=index, dtype=values.dtype, copy=False)
            out = pd.DataFrame(data, index=index)
            return out.set_axis(cols, axis=1) if len(cols) else out
        if t in ("cat", "str", "pd"):
            return self.values(node)
        if t == "dtype":
            return np.dtype(str(node["v"]))
        if t == "catdtype":
            return pd.CategoricalDtype(self.tree(node["c"]), ordered=bool(node["o"]))
        if t == "sparse":
            data, indices, indptr = (self.array(a) for a in node["v"])
            make = {"csr": sparse.csr_matrix, "csc": sparse.csc_matrix}[node["f"]]
            return make((data, indices, indptr), shape=tuple(int(k) for k in node["shape"]))
        if t == "spec":
            saved = self.tree(node["v"])
            if isinstance(saved, dict) and saved.get("engine") == "formulaic":
                from ..formula import formulaic_engine  # an optional dependency

                return formulaic_engine.spec_from_saved(saved)
            return spec_from_saved(saved)
        if t == "ref":
            return self.objs[int(node["v"])]
        if t == "obj":
            return self.obj(node)
        raise ValueError(f"unknown entry {t!r}")

    def values(self, node: dict) -> np.ndarray | pd.api.extensions.ExtensionArray:
        if node["t"] == "str":
            dtype = pd.StringDtype(str(node["storage"]), na_value=pd.NA if node["na"] else np.nan)
            if "l" in node:
                values = node["l"]
                if not all(v is None or isinstance(v, str) for v in values):
                    raise ValueError("a text column holds something else")
                return pd.array(values, dtype=dtype)
            text = self.array(node["v"])
            if text.dtype.kind != "U":
                raise ValueError("a text column holds something else")
            values = text.astype(object)
            values[self.array(node["m"]).astype(bool)] = None
            return pd.array(values, dtype=dtype)
        if node["t"] == "pd":
            name = str(node["dtype"])
            if name not in _PANDAS_DTYPES:
                raise ValueError(f"unknown column type {name!r}")
            out = pd.array(self.array(node["v"]), dtype=name)
            out[self.array(node["m"]).astype(bool)] = None
            return out
        if node["t"] == "cat":
            cats = self.index(node["c"])
            return pd.Categorical.from_codes(self.array(node["codes"]), categories=cats,
                                             ordered=bool(node["o"]))
        values = self.tree(node)
        if not isinstance(values, np.ndarray):
            raise ValueError("a column is not an array")
        return values

    def index(self, node: dict) -> pd.Index:
        t = node["t"]
        name = self.tree(node["n"])
        if t == "range":
            start, stop, step = (int(x) for x in node["v"])
            return pd.RangeIndex(start, stop, step, name=name)
        if t == "multi":
            return pd.MultiIndex.from_tuples([self.tree(x) for x in node["v"]], names=name)
        if t == "catindex":
            return pd.CategoricalIndex(self.values(node["v"]), name=name)
        if t == "index":
            values = self.values(node["v"])
            return pd.Index(values, name=name, dtype=values.dtype, copy=False)
        raise ValueError(f"unknown index {t!r}")

    def obj(self, node: dict) -> Any:
        key = node["c"]
        cls = self.classes.get(key) if isinstance(key, str) else None
        if cls is None:
            raise ValueError(f"the file names {key!r}, which is not one of the glmclass "
                             "classes a results file may hold")
        out = cls.__new__(cls)
        self.objs[int(node["id"])] = out
        state = node["v"]
        if not isinstance(state, dict) or any(k.startswith("__") for k in state):
            raise ValueError(f"the attributes of {key!r} are not valid")
        out.__dict__.update({k: self.tree(x) for k, x in state.items()})
        return out


def is_safe_file(head: bytes) -> bool:
    """Whether a file's first bytes are those of a zip archive."""
    return head[:4] == b"PK\x03\x04"


def read(fh: IO[bytes], classes: Mapping[str, type]) -> tuple[dict, Any]:
    """Read a data-only results file: its metadata and the results.

    Parameters
    ----------
    fh : binary file object (seekable)
    classes : mapping of name -> class
        The glmclass classes the file may name (written under :func:`class_key`).

    Returns
    -------
    meta : dict
    results : object

    Raises
    ------
    ValueError
        When the file is not a complete data-only glmclass results file, or names a class
        outside ``classes``.
    """
    try:
        with zipfile.ZipFile(fh) as zf:
            meta = json.loads(zf.read("meta.json"))
            if not (isinstance(meta, dict) and meta.get("format") == FORMAT):
                raise ValueError("its metadata are not glmclass's")
            state = json.loads(zf.read("state.json"))
            blob = io.BytesIO(zf.read(ARRAYS))
        arrays = []
        while blob.tell() < len(blob.getbuffer()):
            arrays.append(np.load(blob, allow_pickle=False))  # no object arrays: no pickle
        return meta, _Reader(arrays, classes).tree(state)
    except Exception as exc:  # noqa: BLE001 - whatever a damaged or crafted file causes
        raise ValueError(f"not a glmclass results file, or a damaged or altered one "
                         f"({type(exc).__name__}: {exc})") from None
