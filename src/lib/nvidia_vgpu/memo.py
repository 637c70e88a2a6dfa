"""Values a charm instance computes once per hook.

functools.cached_property exists only from Python 3.8, and bionic units
run Python 3.6; this is the same idea on every Python a supported series
has.
"""
from typing import Any, Callable


class cached_property:
    """A property computed on first access and then kept in the
    instance's __dict__ under the same name. A non-data descriptor, so the
    kept value wins from then on; `instance.__dict__.pop(name)` makes the
    next access compute it again, as with functools.cached_property."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.function(instance)
        instance.__dict__[self.name] = value
        return value
