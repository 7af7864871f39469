"""An MPI run's results (scalars, per-rank and per-call-kind arrays for results.to_dataset) and, when ranks wait
forever, which ones and where."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..units import timing
from ..workloads.state import TK_FINISH, WC_END
from .state import (
    CALLS, OP_CALL, OP_INDEX, RK_COMPUTE_CYC, RK_PC, RK_STATE, RK_WAIT_CYC, RS_COLL, RS_DONE, RS_WAIT, TL_CALL,
    TL_END, TL_RANK, TL_START, WM_BYTES, WM_CLAT_SUM, WM_CONTROL, WM_DLAT_SUM, WM_TIMELINE, WM_TRANSFERS, WM_UNM_SUM,
)


def latency(wc: Any, col: int) -> tuple[float, float]:
    """Mean and maximum of the latency statistic at wc[col:col + 3] (sum, maximum, count); NaN when empty."""
    n = int(wc[col + 2])
    return (float(wc[col]) / n, float(wc[col + 1])) if n else (float("nan"), float("nan"))


UNRECORDED_WARNING = "the tracer did not record some calls the program made, so only part of the run is replayed: "
CUT_OFF_WARNING = ("rank files end without the tracer's closing footer (a crash, or a copy cut short), so their "
                   "ranks' last calls may be missing: ")
SKIPPED_WARNING = ("calls fastnet does not model were skipped (workload.skip_unknown); their time is replayed as "
                   "computation: ")


def _call_cycles(wl: Any) -> np.ndarray:
    """Rank-cycles in each kind of blocking call, and under "compute" the ranks' computation."""
    out = wl.call_time.copy()
    out[CALLS.index("compute")] = wl.tk[:, RK_COMPUTE_CYC].sum()
    return out


def mpi_values(s: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    from ..kernels.state import S_INJECTED_PHITS

    wl, prog = s.workload, s.program
    w = s.cfg["workload"]
    wc = wl.wc
    cycles = int(wc[WC_END])
    cycle_ns = timing(s.cfg).cycle_ns
    lat_mean, lat_max = latency(wc, WM_DLAT_SUM)
    ctl_mean, ctl_max = latency(wc, WM_CLAT_SUM)
    unm_mean, unm_max = latency(wc, WM_UNM_SUM)
    values: dict[str, Any] = {
        "execution_cycles": cycles,
        "execution_ns": cycles * cycle_ns,
        "cycle_ns": cycle_ns,
        "mpi_calls": int(prog.call_counts.sum()),
        "mpi_calls_skipped": int(sum(prog.skipped.values())),
        "messages": int(wc[WM_TRANSFERS]),
        "bytes": int(wc[WM_BYTES]),
        "control_messages": int(wc[WM_CONTROL]),
        "message_latency_mean": lat_mean,
        "message_latency_max": lat_max,
        "control_latency_mean": ctl_mean,
        "control_latency_max": ctl_max,
        "unmatched_cycles_mean": unm_mean,
        "unmatched_cycles_max": unm_max,
        "network_usage_phits_per_node_cycle": float(s.state.sc[S_INJECTED_PHITS]) / (s.net.n_nodes * max(cycles, 1)),
        "task_finish_cycle": wl.tk[:, TK_FINISH].copy(),
        "rank_compute_cycles": wl.tk[:, RK_COMPUTE_CYC].copy(),
        "rank_wait_cycles": wl.tk[:, RK_WAIT_CYC].copy(),
        "call_count": prog.call_counts.copy(),
        "call_cycles": _call_cycles(wl),
        "call_message_latency_histogram": wl.msg_hist.copy(),
        "comm_matrix_bytes": wl.comm_matrix.copy(),
    }
    kept = min(int(wc[WM_TIMELINE]), len(wl.timeline))
    tl = wl.timeline[:kept]
    tl = tl[np.lexsort((tl[:, TL_START], tl[:, TL_RANK]))]  # rank by rank, in time order
    values.update(timeline_rank=tl[:, TL_RANK], timeline_call=tl[:, TL_CALL], timeline_start=tl[:, TL_START],
                  timeline_end=tl[:, TL_END])
    cells = np.arange(wl.comm_matrix.shape[0]) * wl.comm_cell
    coords: dict[str, Any] = {"task": np.arange(wl.n_tasks), "task_node": ("task", wl.task_node.copy()),
                              "call": np.array(CALLS), "interval": np.arange(kept), "rank_from": cells,
                              "rank_to": cells}
    if prog.task_job is not None:  # workload.jobs: each job's own time, from cycle 0 to its last rank's return
        job, n_jobs = prog.task_job, len(w["jobs"])  # a background job has no rank: its entries -1 or 0
        coords.update(job=np.arange(n_jobs), task_job=("task", job.copy()))
        finish = np.full(n_jobs, -1, np.int64)
        np.maximum.at(finish, job, wl.tk[:, TK_FINISH])
        values.update({
            "job_execution_cycles": finish,
            "job_execution_ns": finish * cycle_ns,
            "job_ranks": np.bincount(job, minlength=n_jobs),
            "job_compute_cycles": np.bincount(job, wl.tk[:, RK_COMPUTE_CYC], minlength=n_jobs).astype(np.int64),
            "job_wait_cycles": np.bincount(job, wl.tk[:, RK_WAIT_CYC], minlength=n_jobs).astype(np.int64),
        })
    attrs: dict[str, Any] = {"workload": w["kind"], "timeline_dropped": int(wc[WM_TIMELINE]) - kept,
                             "comm_matrix_ranks_per_cell": int(wl.comm_cell)}
    if w["kind"] == "mpi":
        attrs["mpi_program"] = w["program"]
    else:
        attrs["trace"] = str(w["file"])
    warnings = []
    if prog.skipped:
        attrs["mpi_skipped_calls"] = ", ".join(f"{k} x{v}" for k, v in sorted(prog.skipped.items()))
        warnings.append(SKIPPED_WARNING + attrs["mpi_skipped_calls"])
    if prog.not_recorded:  # the tracer saw these calls but did not write them: a fragment of the run is replayed
        attrs["trace_calls_not_recorded"] = ", ".join(f"{k} x{v}" for k, v in sorted(prog.not_recorded.items()))
        warnings.append(UNRECORDED_WARNING + attrs["trace_calls_not_recorded"])
    if prog.cut_off:
        attrs["trace_files_cut_off"] = ", ".join(prog.cut_off)
        warnings.append(CUT_OFF_WARNING + attrs["trace_files_cut_off"])
    attrs["warnings"] = warnings  # a list in every MPI run's dataset, empty when there is none
    return values, coords, attrs


def stall_report(s: Any, limit: int = 4) -> str:
    """The ranks that wait forever: rank, call and its index in the rank's program."""
    wl = s.workload
    files = getattr(s.program, "files", None)
    out = []
    for r in range(wl.n_tasks):
        state = wl.tk[r, RK_STATE]
        if state not in (RS_WAIT, RS_COLL):
            continue
        pc = int(wl.tk[r, RK_PC])
        op = wl.ops[pc]
        call = CALLS[int(op[OP_CALL])]
        where = files[r] if files else "its program"
        out.append(f"rank {r} waits forever in MPI_{call.capitalize()} (call {int(op[OP_INDEX])} of {where})")
    done = int((wl.tk[:, RK_STATE] == RS_DONE).sum())
    head = "; ".join(out[:limit]) + (f"; and {len(out) - limit} more" if len(out) > limit else "")
    return f"{head} ({done} of {wl.n_tasks} ranks finished)"
