"""``sim.calibration``: the config behind ``python -m sim.calibrate`` (consistency checks)."""

from dataclasses import FrozenInstanceError

import pytest

from reports.calibrate import build_parser
from sim.calibration import CalibrationConfig


def _config(*argv):
    return CalibrationConfig.from_args(build_parser().parse_args(list(argv)))


def test_to_argv_round_trips_through_the_parser():
    """Parsing ``to_argv()`` gives back the same config (jobs and out aside)."""
    config = _config("--k", "3", "6", "--effects", "0", "1.5", "--param", "sigma=0.004",
                     "--protocols", "paired_t", "welch_t", "--alpha", "0.1", "--mde",
                     "--target-power", "0.9", "--jobs", "1")
    again = _config(*config.to_argv(), "--jobs", "1")
    assert again == config
    assert config.to_argv()[:4] == ["--k", "3", "6", "--generator"]
    assert "--mde" in config.to_argv() and "--jobs" not in config.to_argv()


def test_the_config_is_frozen_and_validated_when_built():
    config = CalibrationConfig(k=(3,))
    with pytest.raises(FrozenInstanceError):
        config.sims = 5
    with pytest.raises(ValueError, match="'--sims' option must be an integer >= 1"):
        CalibrationConfig(k=(3,), sims=0)
    with pytest.raises(ValueError, match="MIN MAX with MIN <= MAX"):
        CalibrationConfig(k=(5, 3))
    with pytest.raises(ValueError, match="--protocol-param"):
        CalibrationConfig(k=(3,), protocol_params=("B",))
