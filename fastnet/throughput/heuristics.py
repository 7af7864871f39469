"""Hoefler's method, Jain's method and single-path water-filling: numba kernels over the Instance arrays.

All three work on normalised shares: a path (sub-flow) of a flow with weight w counts w on every link it crosses,
and receives w times the per-unit share. With unit weights this is exactly seed 001 §II:

- HM: u_l = number of sub-flows crossing link l; a sub-flow gets min over its links of C_l / u_l; a flow gets the
  sum over its k sub-flows.
- JM: HM repeated on the remaining capacity. Each round, every unsaturated path gets min_l R_l / u_l, where R_l is
  the remaining capacity and u_l counts unsaturated paths only; R_l decreases by what the round assigned; a link
  whose R_l reaches 0 saturates every path crossing it. The link with the smallest R_l / u_l always reaches 0, so
  each round saturates at least one link and JM ends within L rounds.
- Water-filling (max-min fairness for one path per flow; Bertsekas & Gallager): all unsaturated flows rise
  together until a link fills; flows crossing a full link are saturated at that level. Cross-checks the LP.

"Reaches 0" is decided with a relative tolerance `SAT_TOL` of the link's capacity, and the minimising link is
saturated explicitly, so rounding never adds a round of 1e-17 increments.
"""

from __future__ import annotations

import numpy as np

from ..kernels._jit import jit_alloc
from .instance import Instance

SAT_TOL = 1e-12


@jit_alloc
def _usage(n_links, path_ptr, link_ptr, links, weight, active):
    """u_l: summed weight of the active paths crossing each link."""
    u = np.zeros(n_links)
    for f in range(len(path_ptr) - 1):
        w = weight[f]
        for p in range(path_ptr[f], path_ptr[f + 1]):
            if active[p]:
                for e in range(link_ptr[p], link_ptr[p + 1]):
                    u[links[e]] += w
    return u


@jit_alloc
def hm_kernel(capacity, path_ptr, link_ptr, links, weight):
    """Path rates of Hoefler's method."""
    n_paths = len(link_ptr) - 1
    active = np.ones(n_paths, dtype=np.bool_)
    u = _usage(len(capacity), path_ptr, link_ptr, links, weight, active)
    rate = np.zeros(n_paths)
    for f in range(len(path_ptr) - 1):
        for p in range(path_ptr[f], path_ptr[f + 1]):
            share = np.inf
            for e in range(link_ptr[p], link_ptr[p + 1]):
                s = capacity[links[e]] / u[links[e]]
                if s < share:
                    share = s
            rate[p] = weight[f] * share
    return rate


@jit_alloc
def jm_kernel(capacity, path_ptr, link_ptr, links, weight):
    """Path rates of Jain's method and the number of rounds it took."""
    n_links = len(capacity)
    n_flows = len(path_ptr) - 1
    n_paths = len(link_ptr) - 1
    path_w = np.empty(n_paths)
    for f in range(n_flows):
        for p in range(path_ptr[f], path_ptr[f + 1]):
            path_w[p] = weight[f]
    remaining = capacity.copy()
    full = np.zeros(n_links, dtype=np.bool_)
    for l in range(n_links):
        full[l] = remaining[l] <= 0.0
    rate = np.zeros(n_paths)
    inc = np.zeros(n_paths)
    # the active paths, compacted each round
    act = np.empty(n_paths, dtype=np.int64)
    n_act = 0
    for p in range(n_paths):
        ok = True
        for e in range(link_ptr[p], link_ptr[p + 1]):
            if full[links[e]]:
                ok = False
        if ok:
            act[n_act] = p
            n_act += 1
    u = np.zeros(n_links)
    rounds = 0
    while n_act > 0:
        rounds += 1
        u[:] = 0.0
        for i in range(n_act):
            p = act[i]
            for e in range(link_ptr[p], link_ptr[p + 1]):
                u[links[e]] += path_w[p]
        best = np.inf
        best_link = -1
        for i in range(n_act):
            p = act[i]
            share = np.inf
            for e in range(link_ptr[p], link_ptr[p + 1]):
                l = links[e]
                s = remaining[l] / u[l]
                if s < share:
                    share = s
                    if s < best:
                        best = s
                        best_link = l
            inc[p] = path_w[p] * share
        for i in range(n_act):
            p = act[i]
            rate[p] += inc[p]
            for e in range(link_ptr[p], link_ptr[p + 1]):
                remaining[links[e]] -= inc[p]
        for i in range(n_act):
            p = act[i]
            for e in range(link_ptr[p], link_ptr[p + 1]):
                l = links[e]
                if remaining[l] <= SAT_TOL * capacity[l] or l == best_link:
                    remaining[l] = 0.0
                    full[l] = True
        n_new = 0
        for i in range(n_act):
            p = act[i]
            ok = True
            for e in range(link_ptr[p], link_ptr[p + 1]):
                if full[links[e]]:
                    ok = False
                    break
            if ok:
                act[n_new] = p
                n_new += 1
        n_act = n_new
    return rate, rounds


@jit_alloc
def waterfill_kernel(capacity, path_ptr, link_ptr, links, weight):
    """Max-min fair flow rates when every flow has at most one path (flows without a path get 0)."""
    n_links = len(capacity)
    n_flows = len(path_ptr) - 1
    remaining = capacity.copy()
    rate = np.zeros(n_flows)
    active = np.zeros(n_flows, dtype=np.bool_)
    full = np.zeros(n_links, dtype=np.bool_)
    for l in range(n_links):
        full[l] = remaining[l] <= 0.0
    n_act = 0
    for f in range(n_flows):
        if path_ptr[f + 1] > path_ptr[f]:
            p = path_ptr[f]
            ok = True
            for e in range(link_ptr[p], link_ptr[p + 1]):
                if full[links[e]]:
                    ok = False
            active[f] = ok
            if ok:
                n_act += 1
    u = np.zeros(n_links)
    level = 0.0
    while n_act > 0:
        u[:] = 0.0
        for f in range(n_flows):
            if active[f]:
                p = path_ptr[f]
                for e in range(link_ptr[p], link_ptr[p + 1]):
                    u[links[e]] += weight[f]
        step = np.inf
        best_link = -1
        for l in range(n_links):
            if u[l] > 0.0 and remaining[l] / u[l] < step:
                step = remaining[l] / u[l]
                best_link = l
        level += step
        for l in range(n_links):
            if u[l] > 0.0:
                remaining[l] -= step * u[l]
                if remaining[l] <= SAT_TOL * capacity[l] or l == best_link:
                    remaining[l] = 0.0
                    full[l] = True
        for f in range(n_flows):
            if active[f]:
                p = path_ptr[f]
                for e in range(link_ptr[p], link_ptr[p + 1]):
                    if full[links[e]]:
                        active[f] = False
                        rate[f] = weight[f] * level
                        n_act -= 1
                        break
    return rate


def _args(inst: Instance):
    return inst.capacity, inst.path_ptr, inst.link_ptr, inst.links, inst.weight


def hm(inst: Instance) -> np.ndarray:
    """Hoefler's method: path rates (float64[n_paths]); `inst.flow_rate(...)` sums them per flow."""
    return hm_kernel(*_args(inst))


def jm(inst: Instance) -> np.ndarray:
    """Jain's method: path rates (float64[n_paths])."""
    return jm_kernel(*_args(inst))[0]


def waterfill(inst: Instance) -> np.ndarray:
    """Max-min fair flow rates by water-filling; every flow must have at most one path."""
    if (np.diff(inst.path_ptr) > 1).any():
        f = int(np.flatnonzero(np.diff(inst.path_ptr) > 1)[0])
        raise ValueError(f"water-filling needs single-path routing; flow {f} has {np.diff(inst.path_ptr)[f]} paths")
    return waterfill_kernel(*_args(inst))
