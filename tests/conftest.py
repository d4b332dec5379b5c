"""Test-suite configuration: a deterministic hypothesis profile.

``derandomize=True`` makes every property test draw the same examples on every run, so a
failure is reproducible and the suite's runtime is stable.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "evalcal",
    derandomize=True,
    deadline=None,
    max_examples=25,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("evalcal")


def pytest_configure(config):
    # hypothesis's failure explanation imports a deprecated mypy_extensions name; with
    # ``filterwarnings = error`` that turns a failing property into an INTERNALERROR that
    # hides the falsifying example.
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")
