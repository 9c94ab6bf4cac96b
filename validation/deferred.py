"""Modules whose code runs only when one of their attributes is first used.

great-expectations imports scipy.stats and altair at module level for two expectations (KL divergence, the
KS tests) and their charts: about a third of its import time. :func:`defer` puts a module in
``sys.modules`` whose code has not run yet; an ``import`` of it binds that module, and the first attribute
it lacks runs the real module code in it (the same object, so every name bound to it sees the result).

Unlike :class:`importlib.util.LazyLoader`, reading the attributes the import system itself reads
(``__spec__``, ``__path__``) does not load the module, so a later ``import altair`` keeps it deferred.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from collections.abc import Iterable

_LOADING = threading.RLock()


class _Deferred(types.ModuleType):
    """A module created from its spec whose code runs at the first attribute it does not have."""

    def __getattr__(self, name: str) -> object:
        with _LOADING:
            if type(self) is _Deferred:  # not loaded by another thread meanwhile
                self.__class__ = types.ModuleType  # type: ignore[assignment]  # loaded: an ordinary module
                try:
                    self.__spec__.loader.exec_module(self)  # type: ignore[union-attr]
                except BaseException:
                    sys.modules.pop(self.__name__, None)  # as a failed import: the next import retries
                    raise
        return getattr(self, name)


def defer(names: Iterable[str]) -> list[str]:
    """Put each module of ``names`` that is not imported yet in ``sys.modules`` unloaded; returns those
    deferred (a module already imported, not installed, or without a loader that can run it in a given
    module object is left to the ordinary import)."""
    deferred = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(name)  # imports the parent package, not the module
        except (ImportError, ValueError):
            continue
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            continue
        module = importlib.util.module_from_spec(spec)
        module.__class__ = _Deferred
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)  # as the import system binds a submodule
        deferred.append(name)
    return deferred
