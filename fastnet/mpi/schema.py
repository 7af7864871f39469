"""The `[mpi]` config section: how MPI is implemented (protocols, collective algorithms); what runs is in
`[workload]` (kind = "mpi" or "trace"), whose MPI keys are here too (PROGRAM_KEYS, added to the closed-loop
kinds' keys of workloads/schema.py, and the jobs of several programs at once). Both sections are registered in
config.EXTRA_SECTIONS; docs/mpi.md explains each key.

    [mpi]
    eager_bytes = 8192          # payloads up to this size go eagerly, larger ones by rendezvous (RTS, CTS, data)
    header_bytes = 32           # envelope added to every message on the wire (BG/Q's packet header, seed 003)
    allreduce = "auto"          # auto: recursive_doubling up to allreduce_short_bytes, rabenseifner above
"""

from __future__ import annotations

from typing import Any

from ..checks import Check, boolean, check_section, choice, integer, real, string
from ..errors import ConfigError
from ..registry import algorithms_for
from ..workloads.schema import WORKLOAD_KEYS, check_workload
from .generators import PROGRAMS
from .traces import READERS

TRACE_FORMATS = ("auto", *READERS.names)  # the trace readers' registry (mpi/traces/__init__.py) names the formats

KEYS = {
    "eager_bytes": (8192, integer(0)),
    "header_bytes": (32, integer(0)),
    "allreduce": ("auto", choice("auto", *algorithms_for("allreduce"))),
    "allreduce_short_bytes": (2048, integer(0)),  # MPICH's MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE
    "allgather": ("auto", choice("auto", *algorithms_for("allgather"))),
    "allgather_long_bytes": (524288, integer(0)),  # MPICH's MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE
    "burst": (16, integer(1, 2**20)),  # packets made at once per message (memory; and the order nodes inject in)
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


def _speeds(v: Any) -> str | None:  # [[rank or node, speed], ...]
    ok = isinstance(v, list) and all(
        isinstance(x, list) and len(x) == 2 and isinstance(x[0], int) and not isinstance(x[0], bool) and x[0] >= 0
        and isinstance(x[1], (int, float)) and not isinstance(x[1], bool) and 0 < x[1] < float("inf") for x in v)
    return None if ok else "must be a list of [index, speed] pairs (index >= 0, speed > 0: 0.5 computes half as fast)"


# `[workload]` keys of kind = "mpi" and "trace" (the others ignore them, so a sweep can switch `kind` alone)
PROGRAM_KEYS: dict[str, tuple[Any, Check]] = {
    "jobs": ([], lambda v: None if isinstance(v, list) else "must be a list of job tables"),  # mpi, trace:
    # several programs at once on disjoint nodes, each a table of JOB_KEYS (the rest: [workload]'s, for all jobs)
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
}
ALL_KEYS = {**WORKLOAD_KEYS, **PROGRAM_KEYS}  # the whole [workload] section, every kind's keys


# what a job of `workload.jobs` may set; a key it leaves out is [workload]'s. `nodes`: [first, stop] or
# [first, stop, step], the node numbers it may use (Python's range), or "all". A job of kind "open_loop" is
# background traffic: each of its nodes sends packets (traffic.packet_phits) to the job's other nodes, uniformly,
# at `load` phits per node per cycle (Bernoulli, as [traffic])
JOB_KEYS = ("kind", "program", "tasks", "mapping", "mapping_seed", "message_bytes", "iterations", "compute_cycles",
            "root", "grid", "chunks", "file", "format", "nodes", "load")
BACKGROUND_KEYS = ("kind", "nodes", "load")  # a job of kind open_loop: the only keys it takes


def _nodes(v: Any) -> str | None:
    if v == "all" or (isinstance(v, list) and len(v) in (2, 3) and integer(0)(v[0]) is None
                      and integer(1)(v[1]) is None and (len(v) == 2 or integer(1)(v[2]) is None) and v[0] < v[1]):
        return None
    return "must be \"all\" or [first, stop] or [first, stop, step] (first < stop, step >= 1)"


def _check_trace_file(name: str, section: dict[str, Any]) -> None:
    """A trace, of the workload or of one of its jobs, names its file."""
    if section["kind"] == "trace" and not section["file"]:
        raise ConfigError(f"{name}.file", "must name the trace to replay (an OTF2 anchor file; a DUMPI .meta, .bin "
                          "or ASCII file, or their directory)")


def resolve_jobs(out: dict[str, Any]) -> list[dict[str, Any]]:
    """`workload.jobs`, each job's keys checked and the workload's filled in where the job leaves them."""
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
        schema = {k: ALL_KEYS[k] for k in JOB_KEYS if k not in own} | own
        given_job = {k: job.get(k, out[k]) for k in JOB_KEYS if k not in own} | {k: job.get(k, d) for k, (d, _) in
                                                                                own.items()}
        resolved = check_section(name, given_job, schema)
        if resolved["kind"] not in ("mpi", "trace", "open_loop"):
            raise ConfigError(f"{name}.kind", f"must be mpi, trace or open_loop (got {resolved['kind']!r})")
        if "load" in job and resolved["kind"] != "open_loop":
            raise ConfigError(f"{name}.load", "is the background traffic of a job of kind open_loop")
        if resolved["kind"] == "open_loop":  # its packets are [traffic]'s: a program's keys would be ignored
            extra = next((k for k in job if k not in BACKGROUND_KEYS), None)
            if extra is not None:
                raise ConfigError(f"{name}.{extra}", "is not a key of background traffic (a job of kind open_loop "
                                  "takes nodes and load; its packets are traffic.packet_phits long)")
            resolved = {k: resolved[k] for k in BACKGROUND_KEYS}  # so that a resolved config resolves again
        else:
            del resolved["load"]
        _check_trace_file(name, resolved)
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
    """The `[workload]` section: fill in defaults, check each value and the relations between them."""

    out = check_section("workload", given, ALL_KEYS)
    check_workload(out)
    _check_trace_file("workload", out)
    out["jobs"] = resolve_jobs(out)
    return out
