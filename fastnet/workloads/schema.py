"""The `[workload]` config section: the keys of the closed-loop kinds here, with their defaults and checks; those of
MPI programs and trace replays, and the section's resolver (config.EXTRA_SECTIONS), in mpi/schema.py, which adds its
keys to these.

Example (seed 002's SR10 on 32 tasks; every other key at its default):

    [workload]
    kind = "sr"
    message_bytes = 1024      # S
    messages = 10000          # M
    wave = 10                 # W

and seed 000's Graph500 on Table IV's dragonfly (4 KB packets: [traffic] phit_bytes = 512, packet_phits = 8):

    [workload]
    kind = "graph500"
    scale = 26                # s
    edgefactor = 16           # f_e
    coalescing = 256          # c_s
    query_time_ns = 1.5       # t_q (Altamira, Table III)
    link_gbps = 40            # one phit per cycle: the cycle is phit_bytes * 8 / link_gbps ns

Keys that only one workload uses are accepted (and ignored) by the others, so a sweep can switch `kind` alone.
"""

from __future__ import annotations

from typing import Any

from ..checks import Check, boolean, check_section, choice, integer, real
from ..errors import ConfigError
from ..registry import WORKLOADS

# task placement: task i on slot i; a seeded random permutation; (mpi, trace) consecutive ranks on different routers
# or on different groups (dragonfly groups, Slim Fly subgraph groups, fat-tree pods: Topology.router_group)
MAPPINGS = ("linear", "random", "round_robin_routers", "round_robin_groups")


def _auto_or(inner: Check) -> Check:
    return lambda v: None if v == "auto" else (inner(v) and f"{inner(v)}, or \"auto\"")


def _tasks(v: Any) -> str | None:
    if v == "all" or (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
        return None
    return "must be \"all\" or an integer >= 1"


WORKLOAD_KEYS: dict[str, tuple[Any, Check]] = {
    "kind": ("open_loop", choice(*WORKLOADS.names)),
    # task set and placement (all closed-loop kinds)
    "tasks": ("all", _tasks),  # N: tasks 0..N-1; "all": one per node slot (nodes x ranks_per_node)
    # task i -> node i, a seeded random placement, or (mpi, trace) a file of one node number per rank
    "mapping": ("linear", lambda v: None if v in MAPPINGS or (isinstance(v, str) and v.endswith(
        (".txt", ".map", ".csv"))) else "must be one of " + ", ".join(MAPPINGS) + ", or a file (.txt, .map, .csv) "
        "of one node per rank"),
    "mapping_seed": ("auto", _auto_or(integer(0, 2**63 - 1))),  # auto: sim.seed
    "ranks_per_node": (1, integer(1, 4096)),  # mpi, trace: ranks a node holds (their messages bypass the network)
    # seed 002 micro-kernels
    "message_bytes": (1024, integer(0)),  # S (0: an MPI program's header-only messages; seed 002's kernels need 1)
    "messages": (10000, integer(1)),  # M (sr, gups)
    "wave": (10, integer(1)),  # W (sr; gups uses W = M)
    "compute_cycles": (0, integer(0, 2**62)),  # computation phase after every SR/GUPS wave, cycles
    "root": (0, integer(0)),  # root task of o2a / a2o
    # seed 000 Graph500
    "variant": ("paper", choice("paper", "fogsim")),  # equations and node model of the paper, or FOGSim v4's
    "scale": (26, integer(1, 40)),  # s
    "edgefactor": (16, integer(1)),  # f_e
    "coalescing": (256, integer(1)),  # c_s: queries per message
    "query_time_ns": (1.5, real(0.0, 1e6, lo_open=True)),  # t_q
    "link_gbps": ("auto", _auto_or(real(0.0, 1e6, lo_open=True))),  # auto: 40, or what cycle_ns implies
    "cycle_ns": ("auto", _auto_or(real(0.0, 1e9, lo_open=True))),  # t_c; auto: phit_bytes * 8 / link_gbps
    "root_degree": ("auto", _auto_or(integer(1))),  # d_r; auto: drawn from the lognormal of eqs 18-19
    "root_task": ("auto", _auto_or(integer(0))),  # host of the root vertex; auto: a seeded random task
    "max_levels": ("auto", _auto_or(integer(1, 4096))),  # auto: 64 (paper), 9 (fogsim, GraphMaxLevels)
    "backlog_blocks_allreduce": ("auto", lambda v: None if v == "auto" else boolean(v)),  # auto: paper yes, fogsim no
}


def check_workload(out: dict[str, Any]) -> None:
    """The relations between the keys above, once each value is checked."""
    if out["kind"] == "sr" and out["wave"] > out["messages"]:
        raise ConfigError("workload.wave", f"must be <= workload.messages = {out['messages']} (got {out['wave']})")
    if out["cycle_ns"] != "auto" and out["link_gbps"] != "auto":
        raise ConfigError("workload.cycle_ns", "give either cycle_ns or link_gbps (one sets the other through "
                          "traffic.phit_bytes), not both")


def default_workload() -> dict[str, Any]:
    """The `[workload]` of a config without one: open-loop traffic, every key above at its default."""
    return check_section("workload", {}, WORKLOAD_KEYS)

