"""A name -> class registry, used for protocols and for the simulation generators."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from evalcal_core.validate import InvalidParameterError, fail


class Registry:
    """Classes registered under their ``name`` attribute and built from keyword parameters.

    A registered class may declare ``aliases: ClassVar[dict[str, str]]`` (old parameter name
    -> current name); :meth:`get` accepts either spelling and builds with the current one.

    Parameters
    ----------
    kind : str
        What is registered ("protocol", "generator"), for messages.
    param : str
        How the caller names the choice ("name", "generator"), for messages.
    owner : str
        The public function that takes it ("protocols.get"), for messages.
    """

    aliases: ClassVar[dict[str, str]] = {}

    def __init__(self, kind: str, param: str, owner: str):
        self.kind = kind
        self.param = param
        self.owner = owner
        self._classes: dict[str, type] = {}

    def register(self, cls: type) -> type:
        """Class decorator: add ``cls`` under ``cls.name``."""
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise InvalidParameterError(f"a registered {self.kind} needs a non-empty class "
                                        f"attribute 'name'; {cls.__qualname__} has {name!r}")
        if name in self._classes and self._classes[name] is not cls:
            raise InvalidParameterError(f"{self.kind} name {name!r} is already registered by "
                                        f"{self._classes[name].__qualname__}")
        self._classes[name] = cls
        return cls

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._classes)

    def cls(self, name: str) -> type:
        """The class registered under ``name``; ``ValueError`` listing the names otherwise."""
        try:
            return self._classes[name]
        except KeyError:
            raise fail(self.param, f"one of {', '.join(self.names())}", name,
                       self.owner) from None

    def parameters(self, name: str) -> dict[str, object]:
        """Tunable parameters of ``name`` (its dataclass fields) with their defaults."""
        return {f.name: f.default for f in dataclasses.fields(self.cls(name))}

    def canonical(self, name: str, params: dict) -> dict:
        """``params`` with alias keys renamed to the current ones (``ValueError`` on both)."""
        aliases = getattr(self.cls(name), "aliases", {})
        out = {}
        for key, value in params.items():
            key = aliases.get(key, key)
            if key in out:
                raise InvalidParameterError(f"{self.kind} {name!r}: parameter {key!r} is given "
                                            "twice (also as its alias)")
            out[key] = value
        return out

    def accepts(self, name: str, key: str) -> bool:
        """Whether ``name`` has a parameter ``key`` (or an alias of one)."""
        return key in self.parameters(name) or key in getattr(self.cls(name), "aliases", {})

    def get(self, name: str, **params):
        """Build ``name`` with ``params``; an unknown parameter raises ``ValueError``."""
        allowed = self.parameters(name)
        params = self.canonical(name, params)
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise InvalidParameterError(f"{self.kind} {name!r} has no parameter {unknown[0]!r}; "
                                        "its parameters are "
                                        f"{', '.join(sorted(allowed)) or 'none'}")
        return self.cls(name)(**params)
