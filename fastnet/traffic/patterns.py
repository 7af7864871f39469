"""Destination patterns of open-loop traffic, compiled to a `Traffic` NamedTuple for the kernels.

Deterministic patterns (permutation, bitcomp, transpose, tornado, shift, slimfly_worst) become a destination
table `dst[node]` built here once; random ones (uniform, hotspot, group_adversarial) draw per packet from the
source node's random stream. Definitions follow BookSim2 where it has the pattern:

- uniform: a random node other than the source (with traffic.to_self, any node: BookSim2's uniform).
- permutation: a random derangement drawn from the run seed (with traffic.to_self, any random permutation:
  BookSim2's randperm, whose fixed points send to themselves).
- bitcomp: dst = ~src over log2(N) bits (N a power of two).
- transpose: swap the high and low halves of the node id's bits (N = 4^b), i.e. (x, y) -> (y, x) on a 2^b×2^b grid.
- tornado: on a torus/mesh/HyperX, every router coordinate moves ceil(k/2) - 1 along its dimension (the node's
  position at its router is kept; on a HyperX all p nodes of a router then share one link per dimension under
  dimension order); on other topologies, node n sends to n + ceil(N/2) - 1 (mod N).
- shift: dst = src + k (mod N), k = traffic.shift.
- hotspot: with probability hotspot_fraction a random node of hotspot_nodes, otherwise uniform.
- group_adversarial: a random node of group g+1 (dragonfly and Slim Fly groups).
- BookSim2's other patterns (src/traffic.cpp at commit 28f43299), on BookSim2's node ids (`traffic.numbering`):
  shuffle (rotate the id's bits left), bitrev (reverse them), neighbor (every digit + 1), badperm_yarc (a random
  node of the column given by the source's row: digit 0 random, digit 1 = the source's digit 0), diagonal (the
  next node with probability 1/3, else the source itself), asymmetric (src mod N/2, in either half), taper64 (half
  the packets to the 3x3 window of an 8x8 grid around the source, half uniform), background (uniform over the
  nodes not in traffic.exclude). Digit patterns read ids as `count` digits of base `base` (`traffic.digits`;
  default the topology's grid of nodes: k per dimension of a torus, mesh or HyperX with one node per router, or
  k x xr with traffic.numbering = "chip"). Random ones draw a random entry of their source's row of candidates
  (the PAT_GROUP draw over a CSR of rows; a candidate listed twice is twice as likely).
- traffic.numbering = "chip": node ids as BookSim2 numbers the nodes of its flattened butterfly and concentrated
  mesh (flatfly_transformation, CMesh::NodeToRouter): row by row over the chip's grid of k*xr x k*xr nodes,
  router (x, y) holding the xr x xr block at (x*xr, y*xr); every table, row, hotspot and excluded node is given in
  those ids and translated to fastnet's router-by-router ids (node i of router r is r*p + i).
- slimfly_worst: seed 004 §2.3. Routers are taken four at a time along paths R1-R2-R3-R4 where R1, R3 and R2, R4
  are two hops apart with a single middle router; node i of R1 and R3 send to each other, as do node i of R2 and
  R4, so the link R2-R3 carries 2p flows each way and minimal routing saturates at 1/(2p). The quadruples come
  from the MMS algebra (`_slimfly_quadruples`); with q odd, 2q routers are left for a greedy search.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..build.network import Network
from ..errors import ConfigError
from ..registry import Registry

PAT_TABLE, PAT_UNIFORM, PAT_HOTSPOT, PAT_GROUP, PAT_JOB = 0, 1, 2, 3, 4  # PAT_JOB: uniform over the job's other nodes
INJ_BERNOULLI, INJ_ON_OFF = 0, 1  # traffic.injection (traffic/openloop.py arrival_gap)


class Traffic(NamedTuple):
    pattern: int  # PAT_*
    rate: float  # packets per node per cycle (load / packet_phits)
    packet_phits: int
    table: np.ndarray  # int32[N]: destination (PAT_TABLE, -1 = silent node) or target group (PAT_GROUP)
    hot: np.ndarray  # int32[H] hotspot nodes
    hot_frac: float
    group_start: np.ndarray  # int32[G+1] CSR of nodes by group
    group_nodes: np.ndarray  # int32[N]
    to_self: bool  # uniform (and hotspot's uniform share) may draw the source itself
    sizes: np.ndarray  # int32[S]: packet sizes in phits, each listed as often as it is likely (one: every packet)
    process: int  # INJ_*: Bernoulli, or BookSim2's on/off Markov source
    alpha: float  # on_off: probability an off node turns on in a cycle
    beta: float  # on_off: probability an on node turns off in a cycle
    r1: float  # on_off: probability an on node starts a packet in a cycle


def _is_power(n: int, base: int) -> int | None:
    e = 0
    while n > 1 and n % base == 0:
        n //= base
        e += 1
    return e if n == 1 else None


def _derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    perm = rng.permutation(n)
    fixed = np.flatnonzero(perm == np.arange(n))
    for i in fixed:  # swap each fixed point with a random other position
        j = (i + 1 + rng.integers(n - 1)) % n
        perm[i], perm[j] = perm[j], perm[i]
    while (perm == np.arange(n)).any():  # rare: a swap created a new fixed point
        i = int(np.flatnonzero(perm == np.arange(n))[0])
        j = (i + 1) % n
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _tornado(net: Network, tcfg: dict) -> np.ndarray:
    if tcfg["numbering"] == "chip" or tcfg["digits"]:  # BookSim2's TornadoTrafficPattern on its ids
        K, n = _digits(net, tcfg)
        return _digit_map(net, K, n, lambda d: (d + (K + 1) // 2 - 1) % K)
    N = net.n_nodes
    if net.kind in ("torus", "mesh", "twisted_torus", "hyperx"):
        dims = net.params["dims"]
        p = net.params["p"]
        stride = np.asarray(net.params["stride"])
        coords = net.params["coords"][np.arange(N) // p]
        shift = np.array([(k + 1) // 2 - 1 for k in dims])
        dst_r = (((coords + shift[None, :]) % np.asarray(dims)[None, :]) * stride[None, :]).sum(axis=1)
        return dst_r * p + np.arange(N) % p
    return (np.arange(N) + (N + 1) // 2 - 1) % N


GRID_KINDS = ("torus", "mesh", "hyperx")


def chip_ids(net: Network) -> np.ndarray:
    """fastnet's node id of each of BookSim2's chip-numbered node ids (flatfly_transformation): a 2-D k x k grid of
    routers with p = xr^2 nodes each, numbered row by row over the k*xr x k*xr grid of nodes."""
    dims, p = net.params.get("dims"), net.params.get("p")
    xr = int(round(p ** 0.5)) if isinstance(p, int) else 0
    if net.kind not in GRID_KINDS or len(dims) != 2 or dims[0] != dims[1] or xr * xr != p:
        raise ConfigError("traffic.numbering", "chip numbers the nodes of a 2-D k x k torus, mesh or HyperX with "
                                               "p = xr^2 nodes per router (BookSim2's flatfly and cmesh)")
    k, stride = dims[0], net.params["stride"]
    b = np.arange(net.n_nodes)
    X, Y = b % (k * xr), b // (k * xr)
    router = (X // xr) * stride[0] + (Y // xr) * stride[1]
    return router * p + xr * (Y % xr) + X % xr


def _digits(net: Network, tcfg: dict) -> tuple[int, int]:
    """(base, count) of the digits BookSim2's digit patterns read a node id as (traffic.digits, or the grid)."""
    if tcfg["digits"]:
        if len(tcfg["digits"]) != 2 or min(tcfg["digits"]) < 1:
            raise ConfigError("traffic.digits", "must be [base, count] (BookSim2's k * xr and n)")
        return tuple(tcfg["digits"])
    dims, p = net.params.get("dims"), net.params.get("p")
    if net.kind in GRID_KINDS and len(set(dims)) == 1:
        if tcfg["numbering"] == "chip":
            return dims[0] * int(round(p ** 0.5)), len(dims)
        if p == 1:
            return dims[0], len(dims)
    raise ConfigError("traffic.digits", f"{tcfg['pattern']} reads node ids as digits: give traffic.digits = "
                                        "[base, count] (a torus, mesh or HyperX of equal dims with one node per "
                                        "router, or numbering = \"chip\", has them)")


def _digit_map(net: Network, K: int, n: int, step) -> np.ndarray:
    """Apply `step` to each of the n base-K digits of every id (BookSim2's DigitPermutationTrafficPattern)."""
    N = net.n_nodes
    ids = np.arange(N)
    out = np.zeros(N, dtype=np.int64)
    for d in range(n):
        out += K ** d * step((ids // K ** d) % K)
    if out.max() >= N:
        raise ConfigError("traffic.digits", f"{n} digits of base {K} name nodes up to {K ** n - 1}; the network "
                                            f"has {N}")
    return out


def _rows(rows: list[list[int]] | np.ndarray, of_source: np.ndarray, N: int) -> tuple[int, Any, Any]:
    """A random pattern as rows of candidates (PAT_GROUP: source n draws an entry of row of_source[n])."""
    rows = [np.asarray(r, dtype=np.int64) for r in rows]
    nodes = np.concatenate(rows)
    if nodes.min() < 0 or nodes.max() >= N:
        raise ConfigError("traffic.pattern", f"names nodes outside 0..{N - 1}")
    start = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum([len(r) for r in rows], out=start[1:])
    return PAT_GROUP, np.asarray(of_source, dtype=np.int32), (start, nodes.astype(np.int32))


def _bits(net: Network, name: str) -> int:
    b = _is_power(net.n_nodes, 2)
    if b is None:
        raise ConfigError("traffic.pattern", f"{name} needs a power-of-two node count (have {net.n_nodes})")
    return b


def _shuffle(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes
    _bits(net, "shuffle")
    s = np.arange(N) << 1
    return PAT_TABLE, (s & (N - 1)) | ((s & N) > 0)


def _bitrev(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    b = _bits(net, "bitrev")
    ids = np.arange(net.n_nodes)
    return PAT_TABLE, sum(((ids >> i) & 1) << (b - 1 - i) for i in range(b))


def _neighbor(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    K, n = _digits(net, tcfg)
    return PAT_TABLE, _digit_map(net, K, n, lambda d: (d + 1) % K)


def _badperm_yarc(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    K, _ = _digits(net, tcfg)
    N = net.n_nodes
    rows = N // K + (N % K > 0)  # source s draws among j*K + s // K, j = 0 .. K-1
    return _rows([np.arange(K) * K + r for r in range(rows)], np.arange(N) // K, N)


def _diagonal(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes  # RandomInt(2) == 0: the next node with probability 1/3, else the source itself
    return _rows([[(s + 1) % N, s, s] for s in range(N)], np.arange(N), N)


def _asymmetric(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes
    half = N // 2
    return _rows([[r, r + half] for r in range(half)], np.arange(N) % half, N)


def _taper64(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes
    if N != 64:
        raise ConfigError("traffic.pattern", f"taper64 needs exactly 64 nodes (have {N})")
    # half the packets to one of 9 offsets (a 3x3 window, ids mod 64), half to any node: 64 entries per offset
    # and 9 per node give the exact weights (1/2 * 1/9 = 64/1152, 1/2 * 1/64 = 9/1152)
    rows = [np.concatenate([np.repeat([(s + 8 * dy + dx) % 64 for dy in (-1, 0, 1) for dx in (-1, 0, 1)], 64),
                            np.repeat(np.arange(64), 9)]) for s in range(N)]
    return _rows(rows, np.arange(N), N)


def _background(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes
    if any(n >= N for n in tcfg["exclude"]):
        raise ConfigError("traffic.exclude", f"must name nodes below {N}")
    keep = np.setdiff1d(np.arange(N), tcfg["exclude"])
    if len(keep) == 0:
        raise ConfigError("traffic.exclude", "excludes every node")
    return _rows([keep], np.zeros(N), N)


def _slimfly_quadruples(net: Network) -> list[tuple[int, int, int, int]]:
    """Quadruples R1-R2-R3-R4 of an MMS graph in which R1, R3 and R2, R4 have a single common neighbour (R2 and
    R3), built from the algebra: groups x, x' of subgraph 0 are paired with two groups s, s' of subgraph 1;
    R1 = (0, x, y), R2 = (1, s, y - s*x), R3 = (0, x', y - s*(x - x')), R4 = (1, s', y3 - s'*x'). Each pair of
    subgraph-0 groups uses up two subgraph-1 groups, so every router is covered when q is even and all but one
    group of each subgraph when q is odd."""
    P = net.params
    F, q = P["field"], P["q"]
    add, mul, neg = F.add, F.mul, F.neg
    sub = lambda a, b: int(add[a, neg[b]])  # noqa: E731
    router = lambda s_, x, y: s_ * q * q + x * q + y  # noqa: E731
    out = []
    for k in range(q // 2):
        x, x2, s1, s2 = 2 * k, 2 * k + 1, 2 * k, 2 * k + 1
        for y in range(q):
            c = sub(y, int(mul[s1, x]))
            y3 = sub(y, int(mul[s1, sub(x, x2)]))
            c4 = sub(y3, int(mul[s2, x2]))
            out.append((router(0, x, y), router(1, s1, c), router(0, x2, y3), router(1, s2, c4)))
    return out


def _slimfly_worst(net: Network) -> np.ndarray:
    """Seed 004 §2.3 (Fig. 3): node i of R1 and R3 send to each other, as do node i of R2 and R4."""
    R = net.n_routers
    nbrs = [set() for _ in range(R)]
    for p in np.flatnonzero(net.port_peer_router >= 0):
        nbrs[int(net.port_router[p])].add(int(net.port_peer_router[p]))
    partner = -np.ones(R, dtype=np.int64)
    for r1, r2, r3, r4 in _slimfly_quadruples(net):
        partner[[r1, r3, r2, r4]] = [r3, r1, r4, r2]
    # routers the algebra left over (q odd): any quadruple among them, then any pair two hops apart
    left = [r for r in range(R) if partner[r] < 0]
    single = lambda u, v, mid: v != u and v not in nbrs[u] and nbrs[u] & nbrs[v] == {mid}  # noqa: E731
    for r1 in left:
        for r2 in sorted(nbrs[r1]):
            if partner[r1] >= 0:
                break
            for r3 in sorted(nbrs[r2]):
                if partner[r2] >= 0 or partner[r3] >= 0 or not single(r1, r3, r2):
                    continue
                r4 = next((r for r in sorted(nbrs[r3]) if partner[r] < 0 and r not in (r1, r2)
                           and single(r2, r, r3)), None)
                if r4 is not None:
                    partner[[r1, r3, r2, r4]] = [r3, r1, r4, r2]
                    break
    left = [r for r in range(R) if partner[r] < 0]
    while len(left) >= 2:
        u = left.pop(0)
        v = next((v for v in left if v not in nbrs[u]), left[0])
        left.remove(v)
        partner[u], partner[v] = v, u
    counts = np.bincount(net.node_router, minlength=R)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    dst = -np.ones(net.n_nodes, dtype=np.int64)
    for n in range(net.n_nodes):
        r = int(net.node_router[n])
        if partner[r] >= 0 and n - first[r] < counts[partner[r]]:
            dst[n] = first[partner[r]] + (n - first[r])
    return dst


def _uniform(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    return PAT_UNIFORM, None


def _hotspot(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    return PAT_HOTSPOT, None  # its nodes: traffic.hotspot_nodes (compile_traffic)


def _permutation(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes
    return PAT_TABLE, rng.permutation(N) if tcfg["to_self"] else _derangement(N, rng)


def _bitcomp(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes
    if _is_power(N, 2) is None:
        raise ConfigError("traffic.pattern", f"bitcomp needs a power-of-two node count (have {N})")
    return PAT_TABLE, (~np.arange(N)) & (N - 1)


def _transpose(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    N = net.n_nodes
    half = _is_power(N, 4)  # bits per half
    if half is None:
        raise ConfigError("traffic.pattern", f"transpose needs a node count that is a power of 4 (have {N})")
    n = np.arange(N)
    return PAT_TABLE, ((n & ((1 << half) - 1)) << half) | (n >> half)


def _shift(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    return PAT_TABLE, (np.arange(net.n_nodes) + tcfg["shift"]) % net.n_nodes


def _group_adversarial(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    if net.kind not in ("dragonfly", "slimfly"):
        raise ConfigError("traffic.pattern", "group_adversarial needs a topology with groups (dragonfly, slimfly)")
    G = int(net.topo.router_group.max()) + 1
    return PAT_GROUP, (net.topo.router_group[net.node_router] + 1) % G


def _slimfly_worst_table(net: Network, tcfg: dict, rng: np.random.Generator) -> tuple[int, Any]:
    if net.kind != "slimfly":
        raise ConfigError("traffic.pattern", "slimfly_worst needs topology.kind = \"slimfly\"")
    return PAT_TABLE, _slimfly_worst(net)


# The patterns `traffic.pattern` names: each makes (how the kernel draws a destination: P_*, its table or None)
# from the network, the `[traffic]` table and the run's pattern stream (module docstring: what each is).
PATTERNS = Registry("traffic pattern")
PATTERNS.add("uniform", "a random node other than the source", make=_uniform)
PATTERNS.add("permutation", "a random derangement (with to_self, any permutation)", make=_permutation)
PATTERNS.add("bitcomp", "dst = ~src over log2(N) bits", make=_bitcomp)
PATTERNS.add("transpose", "swap the high and low halves of the node id's bits", make=_transpose)
PATTERNS.add("tornado", "each coordinate moves ceil(k/2) - 1 (elsewhere n + ceil(N/2) - 1)",
             make=lambda net, tcfg, rng: (PAT_TABLE, _tornado(net, tcfg)))
PATTERNS.add("shift", "dst = src + traffic.shift (mod N)", make=_shift, key="shift")
PATTERNS.add("hotspot", "traffic.hotspot_fraction to traffic.hotspot_nodes, the rest uniform", make=_hotspot)
PATTERNS.add("group_adversarial", "a random node of the next group", make=_group_adversarial)
PATTERNS.add("slimfly_worst", "seed 004's worst case for minimal routing", make=_slimfly_worst_table)
PATTERNS.add("shuffle", "rotate the node id's bits left by one (BookSim2's shuffle)", make=_shuffle)
PATTERNS.add("bitrev", "reverse the node id's bits (BookSim2's bitrev)", make=_bitrev)
PATTERNS.add("neighbor", "every digit of the node id + 1 (BookSim2's neighbor; traffic.digits)", make=_neighbor)
PATTERNS.add("badperm_yarc", "a random node j*K + src // K (BookSim2's badperm_yarc; traffic.digits)",
             make=_badperm_yarc)
PATTERNS.add("diagonal", "src + 1 with probability 1/3, else src itself (BookSim2's diagonal)", make=_diagonal)
PATTERNS.add("asymmetric", "src mod N/2 in either half (BookSim2's asymmetric)", make=_asymmetric)
PATTERNS.add("taper64", "half to the 3x3 window of an 8x8 grid, half uniform; 64 nodes (BookSim2's taper64)",
             make=_taper64)
PATTERNS.add("background", "uniform over the nodes not in traffic.exclude (BookSim2's background)",
             make=_background)


def compile_traffic(net: Network, tcfg: dict, seed: int) -> Traffic:
    N = net.n_nodes
    rng = np.random.default_rng([seed, 0x7AFF1C])
    hot = np.zeros(1, dtype=np.int32)
    if N < 2:
        raise ConfigError("topology", "the network needs at least 2 nodes")
    made = PATTERNS[tcfg["pattern"]].make(net, tcfg, rng)
    pattern, table = made[0], made[1]
    if pattern == PAT_HOTSPOT:
        hot = np.asarray(tcfg["hotspot_nodes"], dtype=np.int32)
        if (hot >= N).any():
            raise ConfigError("traffic.hotspot_nodes", f"must name nodes below {N}")
    if len(made) > 2:  # rows of candidates (a random pattern of BookSim2's), drawn as PAT_GROUP
        gstart, order = made[2]
    else:
        groups = net.topo.router_group[net.node_router]
        order = np.argsort(groups, kind="stable").astype(np.int32)
        gstart = np.zeros(int(groups.max()) + 2, dtype=np.int32)
        np.cumsum(np.bincount(groups), out=gstart[1:])
    if tcfg["numbering"] == "chip":  # the pattern's ids are BookSim2's: translate nodes, reorder sources
        to = chip_ids(net)
        if pattern == PAT_TABLE:
            t = np.full(N, -1, dtype=np.int64)
            t[to] = np.where(table >= 0, to[np.maximum(table, 0)], -1)
            table = t
        elif len(made) > 2:
            t = np.zeros(N, dtype=np.int64)
            t[to] = table
            table, order = t, to[order]
        elif pattern == PAT_HOTSPOT:
            hot = to[hot]
        elif pattern != PAT_UNIFORM:
            raise ConfigError("traffic.numbering", f"chip does not apply to {tcfg['pattern']}")
    if pattern == PAT_TABLE:
        sends = table >= 0
        if sends.any() and (table[sends] == np.flatnonzero(sends)).all():  # e.g. shift by N, tornado on k = 2
            raise ConfigError("traffic." + PATTERNS[tcfg["pattern"]].attrs.get("key", "pattern"),  # its parameter's
                              f"{tcfg['pattern']} sends every node to itself on this {N}-node network")
    if table is None:
        table = np.zeros(1, dtype=np.int32)
    sizes = packet_sizes(tcfg)
    rate = tcfg["load"] / sizes.mean()
    process, alpha, beta, r1 = INJ_BERNOULLI, 0.0, 0.0, 0.0
    if tcfg["injection"] == "on_off":
        process = INJ_ON_OFF
        alpha, beta, r1 = on_off(rate, tcfg["burst_alpha"], tcfg["burst_beta"], tcfg["burst_r1"], sizes.mean())
    return Traffic(pattern=pattern, rate=rate, packet_phits=tcfg["packet_phits"],
                   table=np.asarray(table, dtype=np.int32), hot=hot, hot_frac=float(tcfg["hotspot_fraction"]),
                   group_start=gstart, group_nodes=order, to_self=bool(tcfg["to_self"]), sizes=sizes,
                   process=process, alpha=alpha, beta=beta, r1=r1)


def on_off(rate: float, alpha: float, beta: float, r1: float, size: float = 1.0) -> tuple[float, float, float]:
    """BookSim2's OnOffInjectionProcess (src/injection.cpp): exactly one of alpha, beta, r1 is negative and follows
    from the packet rate, which is r1 * alpha / (alpha + beta). A rate the other two cannot give is refused naming
    traffic.load, with the loads they can give (`size`: the mean packet size in phits, load = rate * size)."""
    if sum(v < 0 for v in (alpha, beta, r1)) != 1:
        raise ConfigError("traffic.burst_r1", f"on_off: exactly one of burst_alpha, burst_beta, burst_r1 must be "
                                              f"negative (it follows from the load); got {alpha}, {beta}, {r1}")
    given = f"burst_alpha {alpha:g}, burst_beta {beta:g}, burst_r1 {r1:g}"
    if alpha < 0:  # alpha = beta rate / (r1 - rate) <= 1
        name, lo, hi = "alpha", 0.0, r1 / (1 + beta)
        alpha = beta * rate / (r1 - rate) if r1 > rate else float("inf")
    elif beta < 0:  # beta = alpha (r1 - rate) / rate in [0, 1]
        name, lo, hi = "beta", alpha * r1 / (1 + alpha), r1
        beta = alpha * (r1 - rate) / rate
    else:  # r1 = rate (alpha + beta) / alpha <= 1
        name, lo, hi = "r1", 0.0, alpha / (alpha + beta) if alpha > 0 else 0.0
        r1 = rate * (alpha + beta) / alpha if alpha > 0 else float("inf")
    if not (0 <= alpha <= 1 and 0 <= beta <= 1 and 0 < r1 <= 1):
        fits = f"loads from {lo * size:g} to {hi * size:g} do" if hi > lo else "no load does"
        value = {"alpha": alpha, "beta": beta, "r1": r1}[name]
        raise ConfigError("traffic.load", f"on_off with {given}: load {rate * size:g} gives {name} = {value:g}, "
                                          f"not a probability; {fits}")
    return alpha, beta, r1


def packet_sizes(tcfg: dict) -> np.ndarray:
    """The sizes packets draw from: traffic.packet_sizes, each repeated by its packet_size_rates entry (BookSim2's
    packet_size with packet_size_rate), or packet_phits alone. load / mean size is the packet rate."""
    sizes, rates = tcfg["packet_sizes"], tcfg["packet_size_rates"]
    if not sizes:
        if rates:  # rates of no sizes would be ignored
            raise ConfigError("traffic.packet_size_rates", f"needs traffic.packet_sizes, one rate per size (got "
                              f"{len(rates)} rates and no sizes: every packet is packet_phits long)")
        return np.array([tcfg["packet_phits"]], dtype=np.int32)
    rates = rates or [1] * len(sizes)
    if len(rates) != len(sizes):
        raise ConfigError("traffic.packet_size_rates", f"needs one rate per size ({len(sizes)}), got {len(rates)}")
    if max(sizes) > tcfg["packet_phits"]:
        raise ConfigError("traffic.packet_sizes", f"sizes up to packet_phits = {tcfg['packet_phits']} (the largest "
                                                  f"packet, which sizes buffers), got {max(sizes)}")
    return np.repeat(np.asarray(sizes, dtype=np.int32), rates)


def background_traffic(net: Network, nodes: np.ndarray, load: float, packet_phits: int) -> Traffic:
    """Background traffic beside an MPI run (a job of kind open_loop): each of `nodes` (sorted) sends packets to
    another of them, uniformly, at `load` phits per node per cycle; every other node is silent."""
    table = np.full(net.n_nodes, -1, dtype=np.int32)
    table[nodes] = 0
    return Traffic(pattern=PAT_JOB, rate=load / packet_phits, packet_phits=packet_phits, table=table,
                   hot=np.zeros(1, dtype=np.int32), hot_frac=0.0,
                   group_start=np.array([0, len(nodes)], dtype=np.int32), group_nodes=np.asarray(nodes, np.int32),
                   to_self=False, sizes=np.array([packet_phits], dtype=np.int32), process=INJ_BERNOULLI,
                   alpha=0.0, beta=0.0, r1=0.0)
