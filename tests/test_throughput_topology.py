"""Instances from fastnet topologies: k shortest paths, patterns, link numbering, and the models on them."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastnet.topology import build_network
from fastnet.errors import ConfigError
from fastnet.throughput.build import build_instance
from fastnet.throughput.evaluate import evaluate, resolve, sample_instance
from fastnet.throughput.heuristics import waterfill
from fastnet.throughput.lp import mmf
from fastnet.throughput.paths import diameter, router_paths
from fastnet.throughput.patterns import Flows, engine_pattern, make_flows, perm_x, random_x
from fastnet.traffic.patterns import compile_traffic


def jellyfish(n=24, r=5, p=1, seed=1):
    return build_network({"topology": {"kind": "jellyfish", "switches": n, "radix": r, "p": p, "seed": seed}})


def router_graph(net) -> nx.Graph:
    """The router graph straight from the port arrays (fastnet.build.to_networkx reads a Network attribute that
    main's Network lacks, so it is not used here)."""
    net_ports = np.flatnonzero(net.port_peer_router >= 0)
    G = nx.Graph()
    G.add_nodes_from(range(net.n_routers))
    G.add_edges_from(zip(net.port_router[net_ports].tolist(), net.port_peer_router[net_ports].tolist()))
    return G


def router_sequence(net, ports):
    """Routers visited by a port sequence, checking that each port leaves the router the previous one reached."""
    r = int(net.port_router[ports[0]])
    seq = [r]
    for q in ports:
        assert net.port_router[q] == r
        r = int(net.port_peer_router[q])
        seq.append(r)
    return seq


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 50), k=st.sampled_from([1, 2, 4, 8]), n=st.sampled_from([10, 16, 24]))
def test_k_shortest_paths_match_networkx(seed, k, n):
    """Our k paths have the same lengths as the k shortest simple paths networkx enumerates, are simple, distinct,
    start and end at the right routers, and come in order of length."""
    net = jellyfish(n=n, r=4, p=1, seed=seed)
    G = router_graph(net)
    rng = np.random.default_rng(seed)
    s = rng.integers(0, n, 6)
    t = (s + 1 + rng.integers(0, n - 1, 6)) % n
    H = diameter(net) + 2
    ports, length, count = router_paths(net, s, t, k, H, seed)
    for i in range(len(s)):
        expected = [len(p) - 1 for p in itertools.islice(nx.shortest_simple_paths(G, int(s[i]), int(t[i])), k)]
        expected = [x for x in expected if x <= H]
        got = length[i, :count[i]].tolist()
        assert got == sorted(got)
        assert got == expected
        seen = set()
        for j in range(count[i]):
            seq = router_sequence(net, ports[i, j, :length[i, j]])
            assert seq[0] == s[i] and seq[-1] == t[i]
            assert len(set(seq)) == len(seq)  # simple
            seen.add(tuple(ports[i, j, :length[i, j]]))
        assert len(seen) == count[i]


def test_shortest_path_ties_are_drawn_at_random_but_reproducibly():
    net = build_network({"topology": {"kind": "torus", "dims": [6, 6], "p": 1}})
    s, t = np.zeros(1, np.int64), np.array([3 + 3 * 6])  # 6 hops, C(6,3) * 4 shortest paths
    picks = {tuple(router_paths(net, s, t, 1, 8, seed)[0][0, 0, :6]) for seed in range(12)}
    assert len(picks) > 4
    a = router_paths(net, s, t, 4, 8, 7)
    b = router_paths(net, s, t, 4, 8, 7)
    assert all((x == y).all() for x, y in zip(a, b))


def test_instance_links_and_paths_follow_the_ports():
    net = jellyfish(n=12, r=5, p=2, seed=3)
    flows = random_x(net.n_nodes, 2, np.random.default_rng(0))
    inst = build_instance(net, flows, 4, diameter(net) + 2, 1).validate()
    P, R = net.n_ports, net.n_routers
    assert inst.n_links == P + net.n_nodes
    # link l < P leaves port l's router; links P + n leave host n
    np.testing.assert_array_equal(inst.link_src[:P], net.port_router)
    np.testing.assert_array_equal(inst.link_src[P:], R + np.arange(net.n_nodes))
    for f in range(inst.n_flows):
        paths = inst.paths_of(f)
        assert 1 <= len(paths) <= 4
        for path in paths:
            assert path[0] == P + flows.src[f] and path[-1] == net.node_port[flows.dst[f]]
            for a, b in zip(path, path[1:]):
                assert inst.link_dst[a] == inst.link_src[b]
            assert inst.link_src[path[0]] == inst.flow_src[f] and inst.link_dst[path[-1]] == inst.flow_dst[f]


def test_hosts_on_the_same_router_use_two_links():
    net = build_network({"topology": {"kind": "torus", "dims": [3], "p": 2}})
    inst = build_instance(net, Flows(np.array([0]), np.array([1]), None), 4, 3, 1)
    assert inst.paths_of(0) == [[net.n_ports + 0, int(net.node_port[1])]]
    assert mmf(inst).rate.tolist() == [1.0]


def test_capacities_are_configurable():
    net = build_network({"topology": {"kind": "torus", "dims": [3], "p": 1}})
    flows = Flows(np.array([0, 1, 2]), np.array([1, 2, 0]), None)
    inst = build_instance(net, flows, 1, 3, 1, link_capacity=0.5, host_capacity=2.0)
    np.testing.assert_allclose(mmf(inst).rate, [0.5, 0.5, 0.5])
    inst = build_instance(net, flows, 1, 3, 1, link_capacity=4.0, host_capacity=2.0)
    np.testing.assert_allclose(mmf(inst).rate, [2.0, 2.0, 2.0])


@settings(max_examples=20, deadline=None)
@given(n=st.integers(4, 40), x=st.integers(1, 3), seed=st.integers(0, 1000))
def test_random_and_perm_patterns(n, x, seed):
    rng = np.random.default_rng(seed)
    if x <= n - 1:
        f = random_x(n, x, rng)
        assert len(f.src) == n * x and not (f.src == f.dst).any()
        assert len(set(zip(f.src.tolist(), f.dst.tolist()))) == n * x  # X distinct receivers per host
        assert (np.bincount(f.src, minlength=n) == x).all()
    if x <= (n - 1) // 2:
        f = perm_x(n, x, rng)
        assert not (f.src == f.dst).any()
        assert len(set(zip(f.src.tolist(), f.dst.tolist()))) == n * x
        assert (np.bincount(f.src, minlength=n) == x).all() and (np.bincount(f.dst, minlength=n) == x).all()


def test_bad_x_is_a_config_error():
    with pytest.raises(ConfigError, match="throughput.x"):
        random_x(4, 4, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="throughput.x"):
        perm_x(5, 3, np.random.default_rng(0))


def test_engine_patterns_reuse_the_engine_tables():
    cfg = resolve({"topology": {"kind": "torus", "dims": [4, 4], "p": 1}})
    net = build_network(cfg)
    for name in ("permutation", "bitcomp", "transpose", "tornado", "shift"):
        tcfg = dict(cfg["traffic"], pattern=name)
        f = engine_pattern(net, tcfg, 5)
        table = compile_traffic(net, tcfg, 5).table
        keep = (table >= 0) & (table != np.arange(net.n_nodes))
        np.testing.assert_array_equal(f.src, np.flatnonzero(keep))
        np.testing.assert_array_equal(f.dst, table[keep])
    u = engine_pattern(net, dict(cfg["traffic"], pattern="uniform"), 5)
    assert len(u.src) == 16 * 15 and np.allclose(np.bincount(u.src, weights=u.weight), 1.0)
    h = engine_pattern(net, dict(cfg["traffic"], pattern="hotspot", hotspot_nodes=[3], hotspot_fraction=0.5), 5)
    to_hot = h.weight[(h.dst == 3) & (h.src == 0)][0]
    assert to_hot == pytest.approx(0.5 / 15 + 0.5)


def test_uniform_on_an_odd_ring_is_link_bound():
    """Uniform traffic on a ring of 9: minimal paths are unique, and each link carries flows of distance 1..4 in
    its direction, (1 + 2 + 3 + 4) / 8 = 1.25 times the per-host load; every flow set in the symmetric pattern
    saturates together, so all four models give 1 / 1.25 per host."""
    cfg = resolve({"topology": {"kind": "torus", "dims": [9], "p": 1}, "throughput": {"pattern": "uniform"}})
    ds = evaluate(cfg)
    # ring of 9, minimal paths unique: links at distance 1..4 each way; a link carries (1+2+3+4)/8 per host
    for m in ("mmf", "mcf", "hm", "jm"):
        assert float(ds.throughput_per_node_mean.sel(model=m)) == pytest.approx(1 / (10 / 8))


def test_single_path_lp_equals_waterfilling_on_jellyfish():
    cfg = resolve({"topology": {"kind": "jellyfish", "switches": 32, "radix": 5, "p": 2, "seed": 2},
                   "throughput": {"pattern": "random", "x": 2, "k": 1}})
    net = build_network(cfg)
    inst = sample_instance(net, cfg, 0, diameter(net) + 2)
    np.testing.assert_allclose(mmf(inst).rate, waterfill(inst), atol=1e-9)


def test_evaluate_dataset_and_confidence_interval():
    ds = evaluate({"topology": {"kind": "torus", "dims": [4, 4], "p": 1},
                   "throughput": {"pattern": "random", "k": 2, "samples": 4, "models": ["mmf", "hm"]}})
    assert list(ds.model.values) == ["mmf", "hm"] and ds.sizes["sample"] == 4 and ds.sizes["flow"] == 16
    per_flow = ds.rate.mean("flow")
    np.testing.assert_allclose(ds.throughput, per_flow)
    np.testing.assert_allclose(ds.throughput_mean, per_flow.mean("sample"))
    from scipy import stats
    half = stats.t.ppf(0.975, 3) * per_flow.std("sample", ddof=1) / 2
    np.testing.assert_allclose(ds.throughput_ci, half)
    # samples differ (random patterns), the same seed reproduces them
    assert len({tuple(r) for r in ds.flow_dst.values.tolist()}) > 1
    again = evaluate({"topology": {"kind": "torus", "dims": [4, 4], "p": 1},
                      "throughput": {"pattern": "random", "k": 2, "samples": 4, "models": ["mmf", "hm"]}})
    np.testing.assert_array_equal(ds.rate.values, again.rate.values)


def test_evaluate_says_each_step():
    """Progress names each step, not only each finished sample: one model on a large instance takes minutes."""
    steps = []
    evaluate({"topology": {"kind": "torus", "dims": [4, 4], "p": 1},
              "throughput": {"pattern": "random", "samples": 2, "models": ["mcf", "hm"]}},
             progress=lambda done, n, what: steps.append((done, n, what)))
    assert steps == [(0, 2, "building the network"), (0, 2, "sample 1: flows and paths"),
                     (0, 2, "sample 1: mcf (16 flows)"), (0, 2, "sample 1: hm (16 flows)"), (1, 2, "1 sample(s) done"),
                     (1, 2, "sample 2: flows and paths"), (1, 2, "sample 2: mcf (16 flows)"),
                     (1, 2, "sample 2: hm (16 flows)"), (2, 2, "2 sample(s) done")]


def test_deterministic_patterns_run_once():
    ds = evaluate({"topology": {"kind": "torus", "dims": [4, 4], "p": 1},
                   "throughput": {"pattern": "tornado", "samples": 5}})
    assert ds.sizes["sample"] == 1 and (ds.throughput_ci.values == 0).all()


def test_hop_limit_without_paths_is_reported():
    cfg = resolve({"topology": {"kind": "torus", "dims": [8], "p": 1},
                   "throughput": {"pattern": "perm", "max_hops": 1}})
    net = build_network(cfg)
    with pytest.raises(ConfigError, match="throughput.max_hops"):
        sample_instance(net, cfg, 0, 1)


def test_port_order_paths_are_the_engines_ksp_paths():
    """path_order = "port" enumerates exactly the paths the engine's ksp routing uses (kernels/routing.py)."""
    from fastnet.build.routing import build_routes, with_distance_table
    from fastnet.kernels._jit import jit_alloc
    from fastnet.kernels.routing import ksp_walk

    @jit_alloc
    def engine_paths(ps, port, dist, s, d, limit, k, hops, out):
        stack_r = np.empty(limit + 2, dtype=np.int64)
        stack_p = np.empty(limit + 2, dtype=np.int64)
        n = ksp_walk(ps, port, dist, s, d, limit, -k, 0, stack_r, stack_p)
        for j in range(n):
            for h in range(hops[j] if j < len(hops) else 0):
                out[j, h] = ksp_walk(ps, port, dist, s, d, limit, j, h, stack_r, stack_p)
        return n

    for topo in ({"kind": "jellyfish", "switches": 20, "radix": 5, "p": 1, "seed": 4},
                 {"kind": "torus", "dims": [4, 4], "p": 1}):
        net = build_network({"topology": topo})
        routes = with_distance_table(net, build_routes(net))
        limit = diameter(net) + 1
        rng = np.random.default_rng(1)
        s = rng.integers(0, net.n_routers, 8)
        t = (s + 1 + rng.integers(0, net.n_routers - 1, 8)) % net.n_routers
        ports, length, count = router_paths(net, s, t, 4, limit, 0, "port")
        ps = net.topo.router_port_start.astype(np.int64)
        for i in range(8):
            out = np.full((4, limit), -1, dtype=np.int64)
            n = engine_paths(ps, net.topo.port, routes.dist, int(s[i]), int(t[i]), limit, 4, length[i], out)
            assert n == count[i]
            for j in range(n):
                assert out[j, :length[i, j]].tolist() == ports[i, j, :length[i, j]].tolist()


def test_model_links_carry_the_bandwidths_a_run_simulates():
    """A class of links made slower in [links] is slower for the models too (fastnet throughput gave MCF 1.0 per host
    on a dragonfly whose global links moved a tenth of a phit a cycle; the run accepted 0.10)."""
    from fastnet.build.network import GLOBAL, NODE
    from fastnet.config import resolve as resolve_config
    from fastnet.throughput.build import links_of

    cfg = resolve_config({"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2},
                          "links": {"bandwidth": "5 GB/s", "bandwidth_global": "0.5 GB/s"}})
    net = build_network(cfg)
    _, _, cap = links_of(net, 1.0, 1.0)
    cls = net.port_class
    assert np.allclose(cap[:net.n_ports][cls == GLOBAL], 0.1) and np.allclose(cap[:net.n_ports][cls != GLOBAL], 1.0)
    assert np.allclose(cap[net.n_ports:], 1.0) and (cls[net.node_port] == NODE).all()
