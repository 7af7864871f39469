"""The m-port n-tree (Lin, Chung & Huang; seed 003 §VI): sizes, Lin et al.'s labelling port for port, diameter
and bisection, config errors, exact zero-load latency and conservation under updown routing, and MLID's paths."""

from __future__ import annotations

import numpy as np
import pytest
from test_engine import LAT, single_packets

import fastnet
from fastnet.build import build_routes
from fastnet.topology import build_network
from fastnet.build.fattree import lin_node_label, lin_switch_label
from fastnet.build.routing import distance_table, minimal_scan
from fastnet.kernels.minimal import distance
from fastnet.kernels.routing import ft_fixed_up, ft_up_or_down
from fastnet.registry import UP_DMODK, UP_MLID, UP_RANDOM_PATH


def mport(m: int, n: int, **extra) -> dict:
    return {"kind": "fattree", "form": "m_port_n_tree", "m": m, "n": n, **extra}


def net_of(m: int, n: int):
    return build_network({"topology": mport(m, n)})


@pytest.mark.parametrize("m", [4, 8, 36])
@pytest.mark.parametrize("n", [2, 3])
def test_sizes_ports_diameter_and_bisection(m, n):
    net = net_of(m, n)
    k = m // 2
    assert net.n_nodes == 2 * k**n and net.n_routers == (2 * n - 1) * k ** (n - 1)
    assert (np.diff(net.topo.router_port_start) == m).all()  # every switch has m ports, node ports included
    level = net.topo.router_group
    roots = np.flatnonzero(level == n - 1)
    assert len(roots) == k ** (n - 1) and (np.bincount(level)[:n - 1] == 2 * k ** (n - 1)).all()
    up = net.port_peer_router >= 0
    up &= level[np.maximum(net.port_peer_router, 0)] > level[net.port_router]
    assert not up[np.isin(net.port_router, roots)].any()  # the roots use all m ports downwards
    assert (np.bincount(net.port_router[up], minlength=net.n_routers)[level < n - 1] == k).all()
    assert distance_table(net).max() == 2 * (n - 1)  # router hops between leaves of different halves
    # the middle cut: nodes 0..N/2-1 (Lin's p_0 < m/2) with their subtrees and half the roots on one side
    S = net.params["switches_per_level"]
    w = np.arange(net.n_routers) % S
    left = np.where(level == n - 1, w < len(roots) // 2, w // k ** (n - 2) < k)
    links = np.flatnonzero(net.port_peer_router >= 0)
    crossing = left[net.port_router[links]] != left[net.port_peer_router[links]]
    assert crossing.sum() // 2 == k**n == net.n_nodes // 2  # full bisection: (m/2)^n links
    assert left[net.node_router].sum() == net.n_nodes // 2


def test_four_port_three_tree_is_fig3s_network_and_one_level_is_one_switch():
    net = net_of(4, 3)
    assert (net.n_nodes, net.n_routers) == (16, 20)
    one = net_of(6, 1)  # n = 1: a single switch whose m ports all hold nodes
    assert (one.n_nodes, one.n_routers, one.radix) == (6, 1, 6)


@pytest.mark.parametrize("m,n", [(4, 3), (6, 2), (6, 3), (8, 4)])
def test_lin_labelling_port_for_port(m, n):
    """Lin et al.'s rules: P(p) hangs on port p_{n-1} of SW<p_0..p_{n-2}, n-1>; port j of SW<w, L> (j < m/2, or
    j < m at a root) leads to port w_{n-2} + m/2 of SW<w_0..w_{L-1}, j, w_L..w_{n-3}, L+1>."""
    net = net_of(m, n)
    P = net.params
    k = m // 2
    ps = net.topo.router_port_start
    label = {r: lin_switch_label(P, r) for r in range(net.n_routers)}
    assert len(set(label.values())) == net.n_routers
    by_label = {v: r for r, v in label.items()}
    assert {len(w) for _, w in label.values()} == {n - 1}
    for d in range(net.n_nodes):
        p = lin_node_label(P, d)
        assert p[0] < m and all(x < k for x in p[1:])
        r = by_label[(n - 1, p[:-1])]
        assert net.node_router[d] == r and net.node_port[d] == ps[r] + p[-1]
    for r, (L, w) in label.items():
        down = m if L == 0 else k
        for j in range(down if L < n - 1 else 0):
            child = by_label[(L + 1, w[:L] + (j,) + w[L:n - 2])]
            port = ps[r] + j
            assert net.port_peer_router[port] == child
            assert net.port_peer_port[port] == ps[child] + w[n - 2] + k


def test_config_keys_belong_to_the_form():
    resolve = fastnet.config.resolve
    assert resolve({"topology": mport(8, 3)})["topology"] == mport(8, 3)
    assert resolve({"topology": {"kind": "fattree"}})["topology"] == {
        "kind": "fattree", "form": "k_ary_n_tree", "k": 4, "n": 3}
    for topo, field, words in [
        (mport(8, 3, k=4), "topology.k", "not a key of form m_port_n_tree"),
        ({"kind": "fattree", "m": 8}, "topology.m", "not a key of form k_ary_n_tree"),
        (mport(7, 3), "topology.m", "even integer >= 4"),
        (mport(2, 3), "topology.m", "even integer >= 4"),
        (mport(8, 0), "topology.n", ">= 1"),
        ({"kind": "fattree", "form": "xgft"}, "topology.form", "k_ary_n_tree, m_port_n_tree"),
    ]:
        with pytest.raises(fastnet.ConfigError, match=words) as e:
            resolve({"topology": topo})
        assert e.value.field == field
    # a new form drops the old form's keys, as a new kind drops the old kind's
    merged = fastnet.config.merge({"topology": {"kind": "fattree", "k": 8}}, {"topology": {"form": "m_port_n_tree"}})
    assert merged["topology"] == {"kind": "fattree", "form": "m_port_n_tree"}


@pytest.mark.parametrize("up_port", ["mlid", "dmodk", "random", "adaptive", "random_path"])
def test_zero_load_latency_under_updown(up_port):
    """As tests/test_engine.py checks every kind: exact latency and minimal (up*/down*) paths."""
    L, D = 4, 2
    cfg = {"topology": mport(4, 3), "links": LAT, "router": {"delay": D, "buffer_phits": 8},
           "routing": {"algorithm": "updown", "up_port": up_port}, "traffic": {"packet_phits": L}}
    rng = np.random.default_rng(1)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 16, size=(40, 2))] + [(0, 1), (0, 15), (15, 8)]
    s, res = single_packets(cfg, pairs, L)
    lat, net_lat, hops, hl, _ = res.T
    np.testing.assert_array_equal(lat, 2 * LAT["latency_injection"] + LAT["latency_local"] * hl + (hops + 1) * D + L - 1)
    np.testing.assert_array_equal(net_lat, lat)
    topo, rt = s.net.topo, s.routes
    buf = np.zeros(64, np.int64)
    expected = [distance(topo.router_port_start, topo.port, rt.dist, rt.ip, rt.alg, int(s.net.node_router[a]),
                         int(s.net.node_router[b]), buf, minimal_scan(rt)) for a, b in pairs]
    np.testing.assert_array_equal(hops, expected)
    assert max(expected) == 4


@pytest.mark.parametrize("routing,extra", [
    ("updown", {"up_port": "mlid"}), ("updown", {"up_port": "random"}), ("updown", {"up_port": "adaptive"}),
    ("updown", {"up_port": "random_path"}),
    ("val", {}), ("ugal_l", {}), ("min", {}),
])
def test_conservation_past_saturation(routing, extra):
    ds = fastnet.run({"topology": mport(4, 3), "routing": {"algorithm": routing, **extra},
                      "traffic": {"pattern": "permutation", "load": 1.0, "packet_phits": 4},
                      "router": {"buffer_phits": 8}, "sim": {"warmup": 500, "measure": 2000, "drain": 300}})
    # simulate() audited every packet id and every VC's credits; the dataset must agree
    assert ds.packets_created == ds.packets_delivered + ds.packets_in_flight + ds.packets_queued
    assert ds.packets_delivered > 0 and ds.attrs["vcs"] == 1


def walk(net, ip, scheme, s, d):
    """The routers and up ports (0..k-1, -1 going down) of the path s -> d under a deterministic up_port."""
    ps = net.topo.router_port_start
    r, dest = int(net.node_router[s]), int(net.node_router[d])
    path, ups = [r], []
    while r != dest:
        out, level = ft_up_or_down(ps, ip, r, dest)
        up = -1
        if out < 0:
            up = ft_fixed_up(ip, scheme, level, s, d)
            out = ps[r] + ip[4] + up  # after the k down (or node) ports
        ups.append(up)
        r = int(net.port_peer_router[out])
        path.append(r)
    return path, ups


def test_mlid_is_lins_path_selection():
    """Lin et al.: P(s) sends to LID BaseLID(d) + rank, BaseLID(d) = d (m/2)^(n-1) + 1 and rank the number its own
    digits after the common prefix of s and d (length alpha) make; a switch at Lin level L forwards it up by
    port ((LID - 1) / (m/2)^(n-1-L)) mod m/2 + m/2. The paths are minimal, fixed per destination LID, the nodes
    of a leaf leave it by different up links, and the sources of a pod reach every root once."""
    m, n = 8, 3
    net = net_of(m, n)
    k, P = m // 2, net.params
    ip = build_routes(net).ip
    dist = distance_table(net)
    root_of: dict[int, set[int]] = {}
    for s in range(net.n_nodes):
        ls = lin_node_label(P, s)
        for d in range(net.n_nodes):
            if net.node_router[s] == net.node_router[d]:
                continue
            ld = lin_node_label(P, d)
            alpha = next(i for i in range(n) if ls[i] != ld[i])
            lid = d * k ** (n - 1) + 1 + sum(ls[i] * k ** (n - 1 - i) for i in range(alpha + 1, n))
            path, ups = walk(net, ip, UP_MLID, s, d)
            assert len(path) - 1 == dist[net.node_router[s], net.node_router[d]]
            assert path == walk(net, ip, UP_MLID, s, d)[0]
            for r, up in zip(path, ups):
                if up >= 0:
                    L = lin_switch_label(P, r)[0]
                    assert up == ((lid - 1) // k ** (n - 1 - L)) % k
            if alpha == 0:
                top = max(path, key=lambda r: net.topo.router_group[r])
                root_of.setdefault(d, set()).add((ls[0], top))
    for leaf in range(0, net.n_nodes, k):  # the k nodes of a leaf leave it by k different links
        assert sorted(walk(net, ip, UP_MLID, s, (s + net.n_nodes // 2) % net.n_nodes)[1][0] for s in range(leaf, leaf + k)) == list(range(k))
    for d, seen in root_of.items():  # from each other pod, each of the (m/2)^(n-1) sources uses its own root
        pods = {p for p, _ in seen}
        assert all(len({r for p, r in seen if p == q}) == k ** (n - 1) for q in pods)
    # D-mod-k instead reaches each destination through one root, whatever the source
    for d in (0, 77, 127):
        tops = {max(walk(net, ip, UP_DMODK, s, d)[0], key=lambda r: net.topo.router_group[r])
                for s in range(net.n_nodes) if lin_node_label(P, s)[0] != lin_node_label(P, d)[0]}
        assert len(tops) == 1


def test_info_names_the_form():
    from fastnet.inspect import describe

    facts = describe(fastnet.config.resolve({"topology": mport(4, 3)}))
    assert facts["topology"] == "fattree" and facts["form"] == "m_port_n_tree"
    assert (facts["nodes"], facts["routers"], facts["radix"], facts["radix_min"], facts["diameter"]) == (16, 20, 4, 4, 4)


def test_random_path_is_one_path_per_flow_and_spreads_flows():
    """random_path: the path of s -> d is fixed (a hash of the flow), minimal, and different flows from one leaf take
    different up links often enough to use all of them."""
    net = net_of(8, 3)
    ip = build_routes(net).ip
    first_ups = set()
    for d in range(16, 128, 8):
        path, ups = walk(net, ip, UP_RANDOM_PATH, 0, d)
        assert walk(net, ip, UP_RANDOM_PATH, 0, d) == (path, ups)
        assert ups[0] >= 0
        first_ups.add(ups[0])
    assert first_ups == {0, 1, 2, 3}
