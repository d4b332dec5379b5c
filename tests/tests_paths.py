"""Paths of the committed test fixtures."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: synthetic run store written by ``tests/fixtures/make_fixture_pool.py``
FIXTURE_POOL = str(FIXTURES / "pool")
