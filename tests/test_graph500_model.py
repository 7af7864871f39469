"""Seed 000's equations 1-19, each against values computed by hand from the paper's printed formulas, and against
the worked values of reference/fogsim/GRAPH500_SPEC.md §10 (checked there against instrumented FOGSim runs)."""

import math

import numpy as np
import pytest

from fastnet.workloads import graph500_model as g
from fastnet.workloads.build import draw_root_degree

S, FE = 14, 16  # the spec's worked examples: scale 14, edgefactor 16, root degree 2
L = math.log(2)


def test_eq1_queries_per_process():
    # 7,200 edges explored on 72 processes: 100 each, of which 71/72 leave the process
    assert g.queries_per_process(7200.0, 72) == pytest.approx(100 * 71 / 72)
    assert g.queries_per_process(500.0, 2) == pytest.approx(125.0)


def test_eq2_effective_destinations():
    # 72 queries over 72 processes: (71/72)^72 = exp(72 ln(0.9861111)) = exp(-1.0070094) = 0.3653098
    assert g.effective_destinations(72.0, 72) == pytest.approx(72 * (1 - 0.3653098), rel=1e-6)
    assert g.effective_destinations(1.0, 72) == pytest.approx(1.0)  # one query, one destination
    assert g.effective_destinations(1e5, 72) == pytest.approx(72.0)  # q -> infinity: every process


def test_eq3_messages_with_the_ceiling():
    # 30,000 queries, c_s = 256, n' = 72: 30000 / 256 / 72 = 1.63 per destination -> 2, times 72
    assert g.messages_per_process(30000.0, 256, 72.0) == 144.0
    # 1,000 queries to n' = 45.7: 0.085 per destination -> 1 message to each
    assert g.messages_per_process(1000.0, 256, 45.7) == pytest.approx(45.7)
    assert g.messages_per_process(0.0, 256, 1.0) == 0.0


def test_eqs5_to_7_coefficients_by_hand():
    l = 1
    A = -0.133 + 0.0046 * 14 + math.exp(0.01257 * 16 - 0.1829 * 14 - math.exp(1.75 - 0.7))
    assert A == pytest.approx(-0.06318, abs=1e-5)
    assert g.coef_A(l, S, FE) == pytest.approx(A)
    assert g.coef_B(l, S, FE) == pytest.approx(2 - (0.91 + 0.032 - 0.168))  # = 1.226
    # eq 7 with the printed I read as l: exp(1 + 1.064 (-0.81 + 0.8411 ln 14) exp(-1.8^2 / 30)) = 10.448
    assert g.coef_C(l, S, FE, False) == pytest.approx(10.448, abs=1e-3)
    # FOGSim's constants: exp(1 + 1.064 (-1.105 + 1.01 ln 14) exp(-2.2^2 / 8))
    c_fog = math.exp(1 + 1.064 * (-1.105 + 1.01 * math.log(14)) * math.exp(-(2.2 ** 2) / 8))
    assert g.coef_C(l, S, FE, True) == pytest.approx(c_fog)


def test_eq4_mean_by_hand_and_the_spec_table():
    A = -0.133 + 0.0644 + math.exp(0.20112 - 2.5606 - math.exp(1.05))
    C = math.exp(1 + 1.064 * (-0.81 + 0.8411 * math.log(14)) * math.exp(-(1.8 ** 2) / 30))
    by_hand = math.exp(A * L * L + 1.226 * L + C)  # eq 4 at s = 14, f_e = 16, l = 1, d_r = 2
    assert g.mean_edges(1, 2, S, FE, False) == pytest.approx(by_hand, rel=1e-9)
    assert g.mean_edges(1, 1, S, FE, False) == pytest.approx(math.exp(C), rel=1e-9)  # ln(1) = 0: e^C
    # GRAPH500_SPEC §10: "mean with paper eq 7" and FOGSim's own mean (d_r = 2, f_e = 16)
    paper = {(14, 1): 78209, (14, 2): 178684, (14, 3): 150788, (14, 4): 39898, (14, 5): 4680,
             (16, 1): 260513, (16, 2): 799932, (18, 1): 843329, (18, 2): 3.5048e6}
    fogsim = {(14, 1): 1900.73, (14, 2): 70975.7, (14, 3): 1.143e6, (14, 4): 136810, (14, 5): 1028.41,
              (16, 1): 3357.24, (16, 2): 293522, (18, 1): 5769.27, (18, 2): 1.19384e6}
    for (s, l), v in paper.items():
        assert g.mean_edges(l, 2, s, FE, False) == pytest.approx(v, rel=2e-3), (s, l)
    for (s, l), v in fogsim.items():
        assert g.mean_edges(l, 2, s, FE, True) == pytest.approx(v, rel=2e-3), (s, l)


def test_eqs10_to_15_coefficients_by_hand():
    s, fe, l = 14, 16, 4
    assert g.coef_D(1, s, fe) == pytest.approx(0.028 - 0.14)  # the (l - 1) term vanishes at l = 1
    assert g.coef_D(l, s, fe) == pytest.approx(0.028 - 0.14 - (0.21 - 0.285) * (0.56 + 0.528) * 3)
    assert g.coef_F(l, s, fe) == pytest.approx(0.97 - 3 * (4.438 - 2.352) * (0.83 + 0.16))
    assert g.coef_G(1, s, fe) == pytest.approx((3.1 * (5.35 + 1.302) - 13.625) * (1.23 - 3.59 / 16))
    assert g.coef_H(l, s, fe, False) == pytest.approx(16 * (0.011 + 0.00192) * math.exp(1.7 - 1.4))
    assert g.coef_H(l, s, fe, True) == pytest.approx(16 * (0.011 + 0.00192) * math.exp(0.7))  # floor(14/10) = 1
    J = 1 - math.exp((1 - 0.192) * (9.55 - 5.2 - 14 * (0.6 - 0.4)))
    assert g.coef_J(l, s, fe) == pytest.approx(J)
    assert g.coef_K(l, s, fe) == pytest.approx(13 * (0.868 - 0.046) * (2 - 0.96) - J)


def test_eqs8_9_16_sigma():
    # l = 1: f1(1) = D L^2 + F L + G = -0.112 L^2 + 0.97 L + 7.0354 -> sigma = e^7.654 = 2109.3
    f1 = -0.112 * L * L + 0.97 * L + (3.1 * 6.652 - 13.625) * (1.23 - 3.59 / 16)
    assert g.f1(1, 2, S, FE) == pytest.approx(f1)
    assert g.sigma_edges(1, 2, S, FE, False) == pytest.approx(math.exp(f1))
    # eq 9 and the branches of eq 16
    f2_4 = g.coef_K(4, S, FE) / 2 ** g.coef_H(4, S, FE, False) + g.coef_J(4, S, FE)
    assert g.f2(4, 2, S, FE, False) == pytest.approx(f2_4)
    assert g.sigma_edges(2, 2, S, FE, False) == pytest.approx(math.exp(max(g.f1(1, 2, S, FE), g.f1(2, 2, S, FE))))
    assert g.sigma_edges(3, 2, S, FE, False) == pytest.approx(math.exp(max(g.f1(2, 2, S, FE), f2_4)))
    assert g.sigma_edges(5, 2, S, FE, False) == pytest.approx(math.exp(g.f2(5, 2, S, FE, False)))
    # GRAPH500_SPEC §10 worked values: FOGSim's sigma (integer s/10) and the paper's (real s/10)
    fogsim = {(14, 1): 2109.27, (14, 2): 233910, (14, 3): 233910, (14, 4): 2211.86, (14, 5): 35.72,
              (16, 1): 3773.89, (16, 2): 605315, (18, 1): 6752.22, (18, 2): 1.56644e6}
    for (s, l), v in fogsim.items():
        assert g.sigma_edges(l, 2, s, FE, True) == pytest.approx(v, rel=2e-3), (s, l)
    assert g.sigma_edges(4, 2, 14, FE, False) == pytest.approx(6121.56, rel=2e-3)
    assert g.sigma_edges(5, 2, 14, FE, False) == pytest.approx(135.68, rel=2e-3)


def test_eq17_injection_probability():
    # FOGSim's printed "Injection Probability" of the reference runs: 100 * 8 / (t_q * 256) %
    assert g.injection_probability(8, 1.0, 1.0, 256) == pytest.approx(0.03125)
    assert g.injection_probability(8, 1.0, 16.0, 256) == pytest.approx(0.001953125)
    # Table IV timing: 4 KB packet of 820 five-byte phits, t_c = 1 ns, t_q = 10 ns
    assert g.injection_probability(820, 1e-9, 10e-9, 256) == pytest.approx(820 / 2560)


def test_eqs18_19_root_degree_lognormal():
    # d = ln(0.3604^26) + 1.0661704 * 26 = 26 (ln 0.3604 + 1.0661704) = 1.18638, sigma_d = 0.079313065 * 26
    assert g.root_degree_mu(26) == pytest.approx(26 * (-1.02054 + 1.0661704), abs=1e-4)
    assert g.root_degree_sigma(26) == pytest.approx(2.06214, abs=1e-5)
    # d_r = ceil(X) <= D exactly when X <= D: the drawn degrees follow the lognormal's CDF at integers
    rng = np.random.default_rng(7)
    draws = np.array([draw_root_degree(20, rng) for _ in range(4000)])
    mu, sd = g.root_degree_mu(20), g.root_degree_sigma(20)
    for D in (1, 2, 5, 20, 200):
        p = 0.5 * (1 + math.erf((math.log(D) - mu) / (sd * math.sqrt(2))))
        assert abs((draws <= D).mean() - p) < 4 * math.sqrt(p * (1 - p) / len(draws)) + 1e-3, D
    assert draws.min() >= 1 and draws.max() <= 2**20 - 1


def test_fogsim_integer_destinations_and_messages():
    # GRAPH500_SPEC §4.3: with n = 72, n' = 71 for 306 <= q <= 2676, 72 from 2677; 70 from 257, 69 from 228
    ne = [g.fogsim_destinations(float(q), 72) for q in (227, 228, 256, 257, 305, 306, 2676, 2677)]
    assert ne == [68, 69, 69, 70, 70, 71, 71, 72]
    assert g.fogsim_destinations(0.0, 72) == 1  # at least one
    # §4.4's example: q = 2600 -> 71 messages
    assert g.fogsim_messages(2600, 256, 72) == 71
    assert g.fogsim_messages(2, 256, 72) == 1  # level 0 of the reference runs (d_r = 2)


def test_fogsim_packing_fills_messages_first():
    from fastnet.workloads.graph500_fogsim import next_queries
    from fastnet.workloads.state import N_TK, TK_MSGS_LEFT, TK_Q_LEFT

    tk = np.zeros((1, N_TK), dtype=np.int64)
    tk[0, TK_Q_LEFT], tk[0, TK_MSGS_LEFT] = 2600, 71
    sizes = []
    while tk[0, TK_MSGS_LEFT] > 0:
        k = next_queries(tk, 256, 0)
        sizes.append(int(k))
        tk[0, TK_Q_LEFT] -= k
        tk[0, TK_MSGS_LEFT] -= 1
    assert sum(sizes) == 2600 and len(sizes) == 71
    assert sizes[:9] == [256] * 9 and max(sizes[9:]) <= 5  # 9 full, then 62 of about 5 (spec §4.4)
