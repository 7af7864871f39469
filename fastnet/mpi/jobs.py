"""Several jobs in one run (`[workload] jobs = [...]`): their programs side by side as one Trace.

Job j's ranks follow job j-1's; each job's MPI_COMM_WORLD and sub-communicators become communicators of their own
(so a job never matches another job's messages), and each trace's clock starts at its own first call. The merged
Trace lowers and runs like any other; results are summed per job (mpi/results.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np

from .calls import Trace

UNKNOWN_COMM = 10**9  # a communicator a job's trace names but never defines: lowering reports it


def merge(traces: list[Trace]) -> tuple[Trace, np.ndarray]:
    """(the jobs' programs as one Trace, int64[R] the job of every rank)."""
    ranks, comms, files, job_of = [], {}, [], []
    next_id = 1  # 0 stays the world of all jobs' ranks, which no job uses
    for j, tr in enumerate(traces):
        offset = len(ranks)
        ids = {}
        for cid in sorted(tr.comms):
            ids[cid] = next_id
            comms[next_id] = tuple(offset + w for w in tr.comms[cid])
            next_id += 1
        starts = [c.start_ns for calls in tr.ranks for c in calls[:1] if not math.isnan(c.start_ns)]
        origin = min(starts, default=0.0)
        for r, calls in enumerate(tr.ranks):
            ranks.append([dataclasses.replace(c, comm=ids.get(c.comm, UNKNOWN_COMM + c.comm),
                                              start_ns=c.start_ns - origin, end_ns=c.end_ns - origin)
                          for c in calls])
            files.append(f"job {j}: {tr.where(r)}")
        job_of += [j] * tr.n_ranks
    not_recorded = dict(sum((Counter(tr.not_recorded) for tr in traces), Counter()))
    cut_off = [file for tr in traces for file in tr.cut_off]
    return (Trace(ranks, comms, files, source="jobs", not_recorded=not_recorded, cut_off=cut_off),
            np.asarray(job_of, dtype=np.int64))
