"""Traffic patterns as flow sets between hosts (nodes), for the throughput models.

- `random(X)` (seed 001): each host sends to X distinct other hosts drawn uniformly.
- `perm(X)` (seed 001): the union of X random permutations without fixed points; pairs are distinct across the
  X permutations, so every host sends to X hosts and receives from X hosts.
- Every open-loop pattern of the engine (traffic/patterns.py PATTERNS), from the engine's own definitions
  (traffic/patterns.py): deterministic ones (permutation, bitcomp, transpose, tornado, shift, slimfly_worst)
  give one flow per node from its destination table; random ones become their demand matrix — uniform is one
  flow to every other host, hotspot adds the hot hosts' share, group_adversarial is one flow to every host of
  the next group — with weights that sum to 1 per source, so a model's normalised level is the load per host.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..build.network import Network
from ..errors import ConfigError
from ..traffic.patterns import PAT_GROUP, PAT_HOTSPOT, PAT_TABLE, PAT_UNIFORM, PATTERNS, _derangement, compile_traffic
from .settings import ALL_PATTERNS



class Flows(NamedTuple):
    src: np.ndarray  # int64[F] source host (node id)
    dst: np.ndarray  # int64[F] destination host
    weight: np.ndarray | None  # float64[F] demand weights, None for unit weights


def random_x(n_hosts: int, x: int, rng: np.random.Generator) -> Flows:
    if not 1 <= x <= n_hosts - 1:
        raise ConfigError("throughput.x", f"random(X) needs 1 <= X <= hosts - 1 = {n_hosts - 1} (got {x})")
    dst = np.empty((n_hosts, x), dtype=np.int64)
    for n in range(n_hosts):
        d = rng.choice(n_hosts - 1, size=x, replace=False)
        dst[n] = d + (d >= n)  # skip the source itself
    return Flows(np.repeat(np.arange(n_hosts, dtype=np.int64), x), dst.ravel(), None)


def perm_x(n_hosts: int, x: int, rng: np.random.Generator) -> Flows:
    if not 1 <= x <= max(1, (n_hosts - 1) // 2):
        raise ConfigError("throughput.x", f"perm(X) needs 1 <= X <= (hosts - 1) // 2 = {(n_hosts - 1) // 2} so "
                          f"that X pairwise-disjoint derangements exist and are quick to draw (got {x})")
    perms = np.empty((x, n_hosts), dtype=np.int64)
    ar = np.arange(n_hosts)
    for j in range(x):
        for _attempt in range(1000):
            p = _derangement(n_hosts, rng)
            clash = (perms[:j] == p[None, :]).any(axis=0)
            for i in np.flatnonzero(clash):  # swap a clashing target with a random other host's
                for _ in range(64):
                    m = int(rng.integers(n_hosts))
                    if m != i and p[m] != i and p[i] != m and not (perms[:j, i] == p[m]).any() \
                            and not (perms[:j, m] == p[i]).any():
                        p[i], p[m] = p[m], p[i]
                        break
            if not (perms[:j] == p[None, :]).any() and not (p == ar).any():
                perms[j] = p
                break
        else:
            raise ConfigError("throughput.x", f"could not draw {x} disjoint permutations of {n_hosts} hosts")
    return Flows(np.tile(ar, x).astype(np.int64), perms.ravel(), None)


def engine_pattern(net: Network, traffic_cfg: dict, seed: int) -> Flows:
    """Flows of one of the engine's open-loop patterns (see the module docstring)."""
    tr = compile_traffic(net, traffic_cfg, seed)
    N = net.n_nodes
    nodes = np.arange(N, dtype=np.int64)
    if tr.pattern == PAT_TABLE:
        dst = tr.table.astype(np.int64)
        keep = (dst >= 0) & (dst != nodes)
        if not keep.any():
            raise ConfigError("traffic.pattern", f"{traffic_cfg['pattern']} sends nothing on this network")
        return Flows(nodes[keep], dst[keep], None)
    if tr.pattern in (PAT_UNIFORM, PAT_HOTSPOT):
        src = np.repeat(nodes, N - 1)
        dst = (src + 1 + np.tile(np.arange(N - 1), N)) % N
        spread = N if tr.to_self else N - 1  # with to_self, a 1/N share stays at its node
        w = np.full(len(src), 1.0 / spread)
        if tr.pattern == PAT_HOTSPOT:
            f = tr.hot_frac
            hot_share = np.bincount(tr.hot, minlength=N) / len(tr.hot)  # engine draws hot[below(H)]
            w = (1 - f) / spread + f * hot_share[dst]
            # a hot host drawing itself sends nothing: that share never enters the network
            keep = w > 0
            src, dst, w = src[keep], dst[keep], w[keep]
        return Flows(src, dst, w)
    assert tr.pattern == PAT_GROUP
    src_list, dst_list, w_list = [], [], []
    for n in range(N):
        g = tr.table[n]
        members = tr.group_nodes[tr.group_start[g]:tr.group_start[g + 1]].astype(np.int64)
        share = 1.0 / max(len(members), 1)  # per entry: a node listed twice is drawn twice as often
        members = members[members != n]  # a draw of the source itself never enters the network
        src_list.append(np.full(len(members), n))
        dst_list.append(members)
        w_list.append(np.full(len(members), share))
    return Flows(np.concatenate(src_list), np.concatenate(dst_list), np.concatenate(w_list))


def make_flows(net: Network, pattern: str, x: int, seed: int, sample: int, traffic_cfg: dict) -> Flows:
    """The flows of sample `sample` of a pattern: random(X)/perm(X) draw from (seed, sample); engine patterns
    use the engine's seed for the sample (seed + sample), which only changes the random permutation."""
    if pattern == "random":
        return random_x(net.n_nodes, x, np.random.default_rng([seed, sample, 0x7A4D]))
    if pattern == "perm":
        return perm_x(net.n_nodes, x, np.random.default_rng([seed, sample, 0x9E4A]))
    if pattern not in PATTERNS:
        raise ConfigError("throughput.pattern", "must be one of " + ", ".join(ALL_PATTERNS) + f" (got {pattern!r})")
    return engine_pattern(net, dict(traffic_cfg, pattern=pattern), seed + sample)


def flow_count(pattern: str, x: int, n_hosts: int, traffic_cfg: dict) -> int:
    """How many flows make_flows gives, where that is known before the network is built (memory.throughput_floor),
    else 0: random(X) and perm(X) X a host; uniform one to every other host, and hotspot too while some of its
    traffic is uniform (with hotspot_fraction = 1 only the hot hosts are destinations)."""
    if pattern in ("random", "perm"):
        return n_hosts * x
    if pattern == "uniform" or (pattern == "hotspot" and traffic_cfg["hotspot_fraction"] < 1):
        return n_hosts * (n_hosts - 1)
    return 0


def seed_dependent(pattern: str) -> bool:
    """Whether different samples of the pattern differ (the others are computed once)."""
    return pattern in ("random", "perm", "permutation")
