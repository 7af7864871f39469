"""HyperX (and the flattened butterfly) and tori with parallel links: port counts by hand, algebra against a
distance table, exact zero-load latency and hop counts per routing, conservation past saturation, the use of
every parallel link, and determinism."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import xarray as xr

import fastnet
from fastnet.build import build_routes
from fastnet.topology import build_network
from fastnet.build.routing import is_table, minimal_scan, with_distance_table
from fastnet.errors import ConfigError
from fastnet.kernels.minimal import min_ports, table_min_ports
from test_engine import LAT, single_packets

HX = {"kind": "hyperx", "dims": [4, 3], "trunking": [1, 2], "p": 2}  # 12 routers, 24 nodes
HX3 = {"kind": "hyperx", "dims": [3, 2, 3], "trunking": [1, 2, 1], "p": 1}  # 18 routers in 3 dimensions
GEMINI = {"kind": "torus", "dims": [4, 2, 4], "links": [2, 1, 2], "p": 2}  # Cray Gemini's links, 32 routers


def net_of(**topology):
    return build_network({"topology": topology})


def coords(net, r):
    stride, dims = net.params["stride"], net.params["dims"]
    return [(r // s) % k for s, k in zip(stride, dims)]


def link_multigraph(net) -> nx.MultiGraph:
    G = nx.MultiGraph()
    G.add_nodes_from(range(net.n_routers))
    ports = np.flatnonzero(net.port_peer_router >= 0)
    for p in ports[net.port_peer_port[ports] > ports]:
        G.add_edge(int(net.port_router[p]), int(net.port_peer_router[p]))
    return G


# ---------------------------------------------------------------- structure

@pytest.mark.parametrize("dims,trunking,p,ports", [
    ([4, 4], [1, 2], 2, 2 + 3 * 1 + 3 * 2),
    ([3, 2, 2], 1, 1, 1 + 2 + 1 + 1),
    ([4, 4], 1, 4, 4 + 3 + 3),  # BookSim2's flatfly k = 4, n = 2, c = 4
    ([5], 3, 1, 1 + 4 * 3),
])
def test_hyperx_ports_by_hand(dims, trunking, p, ports):
    net = net_of(kind="hyperx", dims=dims, trunking=trunking, p=p)
    R = int(np.prod(dims))
    assert net.n_routers == R and net.n_nodes == R * p
    assert (np.diff(net.topo.router_port_start) == ports).all()
    T = [trunking] * len(dims) if isinstance(trunking, int) else trunking
    G = link_multigraph(net)
    assert net.link_counts()["local"] == R * (ports - p) // 2
    for u in range(R):
        for v in range(u + 1, R):
            differ = [d for d, (a, b) in enumerate(zip(coords(net, u), coords(net, v))) if a != b]
            assert G.number_of_edges(u, v) == (T[differ[0]] if len(differ) == 1 else 0), (u, v)


def test_hyperx_port_formula():
    """Local port p + offset[d] + (v if v < c[d] else v - 1) * T_d + j leads to the router whose coordinate d is v
    (build/hyperx.py), with distance_latency as long as |v - c[d]| latency_local."""
    dims, T, p = [4, 3], [1, 2], 2
    net = build_network({"topology": {**HX, "distance_latency": True}, "links": {"latency_local": 3}})
    ps = net.topo.router_port_start
    for r in range(net.n_routers):
        c = coords(net, r)
        offset = p
        for d in range(2):
            for v in range(dims[d]):
                if v == c[d]:
                    continue
                for j in range(T[d]):
                    port = ps[r] + offset + (v if v < c[d] else v - 1) * T[d] + j
                    expected = list(c)
                    expected[d] = v
                    assert coords(net, int(net.port_peer_router[port])) == expected
                    assert net.port_latency[port] == 3 * abs(v - c[d])
            offset += (dims[d] - 1) * T[d]
        assert offset == ps[r + 1] - ps[r]


def test_gemini_torus_ports_by_hand():
    """Gemini (seed 003 §III-A): 2 nodes per switch, two links per direction in X and Z, one in Y."""
    net = net_of(**GEMINI)
    assert (net.n_routers, net.n_nodes) == (32, 64)
    assert (np.diff(net.topo.router_port_start) == 2 + 2 * 2 + 2 * 1 + 2 * 2).all()
    assert (net.params["dir_port"] == [2, 4, 6, 7, 8, 10]).all()  # X+ X- Y+ Y- Z+ Z- (first link of each)
    G = link_multigraph(net)
    assert G.number_of_edges(0, 1) == 2  # X neighbours: two links
    assert G.number_of_edges(0, 4) == 2  # Y radix 2: the + and the - link reach the same router
    assert G.number_of_edges(0, 8) == 2 and G.number_of_edges(0, 24) == 2  # Z neighbours, and across the wrap
    mesh = net_of(kind="mesh", dims=[3, 3], links=[2, 3])
    assert np.diff(mesh.topo.router_port_start).tolist() == [6, 8, 6, 9, 11, 9, 6, 8, 6]  # corners 1 + 2 + 3
    twisted = net_of(kind="twisted_torus", dims=[4, 3], twist=2, links=2)
    assert twisted.radix == 1 + 8


@pytest.mark.parametrize("topology,field", [
    ({"kind": "torus", "dims": [4, 4], "links": [2, 1, 1]}, "topology.links"),
    ({"kind": "hyperx", "dims": [4, 4], "trunking": [2]}, "topology.trunking"),
    ({"kind": "hyperx", "dims": [4, 1]}, "topology.dims"),
    ({"kind": "mesh", "dims": [4, 4], "links": 0}, "topology.links"),
])
def test_bad_counts_are_one_line_errors(topology, field):
    with pytest.raises(ConfigError) as e:
        build_network({"topology": topology})
    assert e.value.field == field


def test_routings_a_hyperx_refuses():
    with pytest.raises(ConfigError, match="adaptive needs a torus or mesh"):
        fastnet.run({"topology": HX, "routing": {"algorithm": "adaptive"}})
    with pytest.raises(ConfigError, match="val routing on this hyperx needs at least 2 VCs"):
        fastnet.run({"topology": HX, "routing": {"algorithm": "val"}, "router": {"vcs": 1}})


@pytest.mark.parametrize("topology", [HX, {"kind": "hyperx", "dims": [3, 3, 2], "trunking": 2, "p": 1}, GEMINI,
                                      {"kind": "mesh", "dims": [4, 3], "links": [1, 2]}])
def test_algebraic_minimal_ports_equal_the_table(topology):
    net = build_network({"topology": topology})
    alg = build_routes(net, budget=0)
    table = with_distance_table(net, alg)
    assert not is_table(alg)
    assert not is_table(build_routes(net)) or topology["kind"] != "hyperx"  # a HyperX never builds a table
    ps, port = net.topo.router_port_start, net.topo.port
    b1, b2 = np.zeros(64, np.int64), np.zeros(64, np.int64)
    for r in range(net.n_routers):
        for d in range(net.n_routers):
            if d != r:
                n1 = table_min_ports(ps, port, table.dist, r, d, b1)
                n2 = min_ports(ps, port, alg.dist, alg.ip, alg.alg, r, d, b2, minimal_scan(alg))
                assert sorted(b1[:n1]) == sorted(b2[:n2]), (r, d)
    assert int(alg.ip[2]) == int(table.dist.max())  # IP_DIAMETER


# ---------------------------------------------------------------- zero load: latency and paths

def zero_load(topology: dict, routing: str, links: dict | None = None, n: int = 40):
    L, D = 4, 2
    cfg = {"topology": topology, "links": links or LAT, "routing": {"algorithm": routing},
           "router": {"delay": D, "buffer_phits": 8}, "traffic": {"packet_phits": L}}
    net = build_network(cfg)
    rng = np.random.default_rng(1)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, net.n_nodes, size=(n, 2))] + [(0, 1), (1, 0)]
    s, res = single_packets(cfg, pairs, L)
    lat, netlat, hops, hl, hg = res.T
    differ = np.array([sum(a != b for a, b in zip(coords(net, int(net.node_router[x])),
                                                   coords(net, int(net.node_router[y])))) for x, y in pairs])
    return s, pairs, L, D, lat, netlat, hops, hl, differ


@pytest.mark.parametrize("topology", [HX, HX3])
@pytest.mark.parametrize("routing", ["dor", "min", "ugal_l", "val"])
def test_hyperx_zero_load_latency_and_hops(topology, routing):
    """latency = 2 * injection + local latency * hops + (hops + 1) * router delay + (L - 1), exactly; minimal
    routings (and UGAL, which stays minimal on an idle network) change each differing coordinate once, Valiant
    at most twice."""
    s, pairs, L, D, lat, netlat, hops, hl, differ = zero_load(topology, routing)
    expected = 2 * LAT["latency_injection"] + LAT["latency_local"] * hl + (hops + 1) * D + L - 1
    np.testing.assert_array_equal(lat, expected)
    np.testing.assert_array_equal(netlat, expected)
    assert (hl == hops).all()
    if routing == "val":
        assert (hops >= differ).all() and (hops <= 2 * differ).all() and (hops > differ).any()
    else:
        np.testing.assert_array_equal(hops, differ)
    diameter = len(topology["dims"])  # min: one VC class per hop
    assert s.cfg["router"]["vcs"] == {"dor": 1, "min": diameter, "ugal_l": 2, "val": 2}[routing]


def test_hyperx_distance_latency_zero_load():
    """With distance_latency each hop of the dimension-order path takes latency_local x the distance it spans."""
    topology = {**HX, "distance_latency": True}
    s, pairs, L, D, lat, netlat, hops, hl, differ = zero_load(topology, "dor")
    net = s.net
    path_latency = []
    for x, y in pairs:
        a, b = coords(net, int(net.node_router[x])), coords(net, int(net.node_router[y]))
        path_latency.append(sum(LAT["latency_local"] * abs(u - v) for u, v in zip(a, b)))
    np.testing.assert_array_equal(lat, 2 * LAT["latency_injection"] + np.array(path_latency) + (hops + 1) * D + L - 1)
    assert max(path_latency) > LAT["latency_local"] * max(differ)  # some hops span more than 1


@pytest.mark.parametrize("routing", ["dor", "min"])
def test_gemini_torus_zero_load(routing):
    s, pairs, L, D, lat, netlat, hops, hl, differ = zero_load(GEMINI, routing)
    np.testing.assert_array_equal(lat, 2 * LAT["latency_injection"] + LAT["latency_local"] * hl + (hops + 1) * D + L - 1)
    dims = GEMINI["dims"]
    ring = [sum(min(abs(u - v), k - abs(u - v)) for u, v, k in
                zip(coords(s.net, int(s.net.node_router[x])), coords(s.net, int(s.net.node_router[y])), dims))
            for x, y in pairs]
    np.testing.assert_array_equal(hops, ring)


# ---------------------------------------------------------------- under load

def run(topology, routing, pattern="uniform", load=1.0, seed=1, sim=(300, 1500, 0)):
    return fastnet.run({"topology": topology, "routing": {"algorithm": routing},
                        "traffic": {"pattern": pattern, "load": load, "packet_phits": 4},
                        "router": {"buffer_phits": 8},
                        "sim": {"warmup": sim[0], "measure": sim[1], "drain": sim[2], "seed": seed}})


@pytest.mark.parametrize("topology,routing,pattern", [
    (HX, "dor", "uniform"), (HX, "val", "tornado"), (HX, "ugal_l", "tornado"), (HX, "min", "uniform"),
    (HX3, "ugal_l", "uniform"), (HX3, "val", "uniform"), (HX3, "dor", "tornado"),
    (GEMINI, "dor", "uniform"), (GEMINI, "adaptive", "bitcomp"), (GEMINI, "val", "uniform"),
    ({"kind": "mesh", "dims": [4, 4], "links": [2, 1]}, "dor", "transpose"),
])
def test_conservation_past_saturation(topology, routing, pattern):
    """Load 1.0 is past saturation here; simulate() audits every packet and credit, the watchdog is on."""
    ds = run(topology, routing, pattern)
    assert ds.packets_delivered > 0 and ds.packets_queued > 0
    assert ds.packets_created == ds.packets_delivered + ds.packets_in_flight + ds.packets_queued


@pytest.mark.parametrize("topology", [GEMINI, {**HX, "trunking": [2, 3]}])
def test_dor_spreads_over_parallel_links(topology):
    """Every parallel link of a direction (trunk) carries traffic, about evenly, under uniform traffic."""
    ds = run(topology, "dor", load=0.3, sim=(300, 3000, 500))
    net = build_network({"topology": topology})
    util = ds.port_utilization.values
    ports = np.flatnonzero(net.port_peer_router >= 0)
    groups: dict[tuple[int, int], list[float]] = {}
    for p in ports:
        groups.setdefault((int(net.port_router[p]), int(net.port_peer_router[p])), []).append(util[p])
    parallel = [np.array(u) for u in groups.values() if len(u) > 1]
    assert parallel and all((u > 0).all() for u in parallel)
    total = np.concatenate(parallel)
    spread = np.array([u.max() - u.min() for u in parallel])
    assert spread.mean() < 0.25 * total.mean()


def test_ugal_leaves_dimension_order_under_tornado():
    """Tornado puts a router's p nodes on one link per dimension under DOR; Valiant spreads them, and UGAL-L
    takes Valiant paths when that link's queue grows."""
    dor = run(HX, "dor", "tornado", load=0.8, sim=(500, 2000, 0))
    ugal = run(HX, "ugal_l", "tornado", load=0.8, sim=(500, 2000, 0))
    assert ugal.accepted_phits_per_node_cycle > 1.3 * dor.accepted_phits_per_node_cycle
    assert ugal.hops_mean > dor.hops_mean


def _without_wall_time(ds: xr.Dataset) -> xr.Dataset:
    return ds.assign_attrs(wall_seconds=0.0)


@pytest.mark.parametrize("topology,routing", [(HX, "ugal_l"), (GEMINI, "dor")])
def test_same_seed_same_result(topology, routing):
    a, b = run(topology, routing, load=0.6), run(topology, routing, load=0.6)
    xr.testing.assert_identical(_without_wall_time(a), _without_wall_time(b))
    assert run(topology, routing, load=0.6, seed=2).packet_latency_mean.item() != a.packet_latency_mean.item()


def test_model_crosscheck_follows_hyperx_dimension_order():
    """`fastnet throughput --simulate` traces the engine's dimension-order route on a HyperX without trunking: at a
    load below saturation every port carries the flows the models put on it; trunk links are a choice and refused."""
    from fastnet.throughput.crosscheck import crosscheck

    # tornado: the 2 nodes of router (x, y) send to (x + 1, y + 1), over its X link, then over the Y link of
    # (x + 1, y): 2 flows per link, on links another order (Y first) would not use
    cfg = {"topology": {"kind": "hyperx", "dims": [4, 3], "p": 2}, "routing": {"algorithm": "dor"},
           "traffic": {"pattern": "tornado", "packet_phits": 1},
           "sim": {"warmup": 1000, "measure": 8000, "drain": 1000}}
    ds = crosscheck(cfg, loads=[0.2])
    flows_per_link = ds.model_link_load.sel(model="mcf") / ds.model_throughput_per_node.sel(model="mcf")
    offered = float(ds.sim_offered_phits_per_node_cycle[0])
    assert flows_per_link.max() >= 2
    np.testing.assert_allclose(ds.sim_port_utilization.isel({"traffic.load": 0}), flows_per_link * offered, atol=0.03)
    with pytest.raises(ConfigError, match="not single-path"):
        crosscheck(fastnet.config.merge(cfg, {"topology": {"trunking": [1, 2]}}), loads=[0.2])
