"""The `[mpi]` config section: how MPI is implemented (protocols, collective algorithms); what runs is in
`[workload]` (kind = "mpi" or "trace"). Registered in config.EXTRA_SECTIONS; docs/mpi.md explains each key.

    [mpi]
    eager_bytes = 8192          # payloads up to this size go eagerly, larger ones by rendezvous (RTS, CTS, data)
    header_bytes = 32           # envelope added to every message on the wire (BG/Q's packet header, seed 003)
    allreduce = "auto"          # auto: recursive_doubling up to allreduce_short_bytes, rabenseifner above
"""

from __future__ import annotations

from typing import Any

from ..checks import check_section, choice, integer, real
from ..registry import algorithms_for

KEYS = {
    "eager_bytes": (8192, integer(0)),
    "header_bytes": (32, integer(0)),
    "allreduce": ("auto", choice("auto", *algorithms_for("allreduce"))),
    "allreduce_short_bytes": (2048, integer(0)),  # MPICH's MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE
    "allgather": ("auto", choice("auto", *algorithms_for("allgather"))),
    "allgather_long_bytes": (524288, integer(0)),  # MPICH's MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE
    "burst": (16, integer(1, 2**20)),  # packets made at once per message (memory; the timing does not change)
    # messages between ranks on the same node (workload.ranks_per_node > 1) bypass the network: a copy through
    # shared memory that arrives memory_latency_ns + bytes / memory_gbytes after it was posted
    "memory_latency_ns": (200.0, real(0.0, 1e9)),
    "memory_gbytes": (10.0, real(0.0, 1e6, lo_open=True)),
    # the host's MPI costs (LogGP: o, g, G; docs/mpi.md "Host model"), 0: none. Every protocol message (eager
    # data, RTS, CTS, rendezvous data) costs its sender send_overhead_ns + payload x byte_ns before it leaves,
    # a host's messages start at least gap_ns apart, and its receiver recv_overhead_ns after it arrives
    "send_overhead_ns": (0.0, real(0.0, 1e9)),
    "recv_overhead_ns": (0.0, real(0.0, 1e9)),
    "gap_ns": (0.0, real(0.0, 1e9)),
    "byte_ns": (0.0, real(0.0, 1e6)),
    # what the architect sees (docs/mpi.md): the first timeline_intervals intervals of computation and blocking
    # (32 bytes each; 0 keeps none), and the bytes between ranks on a matrix of at most comm_matrix_cells squared
    # cells (ranks grouped in consecutive runs when there are more ranks than cells)
    "timeline_intervals": (1_000_000, integer(0, 2**31)),
    "comm_matrix_cells": (1024, integer(1, 16384)),
}


def resolve_mpi(given: Any) -> dict[str, Any]:

    return check_section("mpi", given, KEYS)
