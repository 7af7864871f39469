"""Seed 000's Graph500 traffic model (Fuentes et al., CCPE): equations 1-19, one function each.

Symbols are the paper's (Table I, Table II): s scale, f_e edgefactor, c_s coalescing size, n processes, n'
effective destinations, q queries per process, m messages per process, E_l edges explored at tree level l,
d_r root degree, p_s packet size (phits), t_c cycle time, t_q query time.

Where FOGSim v4 (the authors' implementation) computes an equation differently, the function takes
`fogsim=True` (reference/fogsim/GRAPH500_SPEC.md §10): eq 7's constants (#1), eq 13's integer s/10 (#2), and
eq 2-3 with a truncated integer n' (#3, `fogsim_destinations`, `fogsim_messages`).

Every function is a jitted inline helper, callable from Python (tests) and from the stage machines.
"""

from __future__ import annotations

import math

from ..kernels._jit import jit_inline


# ---------------------------------------------------------------- eqs 1-3: queries and messages per process
@jit_inline
def queries_per_process(E_l, n):
    """Eq 1: q = E_l / n * (n - 1) / n (the share of the level's edges that leaves the process)."""
    return E_l / n * (n - 1) / n


@jit_inline
def effective_destinations(q, n):
    """Eq 2: n' = n * (1 - (1 - 1/n)^q), the expected number of distinct destinations of q uniform queries."""
    return n * (1.0 - (1.0 - 1.0 / n) ** q)


@jit_inline
def messages_per_process(q, c_s, n_eff):
    """Eq 3: m = ceil(q / c_s / n') * n' (messages per destination rounded up, times the destinations)."""
    if q <= 0:
        return 0.0
    return math.ceil(q / c_s / n_eff) * n_eff


@jit_inline
def fogsim_destinations(x, n):
    """FOGSim's eq 2: n' truncated to an integer, at least 1."""
    return math.trunc(max(1.0, n * (1.0 - (1.0 - 1.0 / n) ** x)))


@jit_inline
def fogsim_messages(q, c_s, n):
    """FOGSim's eq 3: n' * ceil(q / (n' * c_s)) with the integer n'."""
    ne = fogsim_destinations(q, n)
    return ne * math.ceil(q / (ne * c_s))


# ---------------------------------------------------------------- eqs 4-7: mean edges explored at level l >= 1
@jit_inline
def coef_A(l, s, f_e):
    """Eq 5."""
    return -0.133 + 0.0046 * s + math.exp(0.01257 * f_e - 0.1829 * s - math.exp(1.75 - 0.7 * l))


@jit_inline
def coef_B(l, s, f_e):
    """Eq 6."""
    return 2.0 - l * (0.91 + 0.002 * f_e - 0.012 * s)


@jit_inline
def coef_C(l, s, f_e, fogsim):
    """Eq 7 (the printed `I` is the tree level l). FOGSim: -1.105 + 1.01 ln s, centre 3.2, width 8."""
    if fogsim:
        return math.exp(1.0 + (1.0 + 0.004 * f_e) * (-1.105 + 1.01 * math.log(s)) * math.exp(-(l - 3.2) ** 2 / 8.0))
    return math.exp(1.0 + (1.0 + 0.004 * f_e) * (-0.81 + 0.8411 * math.log(s)) * math.exp(-(l - 2.8) ** 2 / 30.0))


@jit_inline
def mean_edges(l, d_r, s, f_e, fogsim):
    """Eq 4: ln(mean E_l) = A ln^2(d_r) + B ln(d_r) + C, for l >= 1 (level 0 explores d_r edges)."""
    L = math.log(d_r)
    return math.exp(coef_A(l, s, f_e) * L * L + coef_B(l, s, f_e) * L + coef_C(l, s, f_e, fogsim))


# ---------------------------------------------------------------- eqs 8-16: standard deviation of E_l
@jit_inline
def coef_D(l, s, f_e):
    """Eq 10."""
    return 0.002 * s - 0.14 - (0.015 * s - 0.285) * (0.56 + 0.033 * f_e) * (l - 1)


@jit_inline
def coef_F(l, s, f_e):
    """Eq 11."""
    return 0.97 - (l - 1) * (4.438 - 0.168 * s) * (0.83 + 0.01 * f_e)


@jit_inline
def coef_G(l, s, f_e):
    """Eq 12."""
    return ((2.1 + l) * (5.35 + 0.093 * s) - 13.625) * (1.23 - (2.9 + 0.69 * l) / f_e)


@jit_inline
def coef_H(l, s, f_e, fogsim):
    """Eq 13. FOGSim divides the integer s by 10 (floor)."""
    tenth = (s // 10) if fogsim else s / 10.0
    return 2.0 ** l * (0.011 + 0.00012 * f_e) * math.exp(1.7 - tenth)


@jit_inline
def coef_J(l, s, f_e):
    """Eq 14."""
    return 1.0 - math.exp((1.0 - 0.012 * f_e) * (9.55 - 1.3 * l - s * (0.6 - 0.1 * l)))


@jit_inline
def coef_K(l, s, f_e):
    """Eq 15."""
    return 13.0 * (0.062 * s - 0.046) * (2.0 - 0.24 * l) - coef_J(l, s, f_e)


@jit_inline
def f1(l, d_r, s, f_e):
    """Eq 8: D ln^2(d_r) + F ln(d_r) + G."""
    L = math.log(d_r)
    return coef_D(l, s, f_e) * L * L + coef_F(l, s, f_e) * L + coef_G(l, s, f_e)


@jit_inline
def f2(l, d_r, s, f_e, fogsim):
    """Eq 9: K / d_r^H + J."""
    return coef_K(l, s, f_e) / d_r ** coef_H(l, s, f_e, fogsim) + coef_J(l, s, f_e)


@jit_inline
def sigma_edges(l, d_r, s, f_e, fogsim):
    """Eq 16: ln(sigma E_l) = f1(1) | max(f1(1), f1(2)) | max(f1(2), f2(4)) | f2(l) for l = 1 | 2 | 3 | > 3."""
    if l == 1:
        x = f1(1, d_r, s, f_e)
    elif l == 2:
        x = max(f1(1, d_r, s, f_e), f1(2, d_r, s, f_e))
    elif l == 3:
        x = max(f1(2, d_r, s, f_e), f2(4, d_r, s, f_e, fogsim))
    else:
        x = f2(l, d_r, s, f_e, fogsim)
    return math.exp(x)


# ---------------------------------------------------------------- eq 17: injection; eqs 18-19: root degree
@jit_inline
def injection_probability(p_s, t_c, t_q, c_s):
    """Eq 17: p_inj = p_s t_c / (t_q c_s), phits per cycle (t_c and t_q in the same unit)."""
    return p_s * t_c / (t_q * c_s)


@jit_inline
def root_degree_mu(s):
    """Eq 18: the lognormal's log-space mean, ln(0.3604^s) + 1.0661704 s."""
    return s * math.log(0.3604) + 1.0661704 * s


@jit_inline
def root_degree_sigma(s):
    """Eq 19: the lognormal's log-space standard deviation, 0.079313065 s."""
    return 0.079313065 * s
