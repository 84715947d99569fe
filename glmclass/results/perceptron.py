"""Results of a perceptron fit: weights, convergence, the per-epoch error history, and the
ambiguous points of the one-vs-rest / one-vs-one multiclass schemes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..lazy import cached_property
from ..rows.blocks import Block
from ..summary import Summary
from .base import check_which
from .dask import RowOutputs, new_rows_of, rows_of
from .discriminant_functions import NO_PROB, error_rate, labels_of, new_rows
from .frozen import FrozenResults
from .io import SaveMixin


class PerceptronResults(RowOutputs, SaveMixin, FrozenResults,
                        rows={"predict": new_rows_of, "ambiguous": rows_of}):
    """A fitted :class:`~glmclass.Perceptron`.

    Attributes
    ----------
    model : Perceptron
    levels : list
    params : pandas.Series or pandas.DataFrame
        Weights by design column (two classes); with several classes a DataFrame whose columns
        are the binary perceptrons (one-vs-rest: the class; one-vs-one: ``"b vs a"``, positive
        for b).
    converged : bool
        Every perceptron ended an epoch with zero training errors.
    n_epochs : int or pandas.Series
        Epochs run (per perceptron with several classes).
    history : pandas.Series or pandas.DataFrame
        Training points misclassified at the end of each epoch (index: epoch 1, 2, ...); with
        several classes one column per perceptron (NaN after it stopped).
    updates : pandas.Series or pandas.DataFrame
        Weight updates made in each epoch.
    ambiguous : pandas.Series of bool
        In-sample points the multiclass scheme leaves undecided (one-vs-rest: claimed by no
        class or by several; one-vs-one: tied votes). All False for two classes.
    n_ambiguous : int
    """

    def __init__(self, model, fits: dict) -> None:
        d = model.data
        self.model = model
        self._fits = fits
        self.levels = list(model.levels)
        self.scheme = "binary" if len(self.levels) == 2 else model.multiclass
        names = pd.Index(d.exog_names)
        cols = pd.Index(list(fits), name="perceptron")
        coef = np.column_stack([f.coef for f in fits.values()])

        def per_epoch(attr: str):
            frame = pd.DataFrame({k: pd.Series(getattr(f, attr),
                                               index=np.arange(1, f.n_iter + 1))
                                  for k, f in fits.items()})
            frame.index.name = "epoch"
            return frame

        if self.scheme == "binary":
            f = next(iter(fits.values()))
            self.params = pd.Series(f.coef, index=names, name="weights")
            self.n_epochs = f.n_iter
            self.history = per_epoch("history").iloc[:, 0].rename("misclassified")
            self.updates = per_epoch("updates").iloc[:, 0].rename("updates")
        else:
            self.params = pd.DataFrame(coef, index=names, columns=cols)
            self.n_epochs = pd.Series({k: f.n_iter for k, f in fits.items()}, name="n_epochs")
            self.history = per_epoch("history")
            self.updates = per_epoch("updates")
        self.converged = all(f.converged for f in fits.values())
        self.pocket = model.pocket
        self.formula = d.formula
        self.nobs = int(d.nrows)
        self.n_ambiguous = int(model.row_source().reduce(
            lambda b: int(np.count_nonzero(self._decide(self._scores(b.X), "argmax")[1])), 0))

    @cached_property
    def ambiguous(self) -> pd.Series:
        """Whether each training point is undecided (a lazy Dask Series on Dask data)."""
        return self.predict(which="ambiguous")

    def _scores(self, X: np.ndarray) -> np.ndarray:
        """(n, m): one column per binary perceptron."""
        return X @ np.column_stack([f.coef for f in self._fits.values()])

    def _votes(self, s: np.ndarray) -> np.ndarray:
        """One-vs-one votes per class, (n, K)."""
        k = len(self.levels)
        votes = np.zeros((s.shape[0], k))
        col = 0
        for i in range(k):
            for j in range(i + 1, k):
                votes[:, j] += s[:, col] > 0
                votes[:, i] += s[:, col] <= 0
                col += 1
        return votes

    def _decide(self, s: np.ndarray, ambiguous: str) -> tuple[np.ndarray, np.ndarray]:
        """Class codes and the ambiguity mask of scores ``s`` (rows without NaN)."""
        if self.scheme == "binary":
            return (s[:, 0] > 0).astype(int), np.zeros(s.shape[0], dtype=bool)
        if self.scheme == "ovr":
            claims = (s > 0).sum(axis=1)
            return np.argmax(s, axis=1), claims != 1
        votes = self._votes(s)
        top = votes.max(axis=1)
        return np.argmax(votes, axis=1), (votes == top[:, None]).sum(axis=1) > 1

    def predict(self, exog=None, which: str = "class", ambiguous: str = "argmax"):
        """Labels, scores or votes, in-sample (``exog=None``) or for new data.

        Parameters
        ----------
        exog : pandas.DataFrame or array-like, optional
        which : {"class", "score", "linear", "votes", "ambiguous"}
            ``"class"``: labels; ``"score"`` (or ``"linear"``): $w^\\top x$ (a Series for two
            classes, else a DataFrame with one column per perceptron); ``"votes"``: the
            one-vs-one votes per class; ``"ambiguous"``: whether the scheme leaves the point
            undecided. ``"prob"`` raises: the perceptron has no probability model.
        ambiguous : {"argmax", "missing"}
            How ``which="class"`` treats undecided points: the class with the largest score
            (one-vs-rest) or the first of the tied classes with most votes (one-vs-one), or
            a missing label.

        Returns
        -------
        pandas.Series or pandas.DataFrame
        """
        if which in ("prob", "mean"):
            raise ValueError(NO_PROB.format(
                model="Perceptron", why="it finds a separating hyperplane, not a probability "
                                        "model"))
        check_which(which, ("class", "score", "linear", "votes", "ambiguous"))
        if ambiguous not in ("argmax", "missing"):
            raise ValueError(f"ambiguous must be 'argmax' or 'missing', got {ambiguous!r}")
        X, index = new_rows(self.model, exog)
        s = self._scores(X)
        bad = np.isnan(s).any(axis=1)
        if which in ("score", "linear"):
            if self.scheme == "binary":
                return pd.Series(s[:, 0], index=index, name="score")
            return pd.DataFrame(s, index=index, columns=self.params.columns)
        if which == "votes":
            if self.scheme != "ovo":
                raise ValueError("which='votes' needs multiclass='ovo'")
            v = np.where(bad[:, None], np.nan, self._votes(np.nan_to_num(s)))
            return pd.DataFrame(v, index=index, columns=pd.Index(self.levels, name="level"))
        codes, amb = self._decide(np.nan_to_num(s), ambiguous)
        if which == "ambiguous":
            return pd.Series(np.where(bad, False, amb), index=index, name="ambiguous")
        missing = bad | (amb if ambiguous == "missing" else False)
        return labels_of(self.levels, codes, missing, index)

    @cached_property
    def training_error(self) -> float:
        """Fraction of training rows misclassified (ambiguous points resolved by argmax)."""
        return error_rate(self.pred_table())

    def pred_table(self) -> pd.DataFrame:
        """Confusion table of the training data: rows observed, columns predicted."""
        k = len(self.levels)

        def one(b: Block) -> np.ndarray:
            table = np.zeros((k, k))
            np.add.at(table, (b.y, self._decide(self._scores(b.X), "argmax")[0]), 1.0)
            return table

        table = self.model.row_source().reduce(one, np.zeros((k, k))).astype(int)
        lab = pd.Index(self.levels)
        return pd.DataFrame(table, index=lab.rename("observed"), columns=lab.rename("predicted"))

    def summary(self) -> Summary:
        """Report: settings, convergence and the weights."""
        m = self.model
        epochs = self.n_epochs if self.scheme == "binary" else int(self.n_epochs.max())
        header = [("Dep. Variable", m.data.endog_name), ("Model", "Perceptron"),
                  ("Scheme", self.scheme), ("No. Observations", self.nobs),
                  ("Learning rate", m.learning_rate), ("Shuffle", m.shuffle),
                  ("Seed", m.seed if m.seed is None or isinstance(m.seed, int) else "Generator"),
                  ("Pocket", m.pocket), ("Converged", self.converged),
                  ("Epochs", epochs), ("Training error", self.training_error),
                  ("Ambiguous points", self.n_ambiguous)]
        table = self.params.to_frame() if self.scheme == "binary" else self.params
        notes = []
        if not self.converged:
            notes.append("Did not converge: the data may not be linearly separable; the weights "
                         + ("are the pocket's (fewest training errors)." if self.pocket
                            else "are those of the last epoch."))
        if self.scheme != "binary":
            notes.append(f"{self.n_ambiguous} training points are ambiguous under the "
                         f"{self.scheme} scheme; predict(ambiguous='missing') leaves them "
                         "unlabelled.")
        return Summary("Perceptron Results", header, [("weights", table)], notes)

    def __repr__(self) -> str:
        return f"<PerceptronResults: {self.scheme}, converged={self.converged}>"
