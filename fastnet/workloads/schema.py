"""The `[workload]` config section: keys, defaults and checks (registered in config.EXTRA_SECTIONS).

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

from ..checks import Check, boolean, check_section, choice, integer, real, string
from ..errors import ConfigError
from ..mpi.generators import PROGRAMS
from ..registry import WORKLOADS
from ..mpi.traces import READERS

# task placement: task i on slot i; a seeded random permutation; (mpi, trace) consecutive ranks on different routers
# or on different groups (dragonfly groups, Slim Fly subgraph groups, fat-tree pods: Topology.router_group)
MAPPINGS = ("linear", "random", "round_robin_routers", "round_robin_groups")
TRACE_FORMATS = ("auto", *READERS.names)  # the trace readers' registry (mpi/traces/__init__.py) names the formats


def _auto_or(inner: Check) -> Check:
    return lambda v: None if v == "auto" else (inner(v) and f"{inner(v)}, or \"auto\"")


def _speeds(v: Any) -> str | None:  # [[rank or node, speed], ...]
    ok = isinstance(v, list) and all(
        isinstance(x, list) and len(x) == 2 and isinstance(x[0], int) and not isinstance(x[0], bool) and x[0] >= 0
        and isinstance(x[1], (int, float)) and not isinstance(x[1], bool) and 0 < x[1] < float("inf") for x in v)
    return None if ok else "must be a list of [index, speed] pairs (index >= 0, speed > 0: 0.5 computes half as fast)"


def _tasks(v: Any) -> str | None:
    if v == "all" or (isinstance(v, int) and not isinstance(v, bool) and v >= 2):
        return None
    return "must be \"all\" or an integer >= 2"


WORKLOAD_KEYS: dict[str, tuple[Any, Check]] = {
    "kind": ("open_loop", choice(*WORKLOADS.names)),
    # task set and placement (all closed-loop kinds)
    "tasks": ("all", _tasks),  # N: tasks 0..N-1; "all": one per node slot (nodes x ranks_per_node)
    # task i -> node i, a seeded random placement, or (mpi, trace) a file of one node number per rank
    "mapping": ("linear", lambda v: None if v in MAPPINGS or (isinstance(v, str) and v.endswith(
        (".txt", ".map", ".csv"))) else "must be one of " + ", ".join(MAPPINGS) + ", or a file (.txt, .map, .csv) "
        "of one node per rank"),
    "mapping_seed": ("auto", _auto_or(integer(0, 2**63 - 1))),  # auto: sim.seed
    "jobs": ([], lambda v: None if isinstance(v, list) else "must be a list of job tables"),  # mpi, trace:
    # several programs at once on disjoint nodes, each a table of JOB_KEYS (the rest: [workload]'s, for all jobs)
    "ranks_per_node": (1, integer(1, 4096)),  # mpi, trace: ranks a node holds (their messages bypass the network)
    # seed 002 micro-kernels
    "message_bytes": (1024, integer(1)),  # S
    "messages": (10000, integer(1)),  # M (sr, gups)
    "wave": (10, integer(1)),  # W (sr; gups uses W = M)
    "compute_cycles": (0, integer(0, 2**62)),  # computation phase after every SR/GUPS wave, cycles
    "root": (0, integer(0)),  # root task of o2a / a2o
    # MPI programs (kind = "mpi", fastnet/mpi/generators.py) and trace replay (kind = "trace")
    "program": ("pingpong", choice(*PROGRAMS.names)),
    "iterations": (1, integer(1)),
    "grid": (128, integer(1)),  # fft3d: N of the N^3 grid
    "chunks": (4, integer(1)),  # sweep3d: blocks per octant
    "file": ("", string),  # trace: an OTF2 anchor file; a DUMPI .meta, .bin or ASCII file, or their directory
    "format": ("auto", choice(*TRACE_FORMATS)),
    "skip_unknown": (False, boolean),  # trace: skip (and count) MPI calls fastnet does not model, else refuse
    "compute_scale": (1.0, real(0.0, 1e9)),  # trace: gaps between calls become computation x this
    # the compute model of mpi and trace (docs/mpi.md "Computation")
    "compute": ("trace", choice("trace", "none")),  # none: no computation at all (the network's time only)
    "rank_speed": ([], _speeds),  # [[rank, speed], ...]: that rank computes at this speed (stragglers)
    "node_speed": ([], _speeds),  # [[node, speed], ...]: the ranks placed on that node compute at this speed
    "compute_noise": (0.0, real(0.0, 10.0)),  # each computation x max(0, 1 + noise x a normal draw), seeded
    "count_init": (True, boolean),  # trace: the time up to the end of each rank's MPI_Init is counted
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


# what a job of `workload.jobs` may set; a key it leaves out is [workload]'s. `nodes`: [first, stop] or
# [first, stop, step], the node numbers it may use (Python's range), or "all". A job of kind "open_loop" is
# background traffic: each of its nodes sends packets (traffic.packet_phits) to the job's other nodes, uniformly,
# at `load` phits per node per cycle (Bernoulli, as [traffic])
JOB_KEYS = ("kind", "program", "tasks", "mapping", "mapping_seed", "message_bytes", "iterations", "compute_cycles",
            "root", "grid", "chunks", "file", "format", "nodes", "load")


def _nodes(v: Any) -> str | None:
    if v == "all" or (isinstance(v, list) and len(v) in (2, 3) and integer(0)(v[0]) is None
                      and integer(1)(v[1]) is None and (len(v) == 2 or integer(1)(v[2]) is None) and v[0] < v[1]):
        return None
    return "must be \"all\" or [first, stop] or [first, stop, step] (first < stop, step >= 1)"


def resolve_jobs(out: dict[str, Any]) -> list[dict[str, Any]]:

    if out["jobs"] and out["kind"] not in ("mpi", "trace"):
        raise ConfigError("workload.jobs", f"jobs are MPI programs or traces: workload.kind must be mpi or trace "
                          f"(got {out['kind']!r})")
    jobs = []
    for i, job in enumerate(out["jobs"]):
        name = f"workload.jobs[{i}]"
        if not isinstance(job, dict):
            raise ConfigError(name, "must be a table of workload keys: " + ", ".join(JOB_KEYS))
        for k in job:
            if k not in JOB_KEYS:
                raise ConfigError(f"{name}.{k}", "is not a key of a job (set it in [workload] for every job); "
                                  "allowed: " + ", ".join(JOB_KEYS))
        own = {"nodes": ("all", _nodes), "load": (0.1, real(0.0, 1.0, lo_open=True))}
        schema = {k: WORKLOAD_KEYS[k] for k in JOB_KEYS if k not in own} | own
        given_job = {k: job.get(k, out[k]) for k in JOB_KEYS if k not in own} | {k: job.get(k, d) for k, (d, _) in
                                                                                own.items()}
        resolved = check_section(name, given_job, schema)
        if resolved["kind"] not in ("mpi", "trace", "open_loop"):
            raise ConfigError(f"{name}.kind", f"must be mpi, trace or open_loop (got {resolved['kind']!r})")
        if "load" in job and resolved["kind"] != "open_loop":
            raise ConfigError(f"{name}.load", "is the background traffic of a job of kind open_loop")
        if resolved["kind"] != "open_loop":
            del resolved["load"]
        if resolved["kind"] == "trace" and not resolved["file"]:
            raise ConfigError(f"{name}.file", "must name the trace to replay")
        jobs.append(resolved)
    kinds = [j["kind"] for j in jobs]
    if kinds.count("open_loop") > 1:
        raise ConfigError("workload.jobs", "at most one job of kind open_loop (background traffic); give it all "
                          "the nodes that send it")
    if jobs and kinds.count("open_loop") == len(jobs):
        raise ConfigError("workload.jobs", "needs an MPI program or trace beside the open_loop job (background "
                          "traffic alone is [traffic] with workload.kind = \"open_loop\")")
    return jobs


def resolve_workload(given: Any) -> dict[str, Any]:
    """Fill in defaults, check each value and the relations between them."""

    out = check_section("workload", given, WORKLOAD_KEYS)
    if out["kind"] == "sr" and out["wave"] > out["messages"]:
        raise ConfigError("workload.wave", f"must be <= workload.messages = {out['messages']} (got {out['wave']})")
    if out["kind"] == "trace" and not out["file"]:
        raise ConfigError("workload.file", "must name the trace to replay (an OTF2 anchor file; a DUMPI .meta, "
                          ".bin or ASCII file, or their directory)")
    if out["cycle_ns"] != "auto" and out["link_gbps"] != "auto":
        raise ConfigError("workload.cycle_ns", "give either cycle_ns or link_gbps (one sets the other through "
                          "traffic.phit_bytes), not both")
    out["jobs"] = resolve_jobs(out)
    return out

