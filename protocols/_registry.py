"""The protocol registry: one decorator adds a protocol, ``get`` builds one by name."""

from __future__ import annotations

import dataclasses

_REGISTRY: dict[str, type] = {}


def register(cls: type) -> type:
    """Class decorator: add a :class:`~protocols.Protocol` subclass under ``cls.name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"a registered protocol needs a non-empty class attribute 'name'; "
                         f"{cls.__qualname__} has {name!r}")
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"protocol name {name!r} is already registered by "
                         f"{_REGISTRY[name].__qualname__}")
    _REGISTRY[name] = cls
    return cls


def names() -> list[str]:
    """Names of all registered protocols, sorted."""
    return sorted(_REGISTRY)


def protocol_class(name: str) -> type:
    """The class registered under ``name``; ``ValueError`` listing the names otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"The 'name' parameter of protocols.get must be one of {names()}. "
                         f"Got {name!r} instead.") from None


def parameters(name: str) -> dict[str, object]:
    """Tunable parameters of protocol ``name`` with their defaults."""
    cls = protocol_class(name)
    return {f.name: f.default for f in dataclasses.fields(cls)}


def get(name: str, **params):
    """Build the protocol registered under ``name`` with parameters ``params``.

    Parameters
    ----------
    name : str
        One of :func:`names`.
    **params
        Protocol parameters (see :func:`parameters`); unknown ones raise ``ValueError``.

    Returns
    -------
    Protocol
        An object with ``evaluate(base, variant, alpha=0.05, *, rng=None)``.
    """
    cls = protocol_class(name)
    allowed = parameters(name)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"protocol {name!r} has no parameter {unknown[0]!r}; "
                         f"its parameters are {sorted(allowed) or 'none'}")
    return cls(**params)
