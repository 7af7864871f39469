"""Max-min fairness (MMF) and maximum concurrent flow (MCF) by linear programming with HiGHS (seed 001 Figs 1-2).

One LP is built once and modified in place between iterations, so HiGHS re-solves from the previous basis:

    maximise α
    Σ_{p ∋ l} v_p            <= C_l          every link l crossed by some path       (1)
    Σ_{p ∈ d} v_p            >= γ_d           flows d fixed in earlier iterations      (2)
    Σ_{p ∈ d} v_p - w_d α    >= 0             flows not fixed yet                      (3)
    v_p >= 0                                                                           (4)

Constraints (2) and (3) are inequalities where the paper has equalities: a solution in which a flow carries
more can always be scaled back on its own paths (loads only fall), so α* is the same; the inequalities keep the
simplex away from needless degeneracy, and the dual multipliers λ_d >= 0 of (3) (Σ λ_d w_d = 1) are how
saturated flows are identified.

Saturation rule. Weak duality gives, for every allocation that keeps the fixed flows at γ and respects the
capacities, Σ_d λ_d γ_d <= α* (the optimum). If every unfixed flow keeps at least w_d α*, the left side is at
least α*, so each flow with λ_d > 0 is held at exactly w_d α*: its rate cannot rise while the others keep theirs.
Such flows are saturated (the issue's definition) and are fixed at γ_d = w_d α*. A saturated flow whose λ_d
happens to be 0 is not fixed yet; the next LP returns the same α* and must then put weight on it. Each iteration
fixes at least one flow, only flows that are provably saturated are fixed, and the result is the exact MMF
allocation. MCF is the first iteration: every flow gets w_d α*_1.

A second sufficient test catches, in the same iteration, flows that a vertex dual leaves out when many flows are
tied (e.g. every host link of a permutation fills at once, but a vertex dual names one of them): if every path of
flow d crosses link l, and the flows whose every path crosses l already fill it (fixed ones at γ, open ones at
w α*, within a relative 1e-9), no flow among them can rise — d is saturated.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from .instance import Instance

FEAS_TOL = 1e-10  # HiGHS primal/dual feasibility tolerance (the judged capacity check is 1e-9)
RETRY_TOLERANCES = (FEAS_TOL, 1e-9, 1e-8, 1e-7, 1e-6)  # HiGHS's default is 1e-7
DUAL_REL = 1e-6  # λ_d counts as positive above this fraction of the largest λ of the iteration


@dataclass
class LPResult:
    rate: np.ndarray  # float64[F] flow rates
    path_rate: np.ndarray  # float64[n_paths] a split of the rates over the paths that respects capacities
    levels: np.ndarray  # float64[iterations] α* of each iteration (normalised by weight)
    iterations: int
    retries: int = 0  # re-solves with looser tolerances (see _MMFProblem.solve)
    repaired: float = 0.0  # largest relative link overload of the LP split that _repair scaled away


class _MMFProblem:
    """The LP above, held by one Highs object."""

    def __init__(self, inst: Instance):
        F, NP = inst.n_flows, inst.n_paths
        used = np.unique(inst.links)
        row_of_link = np.full(inst.n_links, -1, dtype=np.int64)
        row_of_link[used] = np.arange(len(used))
        m_links = len(used)
        path_of_entry = np.repeat(np.arange(NP, dtype=np.int64), np.diff(inst.link_ptr))
        rows = np.concatenate([row_of_link[inst.links], m_links + inst.path_flow, m_links + np.arange(F)])
        cols = np.concatenate([path_of_entry, np.arange(NP), np.full(F, NP)])
        vals = np.concatenate([np.ones(len(inst.links) + NP), -inst.weight])
        A = sp.coo_matrix((vals, (rows, cols)), shape=(m_links + F, NP + 1)).tocsc()
        A.sum_duplicates()
        A.sort_indices()
        lp = highspy.HighsLp()
        lp.num_col_ = NP + 1
        lp.num_row_ = m_links + F
        cost = np.zeros(NP + 1)
        cost[NP] = 1.0
        lp.col_cost_ = cost
        lp.col_lower_ = np.zeros(NP + 1)
        lp.col_upper_ = np.full(NP + 1, highspy.kHighsInf)
        lp.row_lower_ = np.concatenate([np.full(m_links, -highspy.kHighsInf), np.zeros(F)])
        lp.row_upper_ = np.concatenate([inst.capacity[used], np.full(F, highspy.kHighsInf)])
        lp.sense_ = highspy.ObjSense.kMaximize
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = A.indptr.astype(np.int32)
        lp.a_matrix_.index_ = A.indices.astype(np.int32)
        lp.a_matrix_.value_ = A.data
        h = _new_highs()
        h.setOptionValue("solver", "simplex")
        # Primal simplex: fixing flows keeps the last solution feasible, so each re-solve starts from a feasible
        # basis. Measured on jellyfish(216, 6, 1) random(1) k = 8: 0.7 s for 137 LPs, against 12 s with dual.
        h.setOptionValue("simplex_strategy", 4)
        h.setOptionValue("primal_feasibility_tolerance", FEAS_TOL)
        h.setOptionValue("dual_feasibility_tolerance", FEAS_TOL)
        h.setOptionValue("threads", 1)
        h.passModel(lp)
        self.h, self.inst, self.m_links, self.NP = h, inst, m_links, NP
        self.retries = 0

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """α*, the path rates and the flow-row duals of the current LP."""
        h = self.h
        h.run()
        # MMF LPs after the first are often badly conditioned: flows fixed at exactly the level that saturated
        # them leave a feasible set without interior, and α can move by 5e7 times a perturbation of those bounds
        # (measured on a jellyfish(216, 6, 1) perm(1) k = 4 pattern). There the simplex may stop with status
        # "unknown" and residuals of ~2e-7. Solving on with looser tolerances always recovered; mmf() repairs
        # the final split so that capacities hold to 1e-12.
        for tol in RETRY_TOLERANCES:
            if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
                break
            self.retries += 1
            h.clearSolver()
            h.setOptionValue("primal_feasibility_tolerance", tol)
            h.setOptionValue("dual_feasibility_tolerance", tol)
            h.run()
        status = h.getModelStatus()
        h.setOptionValue("primal_feasibility_tolerance", FEAS_TOL)
        h.setOptionValue("dual_feasibility_tolerance", FEAS_TOL)
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS did not solve the MMF LP (status {h.modelStatusToString(status)}) even "
                               f"with tolerance {RETRY_TOLERANCES[-1]:g}")
        sol = h.getSolution()
        x = np.asarray(sol.col_value)
        duals = np.abs(np.asarray(sol.row_dual)[self.m_links:])
        return float(x[self.NP]), x[: self.NP], duals

    def fix(self, flows: np.ndarray, values: np.ndarray) -> None:
        """Turn rows (3) of `flows` into rows (2) with γ_d = values."""
        for d in flows:
            self.h.changeCoeff(int(self.m_links + d), self.NP, 0.0)
        rows = (self.m_links + flows).astype(np.int32)
        self.h.changeRowsBounds(len(rows), rows, values, np.full(len(rows), highspy.kHighsInf))


_BANNER_SHOWN = False


def _new_highs() -> highspy.Highs:
    """A silent Highs object. HiGHS prints a copyright banner to the C stdout when the first one is made, which
    would corrupt `--json` output, so that first construction runs with file descriptor 1 pointed at /dev/null."""
    global _BANNER_SHOWN
    if _BANNER_SHOWN:
        h = highspy.Highs()
    else:
        sys.stdout.flush()
        saved = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
            h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(devnull)
        _BANNER_SHOWN = True
    h.setOptionValue("output_flag", False)
    return h


def _clean_paths(inst: Instance, path_rate: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Clip tiny negative path rates and scale each flow's paths to sum to its rate (fixed flows may carry more
    than γ in the LP: rows (2) are lower bounds)."""
    v = np.maximum(path_rate, 0.0)
    got = inst.flow_rate(v)
    scale = np.divide(rate, got, out=np.zeros_like(rate), where=got > 0)
    return v * scale[inst.path_flow]


def _repair(inst: Instance, v: np.ndarray) -> tuple[np.ndarray, float]:
    """Scale down every path that crosses an overloaded link by that link's capacity / load (the smallest such
    factor on the path). Loads only fall, so one pass leaves every link within capacity up to rounding.
    Returns the split and the largest relative overload found (0 when nothing changed)."""
    load = inst.link_load(v)
    over = load > inst.capacity
    if not over.any():
        return v, 0.0
    factor = np.where(over, inst.capacity / np.where(over, load, 1.0), 1.0)
    path_factor = np.minimum.reduceat(factor[inst.links], inst.link_ptr[:-1])
    worst = float(np.max((load[over] - inst.capacity[over]) / np.maximum(inst.capacity[over], 1e-300)))
    return v * path_factor, worst


def common_links(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(flow, link) pairs such that every path of the flow crosses the link."""
    n_paths = np.diff(inst.path_ptr)
    path_of_entry = np.repeat(np.arange(inst.n_paths, dtype=np.int64), np.diff(inst.link_ptr))
    per_path = np.unique(path_of_entry * inst.n_links + inst.links)  # each link once per path
    flow_link = inst.path_flow[per_path // inst.n_links] * inst.n_links + per_path % inst.n_links
    keys, counts = np.unique(flow_link, return_counts=True)
    flow, link = keys // inst.n_links, keys % inst.n_links
    keep = counts == n_paths[flow]
    return flow[keep], link[keep]


def _filled_link_flows(inst: Instance, cf: np.ndarray, cl: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Flows with a common link that the flows bound to it fill (see the module docstring)."""
    need = np.bincount(cl, weights=value[cf], minlength=inst.n_links)
    full = need >= inst.capacity * (1 - 1e-9)
    return np.unique(cf[full[cl]])


def mmf(inst: Instance, max_iterations: int | None = None) -> LPResult:
    """Max-min fair rates for multi-path routing with splittable flows (seed 001 Fig. 1); see the module
    docstring for the saturation rule. `max_iterations=1` gives MCF."""
    F = inst.n_flows
    rate = np.zeros(F)
    if F == 0:
        return LPResult(rate, np.zeros(inst.n_paths), np.zeros(0), 0)
    prob = _MMFProblem(inst)
    cf, cl = common_links(inst)
    fixed = np.zeros(F, dtype=bool)
    levels: list[float] = []
    path_rate = np.zeros(inst.n_paths)
    limit = F if max_iterations is None else max_iterations
    while not fixed.all() and len(levels) < limit:
        alpha, path_rate, duals = prob.solve()
        alpha = max(alpha, 0.0)
        levels.append(alpha)
        open_ = np.flatnonzero(~fixed)
        lam = duals[open_]
        top = lam.max()
        sat = open_[lam > DUAL_REL * top] if top > 0 else open_[:0]
        if len(sat) == 0:  # numerically degenerate duals: fix the flow the dual points at most
            sat = open_[[int(np.argmax(lam))]]
        value = np.where(fixed, rate, inst.weight * alpha)
        extra = _filled_link_flows(inst, cf, cl, value)
        sat = np.union1d(sat, extra[~fixed[extra]])
        rate[sat] = inst.weight[sat] * alpha
        fixed[sat] = True
        if not fixed.all() and len(levels) < limit:
            prob.fix(sat, rate[sat])
    if max_iterations is not None and not fixed.all():
        open_ = np.flatnonzero(~fixed)
        rate[open_] = inst.weight[open_] * levels[-1]
    v, worst = _repair(inst, _clean_paths(inst, path_rate, rate))
    if worst > 0:  # report what the repaired split carries; changes rates by about `worst` (< 1e-6)
        rate = np.minimum(rate, inst.flow_rate(v))
    return LPResult(rate, v, np.asarray(levels), len(levels), prob.retries, worst)


def mcf(inst: Instance) -> LPResult:
    """Maximum concurrent flow: the largest α such that every flow d can carry w_d α at once."""
    return mmf(inst, max_iterations=1)


def max_total(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(flow rates, path rates) that maximise the total rate Σ_d γ_d under the capacities, with no fairness at
    all: the most any router could deliver on these paths, which bounds a simulation from above (MMF does
    not: it maximises the smallest rate first, not the sum)."""
    from scipy.optimize import linprog

    NP = inst.n_paths
    if NP == 0:
        return np.zeros(inst.n_flows), np.zeros(0)
    path_of_entry = np.repeat(np.arange(NP, dtype=np.int64), np.diff(inst.link_ptr))
    A = sp.coo_matrix((np.ones(len(inst.links)), (inst.links, path_of_entry)), shape=(inst.n_links, NP)).tocsr()
    res = linprog(-np.ones(NP), A_ub=A, b_ub=inst.capacity, bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": FEAS_TOL, "dual_feasibility_tolerance": FEAS_TOL})
    if res.status != 0:
        raise RuntimeError(f"HiGHS did not solve the max-total LP: {res.message}")
    v, _ = _repair(inst, np.maximum(res.x, 0.0))
    return inst.flow_rate(v), v
