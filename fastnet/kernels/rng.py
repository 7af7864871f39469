"""Counter-free xorshift64* streams held in uint64 arrays, one stream per router and one per node.

Keying streams by router or node id (not by thread) keeps "same seed, same result" on any core count.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit_inline


def seed_streams(seed: int, n: int, salt: int) -> np.ndarray:
    """n independent non-zero uint64 states derived from (seed, salt) with SplitMix64."""
    x = (np.arange(n, dtype=np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    x ^= np.uint64((seed * 0x2545F4914F6CDD1D + salt * 0x632BE59BD9B4E019) % 2**64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    x[x == 0] = np.uint64(0x9E3779B97F4A7C15)
    return x


@jit_inline
def next_u64(states, i):
    x = states[i]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    states[i] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@jit_inline
def uniform(states, i):
    """Float in [0, 1) with 53 random bits."""
    return (next_u64(states, i) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jit_inline
def below(states, i, n):
    """Integer in [0, n)."""
    return np.int64(uniform(states, i) * n)


@jit_inline
def geometric(states, i, p):
    """Trials up to and including the first success of a Bernoulli(p) process (>= 1)."""
    if p >= 1.0:
        return 1
    u = 1.0 - uniform(states, i)  # in (0, 1]
    return np.int64(np.log(u) / np.log1p(-p)) + 1
