"""Aries dragonfly (seed 003 §V-B): 2-D groups (green rows, black columns), bundled global links, few groups, and
routing on them: hop bounds, zero-load latency, conservation past saturation, determinism."""

from __future__ import annotations

import json
import time

import networkx as nx
import numpy as np
import pytest
import xarray as xr

import fastnet
from fastnet.build import build_routes
from fastnet.topology import build_network
from fastnet.build.dragonfly import BLACK
from fastnet.build.network import GLOBAL, LOCAL, NODE
from fastnet.build.routing import minimal_scan
from fastnet.errors import ConfigError
from fastnet.kernels.routing import distance, min_ports
from test_engine import LAT, single_packets

ARIES = {"kind": "dragonfly", "p": 4, "a": 96, "h": 10, "group_shape": [16, 6], "global_bundle": 4}
TRINITY = {**ARIES, "g": 25}  # 9,600 nodes (Trinity: 9,436)
DARTER = {**ARIES, "g": 2}  # 768 nodes (Darter: 748 compute and 10 service nodes in two groups)
SMALL = {"kind": "dragonfly", "p": 1, "a": 8, "h": 2, "group_shape": [4, 2], "global_bundle": 2}  # 9 groups


def test_aries_router_ports_by_hand():
    """A router of a [16, 6] group: 4 node ports, 15 green (its chassis row), 5 black (its column: the same slot in
    the other 5 chassis), 10 global; rows and columns all-to-all; black links recorded, both ends."""
    net = build_network({"topology": TRINITY})
    ps, a = net.topo.router_port_start, 96
    assert (net.n_routers, net.n_nodes, net.radix) == (2400, 9600, 4 + 15 + 5 + 10)
    assert net.link_counts() == {"injection": 9600, "local": 25 * (6 * 16 * 15 // 2 + 16 * 6 * 5 // 2),
                                 "global": 25 * 96 * 10 // 2}
    for r in (0, 17, 95, 1234, 2399):
        ports = np.arange(ps[r], ps[r + 1])
        cls, peer, wire = net.port_class[ports], net.port_peer_router[ports], net.port_wire[ports]
        assert list(cls) == [NODE] * 4 + [LOCAL] * 20 + [GLOBAL] * 10
        G, i = divmod(r, a)
        row = {G * a + (i // 16) * 16 + x for x in range(16)} - {r}
        column = {G * a + y * 16 + i % 16 for y in range(6)} - {r}
        assert set(peer[4:19]) == row and set(peer[19:24]) == column
        assert list(wire) == [0] * 19 + [BLACK] * 5 + [0] * 10
        assert all(net.topo.router_group[peer[24:]] != G)
    assert int(net.port_wire.sum()) == 2 * 25 * 16 * 15  # black half-links
    peer = net.port_peer_port
    black = np.flatnonzero(net.port_wire == BLACK)
    assert (net.port_wire[peer[black]] == BLACK).all() and (net.port_class[black] == LOCAL).all()


def global_links_between_groups(net) -> np.ndarray:
    g = int(net.topo.router_group.max()) + 1
    ports = np.flatnonzero(net.port_class == GLOBAL)
    grp = net.topo.router_group
    counts = np.zeros((g, g), dtype=int)
    np.add.at(counts, (grp[net.port_router[ports]], grp[net.port_peer_router[ports]]), 1)
    return counts


@pytest.mark.parametrize("topology,per_pair,holders", [
    (TRINITY, 40, (10, 20)), (DARTER, 960, (96, 96)), ({**ARIES, "g": 241}, 4, (1, 2)),
])
def test_bundled_global_links_spread_over_the_group(topology, per_pair, holders):
    """a*h/bundle = 240 logical links a group, each 4 physical links: at most 241 groups; with g groups every pair
    of groups is joined by 240/(g-1) logical links, every g - 1 logical links (9.6 routers for Trinity) apart."""
    net = build_network({"topology": topology})
    counts = global_links_between_groups(net)
    g = len(counts)
    off = ~np.eye(g, dtype=bool)
    assert (counts[off] == per_pair).all() and (np.diag(counts) == 0).all()
    # the routers of group 0 holding its links to group 1: a logical link's 4 ports lie on 1 or 2 routers
    ports = np.flatnonzero((net.port_class == GLOBAL) & (net.topo.router_group[net.port_router] == 0)
                           & (net.topo.router_group[net.port_peer_router] == 1))
    held_by = np.unique(net.port_router[ports])
    assert holders[0] <= len(held_by) <= holders[1]
    assert len(held_by) == 1 or np.diff(held_by).max() <= 10


def test_aries_size_limits_and_build_time():
    t0 = time.perf_counter()
    net = build_network({"topology": {**ARIES, "g": 241}})
    build_routes(net)
    assert time.perf_counter() - t0 < 10  # 23,136 routers, 92,544 nodes
    assert net.n_nodes == 241 * 96 * 4
    with pytest.raises(ConfigError, match=r"topology.g: must be <= a\*h/global_bundle \+ 1 = 241"):
        build_network({"topology": {**ARIES, "g": 242}})
    with pytest.raises(ConfigError, match=r"topology.g: g - 1 must divide a\*h/global_bundle = 240"):
        build_network({"topology": {**ARIES, "g": 24}})


@pytest.mark.parametrize("topology,field", [
    ({**ARIES, "group_shape": [16, 5]}, "topology.group_shape"),
    ({**ARIES, "group_shape": [95]}, "topology.group_shape"),
    ({**ARIES, "group_shape": [4, 4, 6]}, "topology.group_shape"),
    ({**ARIES, "group_shape": [16, 0]}, "topology.group_shape"),
    ({**ARIES, "global_bundle": 7}, "topology.global_bundle"),
    ({**ARIES, "global_bundle": 0}, "topology.global_bundle"),
])
def test_bad_shape_or_bundle_is_one_line(topology, field):
    with pytest.raises(ConfigError) as e:
        build_network({"topology": topology})
    assert e.value.field == field and "\n" not in str(e.value)


def test_group_shape_of_one_row_is_the_canonical_dragonfly():
    base = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}
    nets = [build_network({"topology": {**base, "group_shape": s}}) for s in ("auto", [4], [4, 1])]
    for net in nets[1:]:
        assert (net.topo.port == nets[0].topo.port).all() and net.port_wire is None


def hierarchical_distance(net, r: int, d: int, a: int) -> int:
    """Independent oracle: shortest path with at most one global hop, local parts inside the groups."""
    G = nx.Graph()
    ports = np.flatnonzero(net.port_class == LOCAL)
    G.add_edges_from(zip(net.port_router[ports].tolist(), net.port_peer_router[ports].tolist()))
    if r // a == d // a:
        return nx.shortest_path_length(G, r, d)
    best = 99
    for o in np.flatnonzero((net.port_class == GLOBAL) & (net.port_router // a == r // a)
                            & (net.port_peer_router // a == d // a)):
        u, v = int(net.port_router[o]), int(net.port_peer_router[o])
        best = min(best, nx.shortest_path_length(G, r, u) + 1 + nx.shortest_path_length(G, v, d))
    return best


def test_min_is_hierarchical_and_at_most_five_hops():
    """Seed 003 §V-B: MIN takes at most 5 router-to-router hops (2 local in the source group, the global one, 2 in
    the destination group). Every pair of routers of the small network, one packet at a time, at zero load."""
    cfg = {"topology": SMALL, "links": LAT, "router": {"delay": 2, "buffer_phits": 8}, "traffic": {"packet_phits": 4}}
    n = 72
    pairs = [(s, d) for s in range(n) for d in range(n) if s != d]
    s, res = single_packets(cfg, pairs, 4)
    lat, _, hops, hl, hg = res.T
    assert hops.max() == 5 and (hg == (np.array([a // 8 != b // 8 for a, b in pairs]))).all()
    np.testing.assert_array_equal(lat, 2 * LAT["latency_injection"] + LAT["latency_local"] * hl
                                  + LAT["latency_global"] * hg + (hops + 1) * 2 + 3)
    net = s.net
    for k in range(0, len(pairs), 37):  # the oracle is slow in Python: a sample of the pairs
        assert hops[k] == hierarchical_distance(net, *pairs[k], 8), pairs[k]


def test_val_is_at_most_eight_hops():
    """Valiant through a random intermediate group: l l g l l g l l, at most 8 hops, always 2 global ones (PPT's
    14 counts a random intermediate router in each of the three groups: 4 + 1 + 4 + 1 + 4; docs/config.md)."""
    cfg = {"topology": SMALL, "routing": {"algorithm": "val"}, "router": {"buffer_phits": 8},
           "traffic": {"packet_phits": 4}}
    rng = np.random.default_rng(1)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 72, size=(1500, 2)) if a != b]
    _, res = single_packets(cfg, pairs, 4)
    hops, hg = res[:, 2], res[:, 4]
    assert (hg == 2).all() and hops.max() == 8 and hops.min() >= 2


SPREAD = {"kind": "dragonfly", "p": 2, "a": 6, "h": 2, "g": 5, "group_shape": [3, 2]}  # gateways to a group in
# different rows and columns (3 a pair): minimal routing has ties to break (kernels/minimal.py _df_scan)
BUNDLED = {"kind": "dragonfly", "p": 2, "a": 6, "h": 2, "g": 3, "group_shape": [3, 2], "global_bundle": 2}


@pytest.mark.parametrize("topology", [SPREAD, BUNDLED])
@pytest.mark.parametrize("routing", ["min", "val", "ugal_l", "ugal_g"])
@pytest.mark.parametrize("pattern", ["uniform", "group_adversarial"])
def test_no_deadlock_past_saturation(topology, routing, pattern):
    """simulate() audits conservation (every packet, every VC's credits); the watchdog would raise on a deadlock.
    The VCs are the canonical dragonfly's: 2-D groups need no more."""
    ds = fastnet.run({"topology": topology, "routing": {"algorithm": routing},
                      "traffic": {"pattern": pattern, "load": 1.0, "packet_phits": 4}, "router": {"buffer_phits": 8},
                      "sim": {"warmup": 500, "measure": 2500, "drain": 0}})
    assert ds.packets_delivered > 0 and ds.unstable == 1
    assert ds.packets_created == ds.packets_delivered + ds.packets_in_flight + ds.packets_queued
    router = json.loads(ds.attrs["config"])["router"]
    assert (router["vcs"], router["vcs_global"]) == ((2, 1) if routing == "min" else (3, 2))


def test_darter_carries_uniform_traffic_on_minimal_paths():
    """Two Aries groups (Darter), 960 global links between them: UGAL-L at load 0.2 carries what is offered on
    minimal paths (at most 5 hops, one global hop for the half of the traffic that changes group)."""
    ds = fastnet.run({"topology": DARTER, "routing": {"algorithm": "ugal_l"},
                      "traffic": {"load": 0.2, "packet_phits": 4}, "sim": {"warmup": 300, "measure": 600,
                                                                           "drain": 600}})
    assert ds.unstable == 0 and abs(float(ds.accepted_phits_per_node_cycle) - 0.2) < 0.03
    assert float(ds.hops_mean) <= 5 and float(ds.hops_global_mean) < 0.6  # about half the pairs cross


def test_same_seed_same_dataset():
    cfg = {"topology": SMALL, "routing": {"algorithm": "ugal_l"}, "traffic": {"load": 0.5, "packet_phits": 3},
           "sim": {"warmup": 200, "measure": 800, "drain": 300}}
    a, b = fastnet.run(cfg), fastnet.run(cfg)
    xr.testing.assert_identical(a.assign_attrs(wall_seconds=0.0), b.assign_attrs(wall_seconds=0.0))
    c = fastnet.run(fastnet.config.merge(cfg, {"sim": {"seed": 2}}))
    assert float(c.packet_latency_mean) != float(a.packet_latency_mean)


def test_algebraic_distance_is_dimension_order():
    """The scan's path length: 2 local hops between routers in different rows and columns of a group."""
    net = build_network({"topology": SMALL})
    rt = build_routes(net)
    buf = np.zeros(64, np.int64)
    dist = lambda r, d: distance(net.topo.router_port_start, net.topo.port, rt.dist, rt.ip, rt.alg, r, d, buf,  # noqa
                                 minimal_scan(rt))
    assert [dist(0, d) for d in range(8)] == [0, 1, 1, 1, 1, 2, 2, 2]  # row 0: routers 0-3, row 1: 4-7


@pytest.mark.parametrize("topology,diameter", [
    (SMALL, 5), ({**SMALL, "g": 5, "arrangement": "palmtree"}, 4),
    ({**SMALL, "group_shape": [2, 4], "h": 3, "global_bundle": 3, "g": 3}, 4),
    # gateways to a group in different rows and columns: where ties need the tie-break (kernels/minimal.py)
    ({"kind": "dragonfly", "p": 1, "a": 6, "h": 1, "g": 3, "group_shape": [3, 2]}, 3),
    ({"kind": "dragonfly", "p": 1, "a": 6, "h": 2, "g": 5, "group_shape": [3, 2]}, 3),
])
def test_every_minimal_path_keeps_dimension_order(topology, diameter):
    """Every path minimal routing can take (any candidate port at every router, as the route is recomputed at each
    hop): as long as the scan's distance, one global hop at most, and inside each group row hops before column
    hops, at most one of each; so the local hops of one VC class never turn from a column to a row."""
    net = build_network({"topology": topology})
    rt = build_routes(net)
    ps, port = net.topo.router_port_start, net.topo.port
    buf = np.zeros(64, np.int64)
    scan = minimal_scan(rt)

    def candidates(r, d):
        n = min_ports(ps, port, rt.dist, rt.ip, rt.alg, r, d, buf, scan)
        return [int(o) for o in buf[:n]]

    def walk(r, d, left, phase):  # phase: the kinds of local hops taken since the last global hop
        if r == d:
            return 1
        assert left > 0
        paths = 0
        for o in candidates(r, d):
            if net.port_class[o] == GLOBAL:
                assert "g" not in phase
                step = phase + "g"
            else:
                kind = "c" if net.port_wire[o] == BLACK else "r"
                local = phase.rsplit("g", 1)[-1]
                assert kind not in local and not (kind == "r" and "c" in local), (r, d, phase)
                step = phase + kind
            paths += walk(int(net.port_peer_router[o]), d, left - 1, step)
        return paths

    dist = lambda r, d: distance(ps, port, rt.dist, rt.ip, rt.alg, r, d, buf, scan)  # noqa: E731
    longest = 0
    for r in range(net.n_routers):
        for d in range(net.n_routers):
            length = dist(r, d)
            longest = max(longest, length)
            assert walk(r, d, length, "") >= 1
    assert longest == diameter
