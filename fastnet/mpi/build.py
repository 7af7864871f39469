"""Compile `[workload] kind = "mpi" | "trace"` and `[mpi]` into the `Mpi` tuple the kernels read."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..build.network import Network
from ..errors import ConfigError
from ..kernels.rng import seed_streams
from ..kernels.state import HIST_BINS
from ..units import timing
from ..workloads.placement import place
from ..workloads.state import (
    MS_NEXT, TK_FINISH, inbox_size, TK_QHEAD, TK_QTAIL, TK_SPOS, WC_END, WC_FREE_COUNT, WC_FREE_HEAD, _free_list,
)
from ..registry import W_MPI
from .calls import Trace
from .collectives import largest_message
from .jobs import merge
from .program import Options, Program, ProgramError, lower
from .schema import resolve_mpi
from .state import (
    CALLS, MAX_FANOUT, Mpi, N_MSG, N_RK, N_RQ, N_TL, N_WM, OP_ARG, OP_BYTES, OP_CODE, OP_COLL, OP_COMM, OP_COMPUTE,
    OP_IRECV, OP_ISEND, RK_BLOCK_T, RK_COP, RK_EARLY, RK_HQHEAD, RK_HQTAIL, RK_PC, RK_QHEAD, RK_QTAIL, RK_RHEAD,
    RK_RTAIL, WM_READY,
)


def mpi_section(cfg: dict[str, Any]) -> dict[str, Any]:
    return cfg["mpi"] if "mpi" in cfg else resolve_mpi({})


def load_trace(w: dict[str, Any], n_nodes: int) -> Trace:
    """The program of a `[workload]`: a built-in generator's, or a trace read from its file."""
    if w["kind"] == "mpi":
        from .generators import ROOT_PROGRAMS, generate

        n = n_nodes * w["ranks_per_node"] if w["tasks"] == "all" else w["tasks"]
        if w["program"] == "pingpong" and n < 2:
            raise ConfigError("workload.tasks", "pingpong needs 2 ranks")
        if w["program"] in ROOT_PROGRAMS and w["root"] >= n:
            raise ConfigError("workload.root", f"must name one of the program's {n} ranks (got {w['root']})")
        return generate(w["program"], n, w)
    from .traces import read_trace

    if not Path(w["file"]).exists():  # the config names it: say which key (a file that is there but bad is the trace's)
        raise ConfigError("workload.file", f"no such file or directory: {w['file']}")
    trace = read_trace(w["file"], w["format"])
    if w["tasks"] not in ("all", trace.n_ranks):
        raise ConfigError("workload.tasks", f"a trace's ranks are its own ({trace.n_ranks} in {w['file']}): leave "
                                            f"tasks at \"all\" (got {w['tasks']})")
    return trace


def compute_times(w: dict[str, Any], task_node: np.ndarray, n_nodes: int) -> np.ndarray:
    """Each rank's time per unit of computation: 1 / its speed (`rank_speed`, else its node's `node_speed`)."""
    R = len(task_node)
    node_time = np.ones(n_nodes)
    for node, speed in w["node_speed"]:
        if node >= n_nodes:
            raise ConfigError("workload.node_speed", f"node {node} is not below the network's {n_nodes} nodes")
        node_time[node] = 1.0 / speed
    out = node_time[task_node]
    for rank, speed in w["rank_speed"]:
        if rank >= R:
            raise ConfigError("workload.rank_speed", f"rank {rank} is not below the program's {R} ranks")
        out[rank] = 1.0 / speed
    return out


class Background(NamedTuple):
    """A job of kind open_loop: these nodes send each other packets at `load` (traffic/patterns.py PAT_JOB)."""
    job: int  # its index in workload.jobs
    nodes: np.ndarray  # int64[B] sorted
    load: float


def load_jobs(w: dict[str, Any], net: Network, seed: int
              ) -> tuple[Trace, np.ndarray, np.ndarray | None, Background | None]:
    """(the program, each rank's node, each rank's job or None, the background traffic or None): one program, or
    `workload.jobs` side by side, each placed on its own `nodes` (a node holds at most ranks_per_node ranks of all
    jobs together, and a background node none)."""
    N, k = net.n_nodes, w["ranks_per_node"]
    if not w["jobs"]:
        trace = load_trace(w, N)
        return trace, place(w, trace.n_ranks, net, seed), None, None
    traces, nodes, ids, held, background = [], [], [], np.zeros(N, np.int64), None
    for i, job in enumerate(w["jobs"]):
        where = np.arange(N) if job["nodes"] == "all" else np.arange(*job["nodes"])
        if where[-1] >= N:  # a range is not cut down silently: the job would run on fewer nodes than it says
            raise ConfigError(f"workload.jobs[{i}].nodes", f"node {int(where[-1])} is past the network's last node "
                              f"{N - 1}: give a range within 0..{N - 1} (or \"all\")")
        if job["kind"] == "open_loop":
            if len(where) < 2:
                raise ConfigError(f"workload.jobs[{i}].nodes", "background traffic needs at least 2 nodes of the "
                                  f"network's {N}")
            background = Background(i, where, job["load"])
            continue
        jw = {**w, **job}
        try:
            trace = load_trace(jw, len(where))
            nodes.append(place(jw, trace.n_ranks, net, seed + i, where))
        except ConfigError as e:
            raise ConfigError(f"workload.jobs[{i}].{e.field.split('.')[-1]}", str(e).split(": ", 1)[1]) from None
        held += np.bincount(nodes[-1], minlength=N)
        if held.max() > k:
            raise ConfigError(f"workload.jobs[{i}].nodes", f"node {int(held.argmax())} would hold {int(held.max())} "
                              f"ranks of the jobs, more than workload.ranks_per_node = {k}: give jobs disjoint nodes")
        traces.append(trace)
        ids.append(i)
    if background is not None and held[background.nodes].any():
        busy = int(background.nodes[np.flatnonzero(held[background.nodes])[0]])
        raise ConfigError(f"workload.jobs[{background.job}].nodes", f"node {busy} also holds MPI ranks: give the "
                          "background traffic nodes of its own")
    trace, task_job = merge(traces)
    return trace, np.concatenate(nodes), np.asarray(ids, np.int64)[task_job], background


def timeline_bound(prog: Program) -> int:
    """The most intervals the run can log: one per computation or blocking op (isend and irecv never block) of
    every rank."""
    per_op = (prog.ops[:, OP_CODE] != OP_ISEND) & (prog.ops[:, OP_CODE] != OP_IRECV)
    cum = np.concatenate(([0], np.cumsum(per_op)))
    return int((cum[prog.op_end] - cum[prog.op_begin]).sum())


def packets_per_message(prog: Program, header_bytes: int, packet_bytes: int, burst: int) -> int:
    """The most packets `packetise` makes at once for one message: its burst, or fewer when no message of the
    program has that many (the engine keeps this many free packets per rank: a barrier's messages are one packet,
    so its ranks need one each rather than `burst`)."""
    ops = prog.ops
    coll = ops[:, OP_CODE] == OP_COLL
    payload = np.where(coll, largest_message(ops[:, OP_ARG], prog.comm_size[ops[:, OP_COMM]], ops[:, OP_BYTES]),
                       ops[:, OP_BYTES])
    largest = max(int(payload.max(initial=0)), int(prog.counts.max(initial=0))) + header_bytes
    return max(1, min(burst, -(-largest // packet_bytes)))


def expected_cycles(prog: Program, rank_time: np.ndarray) -> int:
    """The cycles the run is expected to take (the progress bar's total): per rank its computation (at its speed,
    without noise) plus, for a trace, the time its recorded clock spent in MPI calls (the trace's span, with the
    computation as this run scales it); the longest rank's. A generator's program records no time: then it is the
    busiest rank's computation, a lower bound."""
    ops = prog.ops
    d = np.where(ops[:, OP_CODE] == OP_COMPUTE, ops[:, OP_ARG], 0)
    cum = np.concatenate(([0], np.cumsum(d)))
    per_rank = (cum[prog.op_end] - cum[prog.op_begin]) * rank_time
    if prog.recorded_wait is not None:
        per_rank = per_rank + prog.recorded_wait
    return int(per_rank.max(initial=0))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a trace is read and lowered: the calls make millions of objects
    that all live until lowering ends, and each of the collector's passes walked them again (0.5 s of a 144-rank,
    2.3 M-call trace's 4.4 s of preparation). What it would have freed is freed on its first pass after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def lowered(cfg: dict[str, Any], net: Network, seed: int) -> tuple[Program, np.ndarray]:
    """The run's program (every job's ranks, lowered) and the node of each rank."""
    w, m = cfg["workload"], mpi_section(cfg)
    opt = Options(cycle_ns=timing(cfg).cycle_ns, compute_scale=w["compute_scale"], compute=w["compute"],
                  count_init=w["count_init"], skip_unknown=w["skip_unknown"],
                  allreduce=m["allreduce"], allreduce_short_bytes=m["allreduce_short_bytes"],
                  allgather=m["allgather"], allgather_long_bytes=m["allgather_long_bytes"])
    with _collector_paused():
        trace, task_node, task_job, background = load_jobs(w, net, seed)
        try:
            prog = lower(trace, opt)
        except ProgramError as e:
            raise ConfigError("workload.file" if w["kind"] == "trace" else "workload.program", str(e)) from None
    prog.task_job = task_job
    prog.background = background
    return prog, task_node


def table_rows(cfg: dict[str, Any], net: Network) -> dict[str, int]:
    """The lengths of an MPI run's tables, which only its lowered program tells (a sweep sizes its store by the
    longest any point fills): ranks, comm-matrix cells, jobs, timeline intervals (the most it may log)."""
    prog, task_node = lowered(cfg, net, cfg["sim"]["seed"])
    m, R = mpi_section(cfg), len(task_node)
    side = comm_cells(R, m)[1]
    rows = {"task": R, "rank_from": side, "rank_to": side, "interval": timeline_rows(prog, m)}
    if prog.task_job is not None:
        rows["job"] = len(cfg["workload"]["jobs"])
    return rows


def comm_cells(ranks: int, m: dict[str, Any]) -> tuple[int, int]:
    """(ranks per side of a comm-matrix cell, cells per side of the matrix: at most mpi.comm_matrix_cells)."""
    cell = -(-ranks // m["comm_matrix_cells"])
    return cell, -(-ranks // cell)


def timeline_rows(prog: Program, m: dict[str, Any]) -> int:
    return min(m["timeline_intervals"], timeline_bound(prog))


def compile_mpi(cfg: dict[str, Any], net: Network, seed: int) -> tuple[Mpi, Program]:
    w, m, traffic = cfg["workload"], mpi_section(cfg), cfg["traffic"]
    packet_bytes = traffic["packet_phits"] * traffic["phit_bytes"]
    cycle_ns = timing(cfg).cycle_ns
    prog, task_node = lowered(cfg, net, seed)
    R = len(task_node)
    cell, side = comm_cells(R, m)
    rank_time = compute_times(w, task_node, net.n_nodes)
    prog.expected = expected_cycles(prog, rank_time)
    inbox = inbox_size(net.n_nodes, net.n_ports, cfg["router"]["ejection"])
    headroom = inbox + MAX_FANOUT + 16
    pool = 2 * headroom + 16
    msg = np.zeros((pool, N_MSG), np.int64)
    msg[:, MS_NEXT] = _free_list(pool)
    tk = np.zeros((R, N_RK), np.int64)
    tk[:, [TK_QHEAD, TK_QTAIL, TK_SPOS, TK_FINISH, RK_BLOCK_T, RK_COP, RK_EARLY, RK_QHEAD, RK_QTAIL, RK_RHEAD,
           RK_RTAIL, RK_HQHEAD, RK_HQTAIL]] = -1
    tk[:, RK_PC] = prog.op_begin
    wc = np.zeros(N_WM, np.int64)
    wc[WC_FREE_HEAD], wc[WC_FREE_COUNT], wc[WC_END] = 0, pool, -1
    wc[WM_READY] = R
    mpi = Mpi(
        kind=W_MPI, n_tasks=R, packet_phits=traffic["packet_phits"], phit_bytes=traffic["phit_bytes"],
        header_bytes=m["header_bytes"], eager_bytes=m["eager_bytes"], msg_headroom=headroom,
        packets_per_message=packets_per_message(prog, m["header_bytes"], packet_bytes, m["burst"]),
        max_requests=prog.max_requests, task_node=task_node, ops=prog.ops,
        op_begin=prog.op_begin, op_end=prog.op_end, req_list=prog.req_list, counts=prog.counts,
        comm_off=prog.comm_off, comm_size=prog.comm_size, comm_members=prog.comm_members, rc_off=prog.rc_off,
        rc_comm=prog.rc_comm, rc_me=prog.rc_me, tk=tk, rq=np.zeros((R * prog.max_requests, N_RQ), np.int64),
        msg=msg, wc=wc, senders=np.zeros(R, np.int64), inbox=np.zeros(inbox, np.int64),
        ready=np.arange(R - 1, -1, -1, dtype=np.int64),  # rank 0 runs first
        heap_t=np.zeros(2 * R + pool, np.int64), heap_r=np.zeros(2 * R + pool, np.int64), seen=np.zeros(R, np.int64),
        call_time=np.zeros(len(CALLS), np.int64), msg_hist=np.zeros((len(CALLS), HIST_BINS), np.int64),
        timeline=np.zeros((timeline_rows(prog, m), N_TL), np.int64),
        comm_matrix=np.zeros((side, side), np.int64), comm_cell=cell,
        scratch_peer=np.zeros(MAX_FANOUT, np.int64), scratch_bytes=np.zeros(MAX_FANOUT, np.int64),
        mem_latency=int(round(m["memory_latency_ns"] / cycle_ns)), mem_bytes_per_cycle=m["memory_gbytes"] * cycle_ns,
        compute_model=bool((rank_time != 1.0).any() or w["compute_noise"] > 0), rank_time=rank_time,
        compute_noise=float(w["compute_noise"]), rank_rng=seed_streams(seed, R, 0xC0A1),
        o_s=int(round(m["send_overhead_ns"] / cycle_ns)), o_r=int(round(m["recv_overhead_ns"] / cycle_ns)),
        g=int(round(m["gap_ns"] / cycle_ns)), G=m["byte_ns"] / cycle_ns,
    )
    return mpi, prog
