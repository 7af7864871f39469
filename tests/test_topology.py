"""Topology invariants, BookSim2 wiring, algebraic routing against tables, networkx round trip."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from fastnet.build import build_routes, from_networkx, to_networkx

from fastnet.topology import build_network, network_from_graph
from fastnet.build.gf import field, prime_power
from fastnet.build.routing import diameter, is_table, minimal_scan
from fastnet.errors import ConfigError
from fastnet.kernels.routing import distance, min_ports


def net_of(**topology):
    return build_network({"topology": topology})


def router_graph(net) -> nx.MultiGraph:
    G = nx.MultiGraph()
    G.add_nodes_from(range(net.n_routers))
    ports = np.flatnonzero(net.port_peer_router >= 0)
    for p in ports[net.port_peer_port[ports] > ports]:
        G.add_edge(int(net.port_router[p]), int(net.port_peer_router[p]))
    return G


def check_ports_symmetric(net):
    ports = np.flatnonzero(net.port_peer_router >= 0)
    peer = net.port_peer_port[ports]
    assert (net.port_peer_port[peer] == ports).all()
    assert (net.port_router[peer] == net.port_peer_router[ports]).all()
    assert (net.port_class[peer] == net.port_class[ports]).all()
    node_ports = np.flatnonzero(net.port_peer_router < 0)
    assert (net.node_port[net.port_peer_port[node_ports]] == node_ports).all()


@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9, 13])
def test_slimfly_mms_properties(q):
    net = net_of(kind="slimfly", q=q, p=1)
    delta = {1: 1, 3: -1, 0: 0}[q % 4]
    G = router_graph(net)
    assert net.n_routers == 2 * q * q
    degrees = {d for _, d in G.degree()}
    assert degrees == {(3 * q - delta) // 2}
    assert nx.number_of_selfloops(G) == 0 and not any(len(G[u][v]) > 1 for u, v in G.edges())
    assert nx.diameter(nx.Graph(G)) == 2
    check_ports_symmetric(net)


def test_slimfly_paper_configuration():
    net = net_of(kind="slimfly", q=13, p=9)  # seed 004 §3
    assert (net.n_nodes, net.n_routers, net.radix) == (3042, 338, 28)


def test_gf_prime_power_fields():
    for q in (4, 8, 9, 16, 25, 27):
        F = field(q)
        a = np.arange(q)
        assert (F.add[a, F.neg] == 0).all()
        nonzero = a[1:]
        assert all((F.mul[x, nonzero] != 0).all() for x in nonzero)  # no zero divisors
        assert len({F.power(F.xi, k) for k in range(q - 1)}) == q - 1  # ξ is primitive
    assert prime_power(12) is None and prime_power(49) == (7, 2)


def booksim_dragonfly_port(rID: int, dest: int, p: int, a: int) -> int:
    """BookSim2 dragonfly.cpp `dragonfly_port` (min routing output port), written out from its formula."""
    grp_ID, dest_grp = rID // a, dest // (a * p)
    if dest_grp == grp_ID:
        grp_RID = dest // p
    else:
        grp_output = dest_grp if grp_ID > dest_grp else dest_grp - 1
        grp_RID = grp_output // p + grp_ID * a
    if rID * p <= dest < (rID + 1) * p:
        return dest % p
    if grp_RID == rID:
        grp_output = dest_grp if grp_ID > dest_grp else dest_grp - 1
        return p + (a - 1) + grp_output % p
    return (grp_RID % a) - 1 + p if rID < grp_RID else (grp_RID % a) + p


def test_dragonfly_equals_booksim_dragonflynew_k4():
    net = net_of(kind="dragonfly", p=4, a=8, h=4)
    rt = build_routes(net)
    assert (net.n_nodes, net.n_routers, net.radix) == (1056, 264, 15)
    assert net.link_counts() == {"injection": 1056, "local": 33 * 28, "global": 33 * 32 // 2}
    check_ports_symmetric(net)
    buf = np.zeros(64, dtype=np.int64)
    ps = net.topo.router_port_start
    for r in range(net.n_routers):
        for dest in range(0, net.n_nodes, 7):
            d = int(net.node_router[dest])
            local = int(net.node_port[dest] - ps[d]) if d == r else None
            if d == r:
                ours = local
            else:
                assert min_ports(ps, net.topo.port, rt.dist, rt.ip, rt.alg, r, d, buf, minimal_scan(rt)) == 1
                ours = int(buf[0] - ps[r])
            assert ours == booksim_dragonfly_port(r, dest, 4, 8), (r, dest)


@pytest.mark.parametrize("arrangement", ["consecutive", "palmtree"])
@pytest.mark.parametrize("a,h,g", [(4, 2, 9), (4, 2, 5), (4, 2, 3), (6, 3, 19)])
def test_dragonfly_groups_fully_connected(arrangement, a, h, g):
    net = net_of(kind="dragonfly", p=2, a=a, h=h, g=g, arrangement=arrangement)
    check_ports_symmetric(net)
    grp = net.topo.router_group
    ports = np.flatnonzero(net.port_class == 2)
    pairs = np.stack([grp[net.port_router[ports]], grp[net.port_peer_router[ports]]], axis=1)
    counts = np.zeros((g, g), dtype=int)
    np.add.at(counts, (pairs[:, 0], pairs[:, 1]), 1)
    off = ~np.eye(g, dtype=bool)
    assert (counts[off] == (a * h) // (g - 1)).all() and (np.diag(counts) == 0).all()


def test_fat_tree_counts_and_updown_distance():
    for k, n in [(2, 3), (4, 2), (4, 3), (3, 3)]:
        net = net_of(kind="fattree", k=k, n=n)
        assert net.n_nodes == k**n and net.n_routers == n * k ** (n - 1)
        check_ports_symmetric(net)
        G = nx.Graph(router_graph(net))
        assert nx.diameter(G) == 2 * (n - 1)
        deg = dict(G.degree())
        S = k ** (n - 1)
        assert all(deg[r] == (k if r < S or r >= (n - 1) * S else 2 * k) for r in G) or n == 1


def test_jellyfish_regular_and_connected():
    net = net_of(kind="jellyfish", switches=50, radix=8, p=3, seed=7)
    G = to_networkx(net)
    assert {d for _, d in G.degree()} == {5} and nx.is_connected(G)
    assert net.n_nodes == 150
    assert (np.bincount(net.node_router) == 3).all()


def test_torus_mesh_twisted():
    t = net_of(kind="torus", dims=[4, 3, 5], p=2)
    assert t.n_routers == 60 and t.n_nodes == 120 and t.radix == 2 + 6
    assert nx.diameter(nx.Graph(router_graph(t))) == 2 + 1 + 2
    m = net_of(kind="mesh", dims=[4, 3], p=1)
    assert m.link_counts()["local"] == 3 * 3 + 4 * 2
    tw = net_of(kind="twisted_torus", dims=[8, 4], twist=4, p=1)
    G = nx.Graph(router_graph(tw))
    assert {d for _, d in G.degree()} == {4}
    assert G.has_edge(0 + 8 * 3, 4)  # (0, 3) wraps to (4, 0)
    plain = nx.Graph(router_graph(net_of(kind="torus", dims=[8, 4])))
    assert nx.average_shortest_path_length(G) < nx.average_shortest_path_length(plain)


@pytest.mark.parametrize("topology", [
    {"kind": "slimfly", "q": 5}, {"kind": "slimfly", "q": 7}, {"kind": "slimfly", "q": 4},
    {"kind": "slimfly", "q": 9}, {"kind": "slimfly", "q": 11},
    {"kind": "torus", "dims": [5, 4, 3]}, {"kind": "torus", "dims": [6, 2]}, {"kind": "mesh", "dims": [4, 5]},
    {"kind": "fattree", "k": 3, "n": 3}, {"kind": "fattree", "k": 2, "n": 4},
    {"kind": "fattree", "form": "m_port_n_tree", "m": 4, "n": 3},
    {"kind": "fattree", "form": "m_port_n_tree", "m": 6, "n": 3},
    {"kind": "fattree", "form": "m_port_n_tree", "m": 8, "n": 2},
])
def test_algebraic_routing_equals_table(topology):
    net = build_network({"topology": topology})
    table = build_routes(net)
    alg = build_routes(net, budget=0)
    assert is_table(table) and not is_table(alg)
    ps, port = net.topo.router_port_start, net.topo.port
    b1, b2 = np.zeros(64, np.int64), np.zeros(64, np.int64)
    leaves = np.unique(net.node_router)  # destinations are routers with nodes
    for r in range(net.n_routers):
        for d in leaves:
            if d == r:
                continue
            n1 = min_ports(ps, port, table.dist, table.ip, table.alg, r, d, b1, minimal_scan(table))
            n2 = min_ports(ps, port, alg.dist, alg.ip, alg.alg, r, d, b2, minimal_scan(alg))
            assert list(b1[:n1]) == list(b2[:n2]), (r, d)  # in order: routing draws among them by index
            assert distance(ps, port, alg.dist, alg.ip, alg.alg, r, d, b2, minimal_scan(alg)) == table.dist[r, d]
    assert diameter(alg) == diameter(table)


def test_slimfly_torus_and_fattree_route_by_algebra_beyond_a_cached_table():
    """Their algebra gives the table's ports in its order (above), so a table larger than a cache holds is not
    built, unless failures will recompute it; a mesh keeps it up to the budget, and one with express channels
    at any size (its algebra does not see them)."""
    assert is_table(build_routes(build_network({"topology": {"kind": "slimfly", "q": 19}})))  # 722 routers
    for topology in ({"kind": "slimfly", "q": 25}, {"kind": "torus", "dims": [16, 8, 9]},  # 1,250, 1,152 routers
                     {"kind": "fattree", "k": 20, "n": 3}):  # 1,200
        net = build_network({"topology": topology})
        assert not is_table(build_routes(net)) and is_table(build_routes(net, failures=True))
    assert is_table(build_routes(build_network({"topology": {"kind": "mesh", "dims": [40, 40]}})))
    mesh = build_network({"topology": {"kind": "mesh", "dims": [8, 8]}})
    assert not is_table(build_routes(mesh, budget=1000))
    cmesh = build_network({"topology": {"kind": "mesh", "dims": [8, 8], "express": 1}})
    assert is_table(build_routes(cmesh, budget=1000))  # the algebra would not see its express channels


def test_networkx_round_trip():
    G = nx.petersen_graph()
    net = network_from_graph(from_networkx(G, p=2))
    assert net.n_nodes == 20 and net.n_routers == 10
    back = to_networkx(net)
    assert nx.is_isomorphic(back, G)
    assert all(d["p"] == 2 for _, d in back.nodes(data=True))


def test_edge_list_config():
    net = net_of(kind="graph", edges=[[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]], p=1)
    assert net.n_routers == 4 and net.link_counts()["local"] == 5
    with pytest.raises(ConfigError, match="not connected"):
        net_of(kind="graph", edges=[[0, 1], [2, 3]], p=1)


@pytest.mark.parametrize("dims, traffic, field", [
    ([4, 4], {"pattern": "shift", "shift": 16}, "traffic.shift"),  # shift 0 is refused; N is the same pattern
    ([2, 2], {"pattern": "tornado"}, "traffic.pattern"),  # ceil(k / 2) - 1 = 0 in every dimension
])
def test_a_pattern_that_sends_every_node_to_itself_is_refused(dims, traffic, field):
    from fastnet.config import resolve
    from fastnet.traffic.patterns import compile_traffic

    cfg = resolve({"topology": {"kind": "torus", "dims": dims}, "traffic": traffic})
    with pytest.raises(ConfigError, match="sends every node to itself") as e:
        compile_traffic(build_network(cfg), cfg["traffic"], 1)
    assert e.value.field == field
    cfg = resolve({"topology": {"kind": "torus", "dims": [2, 4]}, "traffic": {"pattern": "tornado"}})
    compile_traffic(build_network(cfg), cfg["traffic"], 1)  # one dimension still moves


@pytest.mark.parametrize("topology, want", [
    ({"p": 1, "a": 4, "h": 2, "g": 2}, 2),  # each router has links to the other group: global, then local
    ({"p": 1, "a": 4, "h": 3, "g": 3, "global_bundle": 2}, 2),
    ({"p": 1, "a": 4, "h": 2}, 3),  # the most groups: local, global, local
])
def test_a_dragonflys_diameter_is_its_router_graphs(topology, want):
    from fastnet.config import resolve

    net = build_network(resolve({"topology": {"kind": "dragonfly", **topology}}))
    peer = net.port_peer_router
    routers = nx.Graph((int(r), int(q)) for r, q in zip(net.topo.port[:, 0], peer) if q >= 0)
    assert net.params["diameter"] == nx.diameter(routers) == want
