"""The typed parameter codec: command-line values in, one canonical string and seed key out.

Parameters travel as dicts; where they must be text (a CSV column, a cache key, a random
stream's name) they are encoded once here. Equal values give equal text whatever their
spelling: ``rho=0`` and ``rho=0.0`` for a float parameter, ``5`` and ``numpy.int64(5)``.
"""

from __future__ import annotations

import ast
import hashlib

import numpy as np

from evalcal_core.validate import InvalidParameterError


def parse_value(text: str):
    """A command-line value as a Python literal where it is one (``30``, ``0.5``, ``True``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    # nan and inf are numbers too (so a range check, not a type check, reports them)
    if text.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
        return float(text)
    return text


def parse_key_values(items, option: str) -> dict:
    """Parse ``["a=1", "b=x"]`` into ``{"a": 1, "b": "x"}``.

    Raises
    ------
    ValueError
        Naming ``option`` and the malformed or repeated item.
    """
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InvalidParameterError(f"The {option!r} option takes KEY=VALUE items. "
                                        f"Got {item!r} instead.")
        if key in out:
            raise InvalidParameterError(f"The {option!r} option sets {key!r} twice.")
        out[key] = parse_value(value.strip())
    return out


def plain_value(value, default=None):
    """``value`` as a plain Python scalar; a whole number for a float parameter is a float.

    Parameters
    ----------
    value : object
    default : object, optional
        The parameter's default; when it is a float, an int value is converted to float.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if (isinstance(default, float) and isinstance(value, int)
            and not isinstance(value, bool)):
        value = float(value)
    return value


def encode(params: dict, defaults: dict | None = None, *, sort: bool = True,
           skip_none: bool = False) -> str:
    """``key=value`` pairs joined by ``;``: the canonical text of ``params``.

    Parameters
    ----------
    params : dict
    defaults : dict, optional
        Defaults by key, used to type the values (see :func:`plain_value`).
    sort : bool
        Sort by key (otherwise keep the dict's order, e.g. a dataclass's declaration order).
    skip_none : bool
        Leave out keys whose value is ``None``.
    """
    defaults = defaults or {}
    keys = sorted(params) if sort else list(params)
    parts = []
    for key in keys:
        value = plain_value(params[key], defaults.get(key))
        if skip_none and value is None:
            continue
        parts.append(f"{key}={value}")
    return ";".join(parts)


def decode(text: str) -> dict:
    """Inverse of :func:`encode` (values parsed as literals where they are ones)."""
    out = {}
    for item in filter(None, str(text).split(";")):
        key, _, value = item.partition("=")
        out[key] = parse_value(value)
    return out


def _plain_parts(parts):
    return tuple(plain_value(p) for p in parts)


def seed_key(*parts) -> tuple[int, ...]:
    """A stable spawn key (four 32-bit words) naming ``parts``.

    numpy scalars are unwrapped first, so ``numpy.int64(5)`` and ``5`` name the same stream.
    """
    digest = hashlib.sha256(repr(_plain_parts(parts)).encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


def content_digest(*arrays) -> str:
    """SHA-256 (hex, 16 characters) of arrays' dtypes, shapes and bytes: a data fingerprint."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]
