"""Results that are complete and frozen when built.

Every results class of the package derives from :class:`FrozenResults`: its constructor sets
every attribute, and once the outermost ``__init__`` has returned, assigning or deleting an
attribute raises an AttributeError that names it. Each derived number is a
:class:`~glmclass.lazy.cached_property` (functools' without its lock), which writes the
instance ``__dict__`` directly (assignment rules do not see it), so cached values still work;
pickling restores the ``__dict__`` as it was, frozen. A changed copy is made with
:meth:`FrozenResults.replaced`.
"""

from __future__ import annotations

from typing import Any, TypeVar

_R = TypeVar("_R", bound="FrozenResults")


class FrozenWhenBuilt(type):
    """Metaclass of results that are frozen once their outermost ``__init__`` returns."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        obj = super().__call__(*args, **kwargs)
        obj.__dict__["_frozen"] = True
        return obj


class FrozenResults(metaclass=FrozenWhenBuilt):
    """Base of results objects: complete when built, no attribute set afterwards."""

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_frozen", False):
            raise AttributeError(f"{type(self).__name__} are complete and frozen when built: "
                                 f"{name!r} cannot be assigned; use replaced({name}=...) for "
                                 "a changed copy")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self.__dict__.get("_frozen", False):
            raise AttributeError(f"{type(self).__name__} are complete and frozen when built: "
                                 f"{name!r} cannot be deleted")
        object.__delattr__(self, name)

    def replaced(self: _R, **changes: Any) -> _R:
        """A copy of these results with the attributes ``changes`` (e.g. the ``separation``
        record the model finds from the results), sharing every number computed so far.

        Parameters
        ----------
        **changes
            Attribute names the results already have, with their new values.

        Returns
        -------
        FrozenResults
            A new frozen object of the same class; these results are not changed.

        Raises
        ------
        AttributeError
            When ``changes`` names an attribute the results do not have.
        """
        unknown = [k for k in changes if k not in self.__dict__]
        if unknown:
            raise AttributeError(f"replaced() sets attributes the results already have; "
                                 f"{type(self).__name__} has no {', '.join(unknown)}")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new
