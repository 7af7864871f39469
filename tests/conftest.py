"""Tests import the fastnet next to them (so a git worktree tests its own copy), and keep numba's cache on."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The suite runs two tests at a time (pytest -n 2), a core each: no numba thread pool or cold-start helper process
# (fastnet/engine/coldstart.py) beside them. tests/test_coldstart.py gives its own runs two.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def pytest_collection_modifyitems(config, items):
    """Slow validation tests run only when asked for (`pytest -m slow`): the README's `pytest` skips them."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow validation run: `pytest -m slow` runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


# Hypothesis profiles of tests/test_fuzz.py (its docstring says how to pick one): "ci", the default, tries the same
# examples on every run (derandomized, no example database); "nightly" tries 10x as many, new ones each time
# (a failure prints the @reproduce_failure blob that replays it). HYPOTHESIS_PROFILE=<name> loads one for the suite.
_FUZZ_PROFILE = dict(deadline=None, database=None, print_blob=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=200, derandomize=True, **_FUZZ_PROFILE)
settings.register_profile("nightly", max_examples=2000, derandomize=False, **_FUZZ_PROFILE)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
