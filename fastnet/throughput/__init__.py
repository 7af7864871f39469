"""Analytic throughput models on explicit instances and on fastnet topologies (seed 001).

Models: max-min fairness (`lp.mmf`, multipath LPs with HiGHS), maximum concurrent flow (`lp.mcf`, MMF's first
iteration), Hoefler's method and Jain's method (`heuristics.hm`, `heuristics.jm`, numba), and water-filling
(`heuristics.waterfill`, MMF for single-path routing, which cross-checks the LP). See docs/throughput.md.

The instance API (`from fastnet.throughput import read_instance`, ...) is instance.py's, loaded on first use:
config.py imports settings.py, the `[throughput]` section, and so this file, which must not load numpy then.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Instance", "from_lists", "read_instance", "write_instance", "to_dict"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import instance

        return getattr(instance, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
