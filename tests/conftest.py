"""Tests import the fastnet next to them (so a git worktree tests its own copy), and keep numba's cache on."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
