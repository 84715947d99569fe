"""Values computed once, when first read (layer 0: imports nothing of the package)."""

from __future__ import annotations

import functools
from typing import Any


class cached_property(functools.cached_property):  # noqa: N801 - the name functools gives it
    """:class:`functools.cached_property` without its lock.

    Python 3.8-3.11 take a lock (shared by every instance of the class) on each first read;
    3.12 dropped it as a mistake (gh-87634). A fit of 50 rows reads about ten such values for
    the first time, and the lock costs ~1 us each, about 1 % of the fit. Two threads reading
    a value for the first time at once may both compute it; the values are the same.
    """

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        if self.attrname is None:
            raise TypeError("cannot use cached_property without calling __set_name__ on it")
        value = self.func(instance)
        # a non-data descriptor: once stored, the instance's own value is found first
        instance.__dict__[self.attrname] = value
        return value
