"""A run's failures: the links and routers down at each cycle, checked against the routing before the run, and
applied to the running network between two cycles (docs/faults.md).

`plan_faults` reads the `[faults]` section and returns a FaultPlan: the initial failures and the events, each
fault state already checked (every link named exists; the routing can detour around it; no node pair is cut
off unless `allow_disconnected`). `FaultPlan.start` gives prepare() the network as the kernels see it (a failed
port has no peer router) and, for table routings, the distance table of the live network; `FaultPlan.apply`
brings the run to the next event's state (kernel.fail for what goes down, and the table recomputed).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..build.network import GLOBAL, LOCAL, NODE, P_PEER_ROUTER, Network
from ..build.routing import SCAN_TABLE, UNREACHABLE, IP_DIAMETER, Routes, _bfs_all, minimal_scan
from ..errors import ConfigError

DETOUR_ROUTINGS = ("min", "val", "ugal_l", "ugal_g", "ksp")


@dataclass
class FaultState:
    links: frozenset[tuple[int, int]]  # router pairs (u < v), every link between them down
    routers: frozenset[int]


@dataclass
class FaultPlan:
    table: bool  # the routing reads a distance table, recomputed at each change
    updown: np.ndarray | None  # a fat tree's up*/down* routing: each switch's level (its table: updown_reach)
    states: list[tuple[int, FaultState]]  # (cycle from which it holds, state), the first at cycle 0
    peer: np.ndarray  # int32[P] the peer router of every port, as built
    pair_u: np.ndarray  # int64[P] the router pair of every network port (u < v); -1 on node ports
    pair_v: np.ndarray
    n_routers: int
    n_leaves: int = 0  # a fat tree's level-0 switches
    step: int = 0  # states[step] is in force
    failed_since: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # -1: up
    failed_cycles: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    recompute_seconds: list[float] = field(default_factory=list)  # one per distance-table recompute

    @property
    def fails(self) -> bool:
        """Whether anything is down at some cycle: else the kernels run as without the section (prepare)."""
        return any(state.links or state.routers for _, state in self.states)

    @property
    def next_cycle(self) -> int:
        """The cycle of the next change (a very large number when there is none)."""
        return self.states[self.step + 1][0] if self.step + 1 < len(self.states) else 2**62

    def ports_of(self, u: int, v: int) -> np.ndarray:
        """The ports of the links between routers u and v, at both ends."""
        return np.flatnonzero((self.pair_u == min(u, v)) & (self.pair_v == max(u, v)))

    def dead_ports(self, state: FaultState) -> np.ndarray:
        """bool[P]: ports without a link in `state` (node ports of a failed router keep theirs)."""
        net_port = self.pair_u >= 0
        dead = np.zeros(len(self.peer), dtype=bool)
        if state.links:
            keys = self.pair_u * self.n_routers + self.pair_v
            down = np.array([u * self.n_routers + v for u, v in state.links], dtype=np.int64)
            dead |= net_port & np.isin(keys, down)
        if state.routers:
            gone = np.zeros(self.n_routers, dtype=bool)
            gone[list(state.routers)] = True
            dead |= net_port & (gone[np.maximum(self.pair_u, 0)] | gone[np.maximum(self.pair_v, 0)])
        return dead

    def start(self, net: Network, routes: Routes) -> tuple[Network, Routes]:
        """The network with the first state's failures, and its routes (the table of the live network, and a
        diameter that is the longest any state's live network has, which sizes the hop-indexed VC classes)."""
        state = self.states[0][1]
        dead = self.dead_ports(state)
        port = net.topo.port.copy()
        port[dead, P_PEER_ROUTER] = -1
        net = dataclasses.replace(net, topo=net.topo._replace(port=port))
        self.failed_since = np.where(dead, 0, -1).astype(np.int64)
        self.failed_cycles = np.zeros(len(dead), dtype=np.int64)
        if self.updown is not None:
            routes = routes._replace(alg=updown_reach(port, self.peer, self.updown, self.n_leaves, state.routers))
        elif self.table:
            ip = routes.ip.copy()
            ip[IP_DIAMETER] = max(_diameter(live_distances(net.topo.port, self.peer, self.dead_ports(s),
                                                           self.n_routers, s.routers)) for _, s in self.states)
            routes = routes._replace(dist=live_distances(port, self.peer, dead, self.n_routers, state.routers),
                                     ip=ip)
        return net, routes

    def apply(self, s: Any, t: int) -> None:
        """Bring run `s` to the state that starts at cycle t."""
        from .kernel import fail

        old, new = self.states[self.step][1], self.states[self.step + 1][1]
        self.step += 1
        was, now = self.dead_ports(old), self.dead_ports(new)
        port = s.net.topo.port
        up = np.flatnonzero(was & ~now)
        down = np.flatnonzero(now & ~was)
        port[up, P_PEER_ROUTER] = self.peer[up]
        port[down, P_PEER_ROUTER] = -1
        self.failed_cycles[up] += t - self.failed_since[up]
        self.failed_since[up] = -1
        self.failed_since[down] = t
        routers = np.array(sorted(new.routers - old.routers), dtype=np.int64)
        fail(s.net.topo, s.params, s.state, down.astype(np.int64), routers, t)
        t0 = time.perf_counter()
        if self.updown is not None:
            s.routes.alg[:] = updown_reach(port, self.peer, self.updown, self.n_leaves, new.routers)
        elif self.table:
            s.routes.dist[:] = live_distances(port, self.peer, now, self.n_routers, new.routers)
        if self.updown is not None or self.table:
            self.recompute_seconds.append(time.perf_counter() - t0)

    def restore(self, s: Any) -> None:
        """Bring a freshly prepared run `s` (its network in the first state) to the state in force at this plan's
        step, as the `apply` calls up to it left the network and routes: a resumed run's (fastnet/checkpoint.py;
        its packets and credits come back with the checkpoint's state)."""
        state = self.states[self.step][1]
        dead = self.dead_ports(state)
        port = s.net.topo.port
        port[:, P_PEER_ROUTER] = np.where(dead, -1, self.peer)
        if self.updown is not None:
            s.routes.alg[:] = updown_reach(port, self.peer, self.updown, self.n_leaves, state.routers)
        elif self.table:
            s.routes.dist[:] = live_distances(port, self.peer, dead, self.n_routers, state.routers)

    def port_failed_cycles(self, end: int) -> np.ndarray:
        """Cycles each port spent failed from cycle 0 to `end`."""
        out = self.failed_cycles.copy()
        down = self.failed_since >= 0
        out[down] += end - self.failed_since[down]
        return out


def live_distances(port: np.ndarray, peer: np.ndarray, dead: np.ndarray, n_routers: int,
                   routers: frozenset[int]) -> np.ndarray:
    """uint8[R, R] hop distances over the links that are up; a failed router is unreachable, from itself too."""
    live = (port[:, 3] != NODE) & ~dead
    src = port[live, 0].astype(np.int64)
    nbr = peer[live].astype(np.int32)
    start = np.zeros(n_routers + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n_routers), out=start[1:])
    dist = _bfs_all(start, nbr[np.argsort(src, kind="stable")], n_routers)
    if routers:
        gone = list(routers)
        dist[gone, :] = UNREACHABLE
        dist[:, gone] = UNREACHABLE
    return dist


def updown_reach(port: np.ndarray, peer: np.ndarray, level: np.ndarray, n_leaves: int,
                 routers: frozenset[int]) -> np.ndarray:
    """int32[R, leaves] of a fat tree with failures: bit 1 if switch r reaches leaf d going only down over live
    links, bit 0 if it reaches it up*/down* (up, then down). A failed port has no peer (P_PEER_ROUTER = -1), a
    failed router no live port: it reaches nothing, not even itself."""
    R = len(level)
    live = (port[:, 3] != NODE) & (port[:, P_PEER_ROUTER] >= 0)
    src, dst = port[live, 0].astype(np.int64), peer[live].astype(np.int64)
    alive = np.ones(R, dtype=bool)
    alive[list(routers)] = False
    down = np.zeros((R, n_leaves), dtype=bool)
    leaves = np.flatnonzero(alive[:n_leaves])
    down[leaves, leaves] = True
    for lvl in range(1, int(level.max()) + 1):  # bottom-up: a switch reaches down what its live children do
        e = (level[src] == lvl) & (level[dst] == lvl - 1)
        np.logical_or.at(down, src[e], down[dst[e]])
    reach = down.copy()
    for lvl in range(int(level.max()) - 1, -1, -1):  # top-down: or up to a live parent that reaches it
        e = (level[src] == lvl) & (level[dst] == lvl + 1)
        np.logical_or.at(reach, src[e], reach[dst[e]])
    return (reach.astype(np.int32) | (down.astype(np.int32) << 1))


def _diameter(dist: np.ndarray) -> int:
    finite = dist[dist != UNREACHABLE]
    return int(finite.max()) if finite.size else 1


def _supported(net: Network, routing: str, table: bool) -> str | None:
    """Why failures cannot be simulated with this routing on this network, or None."""
    kind = net.kind
    if kind == "dragonfly" and routing in ("min", "val", "ugal_l", "ugal_g"):
        return None
    if kind in ("torus", "mesh"):  # val and ugal route by dimension order in each phase: no detour for them
        return None if routing in ("dor", "adaptive") or (routing == "min" and table) else (
            f"{routing} routing on a {kind} does not route around failures; on a {kind}: dor, adaptive, or min "
            "(with a routing table)")
    if kind == "fattree" and routing == "updown":
        return None
    if table and kind not in ("fattree", "hyperx", "dragonfly") and routing in DETOUR_ROUTINGS:
        return None
    return (f"{routing} routing on a {kind} does not route around failures; supported: dragonfly with min, val, "
            f"ugal_l or ugal_g; torus and mesh with dor or adaptive; fat tree with updown; min, val, ugal_l, ugal_g or ksp on a "
            f"network small enough for a routing table (graph, jellyfish, slimfly, torus, mesh)")


def plan_faults(cfg: dict[str, Any], net: Network, routes: Routes) -> FaultPlan:
    """Check cfg["faults"] against the network and routing; ConfigError names the field and what is wrong."""
    f = cfg["faults"]
    routing = cfg["routing"]["algorithm"]
    table = minimal_scan(routes) == SCAN_TABLE
    peer, pair_u, pair_v, pairs = _port_pairs(net)
    names = _Names(pairs, net.n_routers, net.kind, routing, table)
    states = _with_events(f, names, _at_start(f, names))
    updown = _switch_levels(net) if routing == "updown" else None
    plan = FaultPlan(table=table and updown is None, updown=updown, states=states, peer=peer, pair_u=pair_u,
                     pair_v=pair_v, n_routers=net.n_routers,
                     n_leaves=net.params["switches_per_level"] if updown is not None else 0)
    why = _supported(net, routing, table)
    if why and plan.fails:  # with nothing failed, any routing (a sweep over faults.fraction starts at 0)
        raise ConfigError("faults", why)
    closed = _check_open_loop(cfg, f, states)
    if not f["allow_disconnected"]:
        for cycle, s in states:
            problem = _disconnected(plan, net, routes, routing, s)
            if problem:  # a closed loop may not drop packets (_check_open_loop): no advice to let it
                raise ConfigError("faults", f"{problem} (from cycle {cycle}); " + (
                    "a closed-loop workload needs every destination reachable: fail fewer links or routers, or "
                    "choose a routing that goes around them" if closed else
                    "set faults.allow_disconnected = true to drop and count the traffic that cannot arrive instead"))
    return plan


def _port_pairs(net: Network) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[tuple[int, int], int]]:
    """Each port's peer router as built; the router pair (u < v) of every network port (-1, -1 on node ports);
    and the link class of every linked router pair."""
    port = net.topo.port
    peer = port[:, P_PEER_ROUTER].copy()
    cls = port[:, 3]
    is_net = cls != NODE
    router = port[:, 0].astype(np.int64)
    pair_u = np.where(is_net, np.minimum(router, peer), -1).astype(np.int64)
    pair_v = np.where(is_net, np.maximum(router, peer), -1).astype(np.int64)
    pairs: dict[tuple[int, int], int] = {}  # router pair -> link class
    for u, v, c in zip(pair_u[is_net].tolist(), pair_v[is_net].tolist(), cls[is_net].tolist()):
        pairs[(u, v)] = c
    return peer, pair_u, pair_v, pairs


@dataclass
class _Names:
    """Checks the links and routers a [faults] section names against the network and its routing."""
    pairs: dict[tuple[int, int], int]  # linked router pair (u < v) -> link class
    n_routers: int
    kind: str  # the topology
    routing: str
    table: bool  # the routing reads a distance table

    def link(self, u: int, v: int, fld: str) -> tuple[int, int]:
        """The router pair of link [u, v] (u < v); ConfigError on `fld` if it is no link or may not fail."""
        R = self.n_routers
        key = (min(u, v), max(u, v))
        if key not in self.pairs:
            raise ConfigError(fld, f"routers {u} and {v} are not linked" if max(u, v) < R else
                              f"router {max(u, v)} does not exist (the network has {R} routers: 0..{R - 1})")
        if self.kind == "dragonfly" and self.pairs[key] == LOCAL:
            raise ConfigError(fld, f"[{u}, {v}] is a link inside a dragonfly group; only global links may fail "
                              "(routing has no VC class for a detour inside a group)")
        return key

    def router(self, r: int, fld: str) -> int:
        """Router r; ConfigError on `fld` if it does not exist or the routing cannot route around its failure."""
        R = self.n_routers
        if r >= R:
            raise ConfigError(fld, f"router {r} does not exist (the network has {R} routers: 0..{R - 1})")
        if not (self.routing == "updown" or (self.table and self.kind != "dragonfly"
                                             and self.routing in DETOUR_ROUTINGS)):
            why = ("a dragonfly routes by its groups' algebra, not by a table" if self.kind == "dragonfly" else
                   "it is not routed by a table" if not self.table else f"{self.routing} has no detour around a router")
            raise ConfigError(fld, "a router may fail only under updown on a fat tree or a table routing (min, val, "
                              "ugal_l, ugal_g, ksp on a network small enough for a routing table, not a dragonfly); "
                              f"this run uses {self.routing} on a {self.kind}: {why}")
        return r


def _at_start(f: dict[str, Any], names: _Names) -> FaultState:
    """The failures from cycle 0: the links and routers named, and a random `fraction` of the links of
    `link_class` (drawn with faults.seed): the first of one random order of them, so that with one seed a larger
    fraction fails the links of every smaller one and more (a sweep over the fraction adds failures)."""
    links = {names.link(u, v, "faults.links") for u, v in f["links"]}
    routers = {names.router(r, "faults.routers") for r in f["routers"]}
    if f["fraction"] > 0:
        wanted = {"any": (LOCAL, GLOBAL), "local": (LOCAL,), "global": (GLOBAL,)}[f["link_class"]]
        if names.kind == "dragonfly" and f["link_class"] != "global":
            raise ConfigError("faults.link_class", "must be \"global\" on a dragonfly (only its global links may "
                              "fail)")
        pool = sorted(k for k, c in names.pairs.items() if c in wanted)
        if not pool:
            raise ConfigError("faults.link_class", f"the network has no {f['link_class']} links")
        n = round(f["fraction"] * len(pool))
        rng = np.random.default_rng(f["seed"])
        links |= {pool[i] for i in rng.permutation(len(pool))[:n].tolist()}
    return FaultState(frozenset(links), frozenset(routers))


def _with_events(f: dict[str, Any], names: _Names, state: FaultState) -> list[tuple[int, FaultState]]:
    """The states in cycle order, `state` from cycle 0, then one for each cycle with events (faults.events, in
    cycle order; each fails what is up or recovers what is down)."""
    states = [(0, state)]
    for i, event in sorted(enumerate(f["events"]), key=lambda ie: ie[1][0]):
        fld = f"faults.events[{i}]"
        cycle, action, *ends = event
        if len(ends) == 1:
            r = names.router(ends[0], fld)
            if (r in state.routers) == (action == "fail"):
                raise ConfigError(fld, f"router {r} is {'already' if action == 'fail' else 'not'} down at "
                                  f"cycle {cycle}")
            state = FaultState(state.links, state.routers | {r} if action == "fail" else state.routers - {r})
        else:
            u, v = ends
            key = names.link(u, v, fld)
            if (key in state.links) == (action == "fail"):
                raise ConfigError(fld, f"link [{u}, {v}] is {'already' if action == 'fail' else 'not'} down at "
                                  f"cycle {cycle}")
            state = FaultState(state.links | {key} if action == "fail" else state.links - {key}, state.routers)
        if cycle == states[-1][0]:
            states[-1] = (cycle, state)
        else:
            states.append((cycle, state))
    return states


def _check_open_loop(cfg: dict[str, Any], f: dict[str, Any], states: list[tuple[int, FaultState]]) -> bool:
    """A closed-loop workload cannot lose packets: only failures from the start, on a connected network. Whether
    the workload is a closed loop."""
    from ..workloads.build import workload_section

    closed = workload_section(cfg)["kind"] != "open_loop"
    if closed and (len(states) > 1 or f["allow_disconnected"]):
        raise ConfigError("faults.events" if len(states) > 1 else "faults.allow_disconnected",
                          "a closed-loop workload cannot lose packets (its messages would never complete): use "
                          "failures from the start on a network that stays connected, or open-loop traffic")
    return closed


def _switch_levels(net: Network) -> np.ndarray:
    """A fat tree's switches' levels (0: the leaves), for up*/down* routing."""
    S = net.params["switches_per_level"]
    return np.minimum(np.arange(net.n_routers) // S, net.params["n"] - 1)


def _disconnected(plan: FaultPlan, net: Network, routes: Routes, routing: str, s: FaultState) -> str | None:
    """A node pair the routing cannot connect in state s, in words, or None."""
    dead = plan.dead_ports(s)
    with_nodes = np.flatnonzero(np.bincount(net.topo.node[:, 0], minlength=net.n_routers) > 0)
    for r in sorted(s.routers):
        if r in set(with_nodes.tolist()):
            return f"router {r} has failed, and with it its nodes"
    if net.kind == "dragonfly":
        return _dragonfly_cut(plan, net, routing, dead)
    port = net.topo.port.copy()
    port[dead, P_PEER_ROUTER] = -1
    if plan.updown is not None:
        reach = updown_reach(port, plan.peer, plan.updown, plan.n_leaves, s.routers)[np.ix_(with_nodes, with_nodes)] & 1
        if not reach.all():
            i, j = np.argwhere(reach == 0)[0]
            return f"leaf switches {with_nodes[i]} and {with_nodes[j]} have no live up*/down* path"
        return None
    if net.kind in ("torus", "mesh") and routing in ("dor", "adaptive"):
        return _ring_cut(plan, net, routes, s)
    dist = live_distances(port, plan.peer, dead, net.n_routers, s.routers)
    sub = dist[np.ix_(with_nodes, with_nodes)]
    if (sub == UNREACHABLE).any():
        i, j = np.argwhere(sub == UNREACHABLE)[0]
        return f"routers {with_nodes[i]} and {with_nodes[j]} are disconnected"
    return None


def _dragonfly_cut(plan: FaultPlan, net: Network, routing: str, dead: np.ndarray) -> str | None:
    group = net.topo.router_group
    g = int(group.max()) + 1
    port = net.topo.port
    live = (port[:, 3] == GLOBAL) & ~dead
    direct = np.zeros((g, g), dtype=bool)
    direct[group[port[live, 0]], group[plan.peer[live]]] = True
    np.fill_diagonal(direct, True)
    reach = direct if routing == "min" else direct | ((direct.astype(np.int64) @ direct.astype(np.int64)) > 0)
    if reach.all():
        return None
    a, b = np.argwhere(~reach)[0]
    how = "no global link is up between them (min routing has no detour)" if routing == "min" else \
        "neither a global link nor a group with links to both is up"
    return f"dragonfly groups {a} and {b} are disconnected: {how}"


def _ring_cut(plan: FaultPlan, net: Network, routes: Routes, s: FaultState) -> str | None:
    """Dimension-order routing detours only along its ring: a torus ring may lose one link, a mesh line none."""
    dims = net.params["dims"]
    stride = np.cumprod([1] + list(dims[:-1]))
    wrap = net.kind == "torus"
    per_ring: dict[tuple[int, int], int] = {}
    for u, v in sorted(s.links):
        diff = [(u // st) % k != (v // st) % k for st, k in zip(stride, dims)]
        dim = diff.index(True)
        ring = (dim, u - ((u // stride[dim]) % dims[dim]) * stride[dim])
        # a torus ring of two joins its routers by both of its links: failing the pair cuts it
        per_ring[ring] = per_ring.get(ring, 0) + (2 if wrap and dims[dim] == 2 else 1)
        if per_ring[ring] > (1 if wrap else 0):
            what = "ring" if wrap else "line"
            return (f"the {what} of dimension {dim} through router {u} has lost "
                    f"{per_ring[ring]} link{'s' if per_ring[ring] > 1 else ''}, and dimension-order routing "
                    f"can only go round one failed link per ring")
    return None
