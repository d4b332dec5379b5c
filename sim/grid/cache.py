"""A cell's key and row, and the on-disk cache of finished rows.

Each protocol's row of a (generator, k, effect) cell is cached as one JSON file written
atomically, so an interrupted run resumes without recomputing finished rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from evalcal_core.atomic import write_atomic
from evalcal_core.validate import InvalidParameterError


@dataclass(frozen=True)
class CellSpec:
    """What to compute: one protocol on one (generator, k, effect) cell."""

    generator: str
    generator_params: str
    protocol: str
    protocol_params: str
    k: int
    effect_pp: float
    sims: int
    alpha: float
    seed: int
    #: experiments drawn per batch (:func:`sim.grid.chunk_size`); it changes resampling
    #: streams, so it is part of the key
    chunk: int
    #: fingerprint of the data the generator draws from (a real pool's scores; '' for a
    #: synthetic generator): an edited pool or CSV never brings back old results
    data_digest: str

    def key(self) -> str:
        """File name of the cached row: a hash of every field."""
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class CellResult(CellSpec):
    """Rejection counts of one protocol on one cell (a row of ``calibration.csv``)."""

    rejections: int
    rate: float
    rate_low: float
    rate_high: float
    wrong_sign: int
    #: median width of the protocol's confidence intervals times 100, in the scores' units:
    #: percentage points for a fraction. For a metric that is not one (a ``--metric-range``
    #: pool) it is 100 x the metric's units, like ``effect_pp`` (the cell's key), and
    #: :func:`sim.calibration.state_units` restates both in the metric's units; cached rows
    #: keep this one meaning, so no cached cell changes
    median_ci_width_pp: float
    #: a real pool's per-seed tallies (:func:`sim.grid.pool_seeds.encode_counts`; '' for a
    #: synthetic generator, or a row cached before they were kept)
    seed_counts: str = ""


# --------------------------------------------------------------------------------------------
# The on-disk cache


class CacheWarning(UserWarning):
    """A cached cell was unreadable or invalid; it is recomputed."""


class CellCache:
    """Finished rows under ``root/cells/<key>.json``.

    A cached row is validated when read (its fields and types, ``0 <= rejections <= sims``,
    rates in [0, 1], finite numbers, the spec it answers); a row that fails is recomputed
    and named in a :class:`CacheWarning`, never trusted and never fatal. A cell path that is
    a directory is a ``ValueError`` before any work (the row could not be written there).
    """

    def __init__(self, root):
        self.dir = Path(root) / "cells"
        # before any work: a file (or a link to one) here would fail every write, hours in
        if self.dir.is_symlink() or (self.dir.exists() and not self.dir.is_dir()):
            raise InvalidParameterError(f"cache folder {self.dir} is not a folder; remove it (a "
                                        "run creates a folder of cached cells there)")

    def path(self, spec: CellSpec) -> Path:
        """Where the row of ``spec`` is cached."""
        return self.dir / f"{spec.key()}.json"

    def get(self, spec: CellSpec) -> CellResult | None:
        path = self.path(spec)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._bad(path, f"unreadable ({type(exc).__name__})")
        if stat.S_ISDIR(info.st_mode):
            raise InvalidParameterError(f"cache cell {path} is a directory; remove it")
        if not stat.S_ISREG(info.st_mode):
            # a FIFO would block the read forever, a device or a link point anywhere:
            # only a regular file written by :meth:`put` is a cached row
            return self._bad(path, "not a regular file")
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            return self._bad(path, f"unreadable ({type(exc).__name__})")
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return self._bad(path, "not JSON")
        why = _invalid(data)
        if why is not None:
            return self._bad(path, why)
        result = CellResult(**data)
        if self.spec_of(result) != spec:
            return self._bad(path, "answers another cell")
        return result

    @staticmethod
    def _bad(path: Path, why: str) -> None:
        warnings.warn(f"cached cell {path} is {why}; recomputing it", CacheWarning,
                      stacklevel=3)
        return None

    def put(self, result: CellResult) -> None:
        """Write ``result``'s row atomically, replacing whatever non-folder held its name.

        A FIFO, device or symlink at a cell's name was reported by :meth:`get` and is
        removed here (the link, not its target): ``cells/`` holds only this cache's rows.
        """
        path = self.path(self.spec_of(result))
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                path.unlink()
        write_atomic(path, json.dumps(asdict(result), indent=1))

    @staticmethod
    def spec_of(result: CellResult) -> CellSpec:
        """The spec a result answers (its key fields)."""
        return CellSpec(**{f: getattr(result, f) for f in CellSpec.__dataclass_fields__})


_TYPES = {"generator": str, "generator_params": str, "protocol": str, "protocol_params": str,
          "data_digest": str, "k": int, "sims": int, "seed": int, "chunk": int,
          "rejections": int, "wrong_sign": int, "effect_pp": float, "alpha": float,
          "rate": float, "rate_low": float, "rate_high": float,
          "median_ci_width_pp": float, "seed_counts": str}
#: fields a cached row may lack (written before they existed): their defaults
_OPTIONAL = {"seed_counts": ""}


def _invalid(data) -> str | None:
    """Why ``data`` is not a valid cached row (None when it is)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    fields = set(CellResult.__dataclass_fields__)
    for name, default in _OPTIONAL.items():
        data.setdefault(name, default)
    if set(data) != fields:
        missing, extra = sorted(fields - set(data)), sorted(set(data) - fields)
        return "of another schema (" + "; ".join(
            part for part in (f"missing {', '.join(missing)}" if missing else "",
                              f"unknown {', '.join(extra)}" if extra else "") if part) + ")"
    for name, kind in _TYPES.items():
        value = data[name]
        if kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            # NaN is valid only for the CI width (a protocol without intervals)
            ok = ok and (math.isfinite(value) or (name == "median_ci_width_pp"
                                                   and math.isnan(value)))
        else:
            ok = isinstance(value, str)
        if not ok:
            return f"invalid ({name} = {value!r})"
    sims = data["sims"]
    if sims < 1 or not 0 <= data["rejections"] <= sims or not 0 <= data["wrong_sign"] <= sims:
        return (f"invalid (rejections {data['rejections']}, wrong_sign {data['wrong_sign']} "
                f"of {sims} sims)")
    if not all(0 <= data[f] <= 1 for f in ("rate", "rate_low", "rate_high")) or not math.isclose(
            data["rate"], data["rejections"] / sims, rel_tol=1e-9, abs_tol=1e-12):
        return "invalid (rates)"
    return None
