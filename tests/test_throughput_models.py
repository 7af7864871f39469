"""Throughput models on generated instances: feasibility, MCF <= MMF, max-min fairness, HM <= JM <= MMF in the
leximin order, LP-MMF = water-filling for one path per flow, and agreement with an independent MMF solver."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from fastnet.throughput.heuristics import hm, jm, waterfill
from fastnet.throughput.instance import Instance, from_lists
from fastnet.throughput.lp import mcf, mmf

TOL = 1e-9
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def instances(draw, max_paths: int = 3, weighted: bool = True) -> Instance:
    L = draw(st.integers(1, 8))
    caps = draw(st.lists(st.one_of(st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.0]), st.floats(0.05, 4.0)),
                         min_size=L, max_size=L))
    links = [[i, i + 1, c] for i, c in enumerate(caps)]
    F = draw(st.integers(1, 7))
    flows, paths = [], []
    for f in range(F):
        flows.append([draw(st.integers(0, 5)), draw(st.integers(6, 9))])
        n = draw(st.integers(1, max_paths))
        paths.append([draw(st.lists(st.integers(0, L - 1), min_size=1, max_size=min(4, L), unique=True))
                      for _ in range(n)])
    weights = None
    if weighted and draw(st.booleans()):
        weights = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=F, max_size=F))
    return from_lists(links, flows, paths, weights)


# ------------------------------------------------------------------ independent reference (scipy linprog)
def _lp_parts(inst: Instance):
    NP, L, F = inst.n_paths, inst.n_links, inst.n_flows
    A_link = np.zeros((L, NP))
    for p in range(NP):
        for l in inst.links[inst.link_ptr[p]:inst.link_ptr[p + 1]]:
            A_link[l, p] += 1
    A_flow = np.zeros((F, NP))
    A_flow[inst.path_flow, np.arange(NP)] = 1
    return A_link, A_flow


def max_rate(inst: Instance, objective: int | None, lower: np.ndarray, equal: dict[int, float]) -> float:
    """max γ_objective (or the common level t when objective is None: γ_d >= w_d t for flows in `lower`)
    subject to capacities, γ_d >= lower[d] (NaN: free), γ_d = equal[d]."""
    A_link, A_flow = _lp_parts(inst)
    NP = inst.n_paths
    ub_rows, ub_rhs, eq_rows, eq_rhs = [], [], [], []
    for l in range(inst.n_links):
        ub_rows.append(np.append(A_link[l], 0.0))
        ub_rhs.append(inst.capacity[l])
    for d in range(inst.n_flows):
        row = np.append(A_flow[d], 0.0)
        if d in equal:
            eq_rows.append(row)
            eq_rhs.append(equal[d])
        elif objective is None and np.isnan(lower[d]):
            ub_rows.append(np.append(-A_flow[d], inst.weight[d]))  # w_d t - γ_d <= 0
            ub_rhs.append(0.0)
        elif not np.isnan(lower[d]):
            ub_rows.append(-row)
            ub_rhs.append(-lower[d])
    c = np.zeros(NP + 1)
    if objective is None:
        c[NP] = -1.0
    else:
        c[:NP] = -A_flow[objective]
    res = linprog(c, A_ub=np.array(ub_rows), b_ub=ub_rhs, A_eq=np.array(eq_rows) if eq_rows else None,
                  b_eq=eq_rhs or None, bounds=[(0, None)] * NP + [(0, None if objective is None else 0)],
                  method="highs")
    assert res.status == 0, res.message
    return -res.fun


def reference_mmf(inst: Instance) -> np.ndarray:
    """Progressive filling by definition: raise all open flows together, then test each open flow with its own
    LP (can it rise while every other open flow keeps the level?); fix the ones that cannot."""
    F = inst.n_flows
    rate = np.full(F, np.nan)
    while np.isnan(rate).any():
        fixed = {d: rate[d] for d in range(F) if not np.isnan(rate[d])}
        t = max_rate(inst, None, np.full(F, np.nan), fixed)
        open_ = [d for d in range(F) if np.isnan(rate[d])]
        newly = []
        for d in open_:
            lower = np.full(F, np.nan)
            for e in open_:
                if e != d:
                    lower[e] = inst.weight[e] * t - 1e-12
            if max_rate(inst, d, lower, fixed) <= inst.weight[d] * t + 1e-8:
                newly.append(d)
        assert newly, "progressive filling found no saturated flow"
        for d in newly:
            rate[d] = inst.weight[d] * t
    return rate


def assert_feasible(inst: Instance, path_rate: np.ndarray, flow_rate: np.ndarray | None = None) -> None:
    assert (path_rate >= -TOL).all()
    assert (inst.link_load(path_rate) <= inst.capacity + TOL).all()
    if flow_rate is not None:
        np.testing.assert_allclose(inst.flow_rate(path_rate), flow_rate, rtol=0, atol=TOL)


def leximin_leq(x: np.ndarray, y: np.ndarray, tol: float = 1e-7) -> bool:
    """sorted(x) <= sorted(y) lexicographically (up to tol)."""
    for a, b in zip(np.sort(x), np.sort(y)):
        if abs(a - b) > tol:
            return a < b
    return True


# ------------------------------------------------------------------ properties
@SETTINGS
@given(instances())
def test_all_models_respect_capacities(inst):
    r = mmf(inst)
    assert_feasible(inst, r.path_rate, r.rate)
    c = mcf(inst)
    assert_feasible(inst, c.path_rate, c.rate)
    assert_feasible(inst, hm(inst))
    assert_feasible(inst, jm(inst))


@SETTINGS
@given(instances())
def test_mcf_is_the_smallest_mmf_level(inst):
    r, c = mmf(inst), mcf(inst)
    level = c.rate / inst.weight
    assert np.ptp(level) <= TOL  # one rate for all (per unit weight)
    assert level[0] <= (r.rate / inst.weight).min() + TOL
    assert level[0] == pytest.approx(r.levels[0], abs=TOL)
    # and nothing feasible has a larger minimum: MCF is the LP optimum of the common level
    assert level[0] == pytest.approx(max_rate(inst, None, np.full(inst.n_flows, np.nan), {}), abs=1e-7)


@SETTINGS
@given(instances())
def test_mmf_is_max_min_fair(inst):
    """No flow can be raised without lowering a flow whose (normalised) rate is no larger."""
    rate = mmf(inst).rate
    norm = rate / inst.weight
    for d in range(inst.n_flows):
        lower = np.full(inst.n_flows, np.nan)
        for e in range(inst.n_flows):
            if e != d and norm[e] <= norm[d] + 1e-12:
                lower[e] = rate[e] - 1e-10
        assert max_rate(inst, d, lower, {}) <= rate[d] + 1e-7


@SETTINGS
@given(instances())
def test_mmf_matches_independent_progressive_filling(inst):
    np.testing.assert_allclose(mmf(inst).rate, reference_mmf(inst), rtol=0, atol=1e-7)


@SETTINGS
@given(instances())
def test_hm_le_jm_le_mmf(inst):
    h, j = hm(inst), jm(inst)
    assert (h <= j + TOL).all()  # JM's first round is HM, later rounds only add
    hf, jf, mf = inst.flow_rate(h), inst.flow_rate(j), mmf(inst).rate
    w = inst.weight
    # MMF is the leximin maximum of all feasible allocations, so neither heuristic beats it in that order,
    # and neither has a larger smallest rate than MCF
    assert leximin_leq(hf / w, mf / w)
    assert leximin_leq(jf / w, mf / w)
    assert (jf / w).min() <= (mf / w).min() + 1e-7


@SETTINGS
@given(instances(max_paths=1))
def test_lp_mmf_equals_waterfilling_single_path(inst):
    np.testing.assert_allclose(mmf(inst).rate, waterfill(inst), rtol=0, atol=1e-9)


@SETTINGS
@given(instances(max_paths=1, weighted=False))
def test_jm_single_path_saturates_every_flow(inst):
    """With one path per flow JM ends with every flow crossing a full link (a Pareto-efficient allocation)."""
    rate = jm(inst)
    load = inst.link_load(rate)
    full = load >= inst.capacity - 1e-9
    for p in range(inst.n_paths):
        assert full[inst.links[inst.link_ptr[p]:inst.link_ptr[p + 1]]].any()


# ------------------------------------------------------------------ hand-computed cases
def test_parking_lot():
    # links 0: a->b, 1: b->c; flow 0 crosses both, flows 1 and 2 one each, flow 3 shares link 0 too
    inst = from_lists([[0, 1, 1], [1, 2, 1]], [[0, 2], [0, 1], [1, 2], [0, 1]], [[[0, 1]], [[0]], [[1]], [[0]]])
    np.testing.assert_allclose(mmf(inst).rate, [1 / 3, 1 / 3, 2 / 3, 1 / 3])
    np.testing.assert_allclose(mcf(inst).rate, [1 / 3] * 4)
    np.testing.assert_allclose(inst.flow_rate(hm(inst)), [1 / 3, 1 / 3, 1 / 2, 1 / 3])
    np.testing.assert_allclose(inst.flow_rate(jm(inst)), [1 / 3, 1 / 3, 2 / 3, 1 / 3])


def test_multipath_beats_hoefler():
    """Two flows, each with a private path and a shared one: MMF routes around the sharing, HM halves it."""
    inst = from_lists([[0, 1, 1], [0, 1, 1], [0, 1, 1]], [[0, 1], [0, 1]], [[[0], [2]], [[1], [2]]])
    np.testing.assert_allclose(mmf(inst).rate, [1.5, 1.5])
    np.testing.assert_allclose(inst.flow_rate(hm(inst)), [1.5, 1.5])
    inst = from_lists([[0, 1, 1], [0, 1, 4]], [[0, 1], [0, 1], [0, 1]], [[[0], [1]], [[1]], [[1]]])
    np.testing.assert_allclose(mmf(inst).rate, [5 / 3, 5 / 3, 5 / 3])
    np.testing.assert_allclose(inst.flow_rate(hm(inst)), [1 + 4 / 3, 4 / 3, 4 / 3])
    np.testing.assert_allclose(inst.flow_rate(jm(inst)), [1 + 4 / 3, 4 / 3, 4 / 3])


def test_weighted_flow_gets_its_multiple():
    inst = from_lists([[0, 1, 1]], [[0, 1], [0, 1]], [[[0]], [[0]]], weights=[1.0, 3.0])
    for rate in (mmf(inst).rate, inst.flow_rate(hm(inst)), inst.flow_rate(jm(inst)), waterfill(inst)):
        np.testing.assert_allclose(rate, [0.25, 0.75])


def test_flow_without_paths_gets_zero_and_others_go_on():
    inst = from_lists([[0, 1, 1]], [[0, 1], [0, 1]], [[], [[0]]])
    np.testing.assert_allclose(mmf(inst).rate, [0.0, 1.0])
    np.testing.assert_allclose(mcf(inst).rate, [0.0, 0.0])
    np.testing.assert_allclose(inst.flow_rate(jm(inst)), [0.0, 1.0])
    np.testing.assert_allclose(waterfill(inst), [0.0, 1.0])


def test_repair_scales_paths_back_within_capacity():
    from fastnet.throughput.lp import _repair

    inst = from_lists([[0, 1, 1], [1, 2, 1]], [[0, 2], [1, 2]], [[[0, 1]], [[1]]])
    v, worst = _repair(inst, np.array([0.5, 0.5 + 1e-7]))
    assert worst == pytest.approx(1e-7)
    assert (inst.link_load(v) <= inst.capacity * (1 + 1e-15)).all()
    v, worst = _repair(inst, np.array([0.5, 0.5]))
    assert worst == 0.0 and v.tolist() == [0.5, 0.5]


def test_ill_conditioned_mmf_is_solved_and_feasible():
    """Pattern 27 of jellyfish(216, 6, 1) perm(1), k = 4: after the first level fixes 209 flows, the second LP's
    optimum moves ~5e7 times any perturbation of their bounds and HiGHS needs looser tolerances (lp.py)."""
    from fastnet.topology import build_network
    from fastnet.throughput.evaluate import hop_limit, resolve, sample_instance

    cfg = resolve({"topology": {"kind": "jellyfish", "switches": 216, "radix": 6, "p": 1, "seed": 1},
                   "throughput": {"pattern": "perm", "k": 4, "seed": 1}})
    net = build_network(cfg)
    inst = sample_instance(net, cfg, 27, hop_limit(net, cfg["throughput"]))
    r = mmf(inst)
    assert_feasible(inst, r.path_rate, r.rate)
    assert r.levels[0] == pytest.approx(r.rate.min(), abs=1e-9)
    assert (np.diff(r.levels) >= -1e-9).all()  # levels never fall
    assert leximin_leq(inst.flow_rate(jm(inst)), r.rate)
