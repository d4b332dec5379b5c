"""``python -m sim.llm_pools.build SOURCE --input PATH... --out POOL.csv[.gz]`` (also
``evalcal pools build``): build an item pool from its public source file(s).

SOURCE is one of the registered builders (:mod:`sim.llm_pools.builders`, one module per
public source; ``--help`` lists them); each names its repository, pinned commit, path(s),
the sha256 of the shared pool it reproduces and the commands that fetch the source
(``git show COMMIT:PATH > FILE``) and build. The inputs are checked before any work (their
count, each a non-empty regular file, ``--out`` a ``.csv`` or ``.csv.gz``), the rows are
checked by the pool reader's own rules (:func:`evalcal_core.pools.check_frame`; ragged
sources with ``complete_models``), then the pool is written atomically under the output
folder's lock (gzip when ``--out`` ends in ``.gz``, with no time stamp, so the same source
gives the same bytes). The printed lines give the sha256 of the CSV, whether it equals the
shared pool's, and what of the source the builder left out, with why.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalcal_core.atomic import atomic_path, check_target
from evalcal_core.cli import ArgumentParser, run_main
from evalcal_core.options import add_options, check_options, config_from_args, option
from evalcal_core.outdir import locked_out
from evalcal_core.pools import ItemPool, check_frame
from evalcal_core.validate import Options, Rule
from sim.llm_pools import builders
from sim.llm_pools.builders import OWNER, POOL_COLUMNS


@dataclass(frozen=True)
class BuiltPool:
    """A pool built from its source, checked, not yet written.

    Attributes
    ----------
    source : str
        The builder's name.
    frame : pandas.DataFrame
        The rows, columns ``model, item, attempt, score, cluster``.
    pool : ItemPool
        The rows as the pool reader checks them (complete models only where ragged).
    csv : bytes
        The CSV text as written (the builder's line ending).
    sha256 : str
        sha256 of :attr:`csv`.
    matches_shared : bool
        Whether :attr:`sha256` is the shared pool's (the builder's documented checksum).
    left_out : tuple of str
        What of the source the builder left out (models, questions), each with why (the
        builder's rule).
    """

    source: str
    frame: pd.DataFrame
    pool: ItemPool
    csv: bytes
    sha256: str
    matches_shared: bool
    left_out: tuple = ()


def build(source: str, inputs) -> BuiltPool:
    """Build and check the pool of ``source`` from its source files ``inputs``.

    Parameters
    ----------
    source : str
        A registered builder (:func:`sim.llm_pools.builders.names`).
    inputs : sequence of path-like
        The source file(s) as fetched at the builder's commit.

    Returns
    -------
    BuiltPool

    Raises
    ------
    InvalidParameterError
        One line naming the input and what is wrong with it.
    """
    builder = builders.get(source)
    paths = builder.check_inputs(inputs)
    frame = builder.frame(paths)
    left_out = tuple(frame.attrs.get("left_out", ()))
    frame = frame[list(POOL_COLUMNS)]
    pool = check_frame(frame.copy(), f"{OWNER} {source}: the pool built from --input",
                       complete_models=builder.ragged)
    csv = frame.to_csv(index=False, lineterminator=builder.newline).encode()
    digest = hashlib.sha256(csv).hexdigest()
    return BuiltPool(source, frame, pool, csv, digest, digest == builder.sha256, left_out)


def write_pool(built: BuiltPool, out) -> Path:
    """Write ``built`` to ``out`` (gzip when it ends in ``.gz``) atomically under the output
    folder's lock; returns ``out``."""
    out = check_target(Path(out))
    data = built.csv
    if out.name.lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)  # mtime 0: the same source gives the same bytes
    with locked_out(out.parent, "--out"), atomic_path(out) as tmp:
        tmp.write_bytes(data)
    return out


def _is_pool_name(path) -> bool:
    return str(path).lower().endswith((".csv", ".csv.gz"))


@dataclass(frozen=True)
class BuildOptions:
    """What ``python -m sim.llm_pools.build`` was asked; each field a command-line option
    (:mod:`evalcal_core.options`), checked when built."""

    source: str = option("source", constraint=Options(tuple(builders.names())),
                         metavar="SOURCE",
                         help="the source's builder: " + ", ".join(builders.names()))
    input: tuple = option("--input", dataclasses.MISSING, nargs="+", metavar="PATH",
                          help="the source file(s), fetched at the builder's pinned commit")
    out: str = option("--out", dataclasses.MISSING, in_argv=False,
                       constraint=Rule(_is_pool_name, "a file name ending in .csv or .csv.gz"),
                       help="the pool file to write (.csv, or .csv.gz for gzip)")

    def __post_init__(self):
        check_options(self)


def build_parser() -> ArgumentParser:
    """The options of :class:`BuildOptions`, as declared there."""
    epilog = "\n\n".join(f"{b.name}: {b.title}; {b.source_words()}"
                         for b in map(builders.get, builders.names()))
    return add_options(ArgumentParser(prog=OWNER, description=__doc__, epilog=epilog),
                       BuildOptions)


def main(argv=None) -> int:
    config = config_from_args(BuildOptions, build_parser().parse_args(argv))
    out = check_target(config.out)  # before the work: a folder or device named --out is refused
    built = build(config.source, config.input)
    write_pool(built, out)
    pool = built.pool
    shape = (f"{len(pool.models)} model(s) x {len(pool.items)} items x {pool.attempts} "
             "attempts")
    if pool.dropped:
        shape += f" (+ {len(pool.dropped)} ragged model(s), kept in the file)"
    same = ("equals the shared pool's" if built.matches_shared else
            f"differs from the shared pool's {builders.get(config.source).sha256[:12]}...")
    print(f"wrote {out}: {shape}; sha256 of the CSV {built.sha256} ({same})")
    if built.left_out:
        print("left out of the source: " + "; ".join(built.left_out))
    return 0


if __name__ == "__main__":
    run_main(main, OWNER)
