"""Tests import the fastnet next to them (so a git worktree tests its own copy), and keep numba's cache on."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pytest_collection_modifyitems(config, items):
    """Slow validation tests run only when asked for (`pytest -m slow`): the README's `pytest` skips them."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow validation run: `pytest -m slow` runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
