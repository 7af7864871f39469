"""Routing algorithms: each runs deadlock-free past saturation, uses the paths it promises, and is refused when
the configured VCs cannot keep it deadlock-free."""

from __future__ import annotations

import numpy as np
import pytest

import fastnet

DF = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}  # 72 nodes, 9 groups


def run(topology, routing, pattern="uniform", load=0.1, packet=4, sim=(500, 2000, 2000), **extra):
    cfg = {"topology": topology, "routing": {"algorithm": routing, **extra},
           "traffic": {"pattern": pattern, "load": load, "packet_phits": packet}, "router": {"buffer_phits": 16},
           "sim": {"warmup": sim[0], "measure": sim[1], "drain": sim[2]}}
    return fastnet.run(cfg)


CASES = [
    (DF, "min", "group_adversarial"), (DF, "val", "uniform"), (DF, "ugal_l", "group_adversarial"),
    (DF, "ugal_g", "uniform"),
    ({"kind": "slimfly", "q": 5}, "val", "slimfly_worst"), ({"kind": "slimfly", "q": 5}, "ugal_l", "uniform"),
    ({"kind": "torus", "dims": [5, 4]}, "dor", "tornado"), ({"kind": "torus", "dims": [4, 4]}, "adaptive", "bitcomp"),
    ({"kind": "torus", "dims": [4, 4]}, "val", "uniform"), ({"kind": "torus", "dims": [4, 4]}, "ugal_g", "tornado"),
    ({"kind": "mesh", "dims": [4, 3]}, "dor", "uniform"), ({"kind": "mesh", "dims": [4, 4]}, "adaptive", "transpose"),
    ({"kind": "fattree", "k": 2, "n": 3}, "updown", "bitcomp"), ({"kind": "fattree", "k": 3, "n": 2}, "val", "uniform"),
    ({"kind": "jellyfish", "switches": 12, "radix": 5, "p": 2, "seed": 4}, "ksp", "permutation"),
    ({"kind": "jellyfish", "switches": 12, "radix": 5, "p": 2, "seed": 4}, "ugal_g", "uniform"),
]


@pytest.mark.parametrize("topology,routing,pattern", CASES)
def test_no_deadlock_past_saturation(topology, routing, pattern):
    """Load 1.0 is past saturation everywhere here; simulate() audits conservation and the watchdog is on."""
    ds = run(topology, routing, pattern, load=1.0, sim=(500, 3000, 0))
    assert ds.packets_delivered > 0
    assert ds.packets_created == ds.packets_delivered + ds.packets_in_flight + ds.packets_queued


def test_valiant_on_dragonfly_takes_two_global_hops():
    ds = run(DF, "val", "uniform", load=0.05)
    # through a random intermediate group other than source and destination; a packet for its own router
    # (1 in 71 under uniform) is ejected at once
    assert float(ds.hops_global_mean) == pytest.approx(2 * (1 - 1 / 71), abs=0.01)


def test_min_group_adversarial_saturates_at_one_global_link():
    ds = run(DF, "min", "group_adversarial", load=0.5, sim=(1000, 4000, 0))
    assert float(ds.accepted_phits_per_node_cycle) == pytest.approx(1 / (DF["a"] * DF["p"]), rel=0.08)


def test_ugal_is_minimal_when_idle_and_valiant_when_adversarial():
    idle = run(DF, "ugal_l", "uniform", load=0.02)
    assert idle.hops_global_mean < 1.1
    hot = run(DF, "ugal_g", "group_adversarial", load=0.4, sim=(1000, 3000, 0))
    cold = run(DF, "min", "group_adversarial", load=0.4, sim=(1000, 3000, 0))
    assert hot.hops_global_mean > 1.5
    assert hot.accepted_phits_per_node_cycle > 2 * cold.accepted_phits_per_node_cycle


def test_adaptive_beats_dor_on_tornado():
    t = {"kind": "torus", "dims": [8, 8]}
    dor = run(t, "dor", "tornado", load=0.5, packet=1, sim=(500, 2000, 0))
    ada = run(t, "adaptive", "tornado", load=0.5, packet=1, sim=(500, 2000, 0))
    assert ada.accepted_phits_per_node_cycle > 1.1 * dor.accepted_phits_per_node_cycle


def test_ksp_single_path_is_shortest_and_k_paths_stay_within_limit():
    jf = {"kind": "jellyfish", "switches": 16, "radix": 6, "p": 2, "seed": 1}
    one = run(jf, "ksp", load=0.02, paths=1)
    minimal = run(jf, "min", load=0.02)
    assert float(one.hops_mean) == pytest.approx(float(minimal.hops_mean), rel=0.05)
    many = run(jf, "ksp", load=0.02, paths=8, hop_limit=4)
    assert many.hops_mean > one.hops_mean
    assert many.packet_latency_max < 1000


def test_ksp_hop_limit_below_the_diameter_is_refused():
    """With fewer hops allowed than the farthest routers are apart, their packets had no path and were dropped
    as unroutable in a run that reported nothing wrong."""
    jf = {"kind": "jellyfish", "switches": 16, "radix": 6, "p": 2, "seed": 1}
    with pytest.raises(fastnet.errors.ConfigError) as e:
        run(jf, "ksp", load=0.02, hop_limit=1)
    assert e.value.field == "routing.hop_limit" and "diameter" in str(e.value)


@pytest.mark.parametrize("up_port", ["mlid", "random", "adaptive"])
def test_updown_up_port_choices(up_port):
    ds = run({"kind": "fattree", "k": 4, "n": 2}, "updown", "uniform", load=0.3, up_port=up_port)
    assert ds.unstable == 0 and abs(ds.accepted_phits_per_node_cycle - 0.3) < 0.02


@pytest.mark.parametrize("topology,routing,router,message", [
    (DF, "val", {"vcs": 2}, "needs at least 3 VCs on local ports"),
    (DF, "val", {"vcs_global": 1}, "needs at least 2 VCs on global ports"),
    ({"kind": "torus", "dims": [4, 4]}, "adaptive", {"vcs": 2}, "needs at least 3 VCs"),
    ({"kind": "torus", "dims": [4, 4]}, "dor", {"vcs": 1}, "needs at least 2 VCs"),
    ({"kind": "slimfly", "q": 5}, "ugal_l", {"vcs": 3}, "needs at least 4 VCs"),
    (DF, "dor", {}, "dor needs a torus, mesh or hyperx"),
    ({"kind": "torus", "dims": [4, 4]}, "updown", {}, "updown needs a fat tree"),
])
def test_routing_refused_without_enough_vcs(topology, routing, router, message):
    with pytest.raises(fastnet.ConfigError, match=message):
        fastnet.run({"topology": topology, "routing": {"algorithm": routing}, "router": router})


@pytest.mark.parametrize("routing,ugal_vcs,ugal_queue", [
    ("ugal_l", "separate", "vc_h"), ("ugal_l", "booksim", "vc"), ("ugal_g", "separate", "port"),
])
def test_dragonfly_ugal_vc_options_no_deadlock(routing, ugal_vcs, ugal_queue):
    """Minimal packets on their own VC classes (ugal_vcs) and UGAL-L_VC(_H) stay deadlock-free past saturation;
    `separate` needs a fourth local VC."""
    for pattern in ("uniform", "group_adversarial"):
        ds = run(DF, routing, pattern, load=1.0, sim=(500, 3000, 0), ugal_vcs=ugal_vcs, ugal_queue=ugal_queue)
        assert ds.packets_delivered > 0
        assert ds.packets_created == ds.packets_delivered + ds.packets_in_flight + ds.packets_queued
        assert ds.attrs["vcs"] == (4 if ugal_vcs == "separate" else 3)


def booksim_anynet_first_hops(adj: dict[int, list[int]], r0: int) -> dict[int, int]:
    """BookSim2's AnyNet::route (src/networks/anynet.cpp) for router r0, transcribed: Dijkstra over hop counts,
    the unfinished router of least distance taken first (ties: lowest id, its std::set order), a router's
    predecessor replaced only by a strictly shorter distance; then the first hop toward every router."""
    n = len(adj)
    dist, prev = [1 << 30] * n, [-1] * n
    dist[r0] = 0
    todo = set(range(n))
    while todo:
        u = min(todo, key=lambda i: (dist[i], i))
        todo.remove(u)
        for v in sorted(adj[u]):
            if dist[u] + 1 < dist[v]:
                dist[v], prev[v] = dist[u] + 1, u
    hops = {}
    for d in range(n):
        if d != r0:
            x = d
            while prev[x] != r0:
                x = prev[x]
            hops[d] = x
    return hops


def test_fixed_min_path_is_booksim2_anynet_path():
    """routing.min_path = "fixed" takes, at every router and for every destination, the next router of BookSim2's
    anynet routing table, on a random regular graph where many minimal paths tie."""
    from fastnet.topology import build_network
    from fastnet.build.routing import build_routes, minimal_scan, with_distance_table
    from fastnet.kernels.minimal import min_ports
    from fastnet.kernels.routing import fixed_min_port

    cfg = fastnet.config.resolve({"topology": {"kind": "jellyfish", "switches": 24, "radix": 8, "p": 2, "seed": 3}})
    net = build_network(cfg)
    routes = with_distance_table(net, build_routes(net))
    ps, port = net.topo.router_port_start, net.topo.port
    adj = {r: sorted({int(s) for s in net.port_peer_router[ps[r]:ps[r + 1]] if s >= 0}) for r in range(net.n_routers)}
    buf = np.zeros(64, dtype=np.int32)
    scan = minimal_scan(routes)
    ties = 0
    for r in range(net.n_routers):
        expected = booksim_anynet_first_hops(adj, r)
        for d, nxt in expected.items():
            n = min_ports(ps, port, routes.dist, routes.ip, routes.alg, r, d, buf, scan)
            ties += n > 1
            out = fixed_min_port(ps, port, routes.dist, r, d, buf, n)
            assert net.port_peer_router[out] == nxt, (r, d)
    assert ties > 100  # the choice was made, not forced


def test_valiant_on_a_two_group_dragonfly_sends_a_flow_within_a_group_through_the_other_group():
    """With two groups there is no third group for a flow between them (it goes minimally), but a flow within a
    group has the other group to go through: it took the minimal path, as if there were none."""
    def hops(algorithm):
        return fastnet.run({"topology": {"kind": "dragonfly", "p": 1, "a": 4, "h": 2, "g": 2},
                            "routing": {"algorithm": algorithm},
                            "traffic": {"pattern": "shift", "shift": 1, "load": 0.02, "packet_phits": 1},
                            "sim": {"warmup": 200, "measure": 4000, "drain": 2000}}).hops_global_mean.item()

    assert hops("min") == pytest.approx(2 / 8, abs=0.1)  # node i to i + 1: 6 of the 8 flows stay in their group
    assert hops("val") == pytest.approx((6 * 2 + 2 * 1) / 8, abs=0.1)  # (packets per flow vary)
