"""The closed-loop workload's results: scalars and per-wave / per-level tables for results.to_dataset.

Units and descriptions live in results.VARIABLES like every other variable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .build import graph500_timing, workload_section
from .state import (
    TB_END, TB_MEAN, TB_MESSAGES, TB_NET_MESSAGES, TB_QUERIES, TB_SENDERS, TB_SIGMA, TB_START, TK_FINISH, V_FOGSIM,
    WC_COMPLETED, WC_END, WC_LOCAL, WC_MLAT_MAX, WC_MLAT_SUM, WC_POSTED, WC_QTOT, WC_REMAIN,
)
from ..registry import W_GRAPH500, W_OPEN_LOOP


def workload_values(s: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(data variables, coordinates, attributes) of a finished run of a closed-loop kind of this room (the MPI
    kinds' are mpi/results.py's); empty for open loop."""
    from ..kernels.state import S_INJECTED_PHITS

    wl = s.workload
    if wl.kind == W_OPEN_LOOP:
        return {}, {}, {}
    w = workload_section(s.cfg)
    wc, table = wl.wc, wl.table
    cycles = int(wc[WC_END]) + 1
    completed = int(wc[WC_COMPLETED])
    values: dict[str, Any] = {
        "execution_cycles": cycles,
        "messages_posted": int(wc[WC_POSTED]),
        "messages_completed": completed,
        "messages_local": int(wc[WC_LOCAL]),
        "message_latency_mean": float(wc[WC_MLAT_SUM]) / completed if completed else float("nan"),
        "message_latency_max": float(wc[WC_MLAT_MAX]) if completed else float("nan"),
        "network_usage_phits_per_node_cycle": float(s.state.sc[S_INJECTED_PHITS]) / (s.net.n_nodes * cycles),
        "task_finish_cycle": wl.tk[:, TK_FINISH].copy(),
    }
    coords: dict[str, Any] = {"task": np.arange(wl.n_tasks), "task_node": ("task", wl.task_node.copy())}
    attrs: dict[str, Any] = {"workload": w["kind"]}
    rows = table[table[:, TB_START] >= 0]
    if wl.kind == W_GRAPH500:
        timing = graph500_timing(s.cfg)
        values.update({
            "execution_seconds": cycles * timing["cycle_ns"] * 1e-9,
            "cycle_ns": timing["cycle_ns"],
            "link_gbps": timing["link_gbps"],
            "query_time_cycles": timing["query_cycles"],
            "root_degree": wl.root_degree,
            "root_task": wl.root,
            "levels": len(rows),
            "queries_total": int(rows[:, TB_QUERIES].sum()),
            "level_start": rows[:, TB_START],
            "level_end": rows[:, TB_END],
            "level_cycles": rows[:, TB_END] - rows[:, TB_START] + 1,
            "level_messages": rows[:, TB_MESSAGES],
            "level_queries": rows[:, TB_QUERIES],
            "level_senders": rows[:, TB_SENDERS],
            "level_mean_edges": rows[:, TB_MEAN],
            "level_sigma_edges": rows[:, TB_SIGMA],
        })
        if wl.variant == V_FOGSIM:
            values["queries_received"] = int(wc[WC_QTOT] - wc[WC_REMAIN])
        coords["level"] = np.arange(len(rows))
        attrs["graph500_variant"] = w["variant"]
    else:
        values.update({
            "wave_start": rows[:, TB_START],
            "wave_end": rows[:, TB_END],
            "wave_cycles": rows[:, TB_END] - rows[:, TB_START] + 1,
            "wave_messages": rows[:, TB_MESSAGES],
            "wave_network_messages": rows[:, TB_NET_MESSAGES],
        })
        coords["wave"] = np.arange(len(rows))
    return values, coords, attrs
