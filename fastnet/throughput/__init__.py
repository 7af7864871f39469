"""Analytic throughput models on explicit instances and on fastnet topologies (seed 001).

Models: max-min fairness (`lp.mmf`, multipath LPs with HiGHS), maximum concurrent flow (`lp.mcf`, MMF's first
iteration), Hoefler's method and Jain's method (`heuristics.hm`, `heuristics.jm`, numba), and water-filling
(`heuristics.waterfill`, MMF for single-path routing, which cross-checks the LP). See docs/throughput.md.
"""

from __future__ import annotations

from .instance import Instance, from_lists, read_instance, to_dict, write_instance

__all__ = ["Instance", "from_lists", "read_instance", "write_instance", "to_dict"]
