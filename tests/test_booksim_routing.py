"""BookSim2's routings on a flattened butterfly (src/networks/flatfly_onchip.cpp) and its concentrated mesh
(src/networks/cmesh.cpp): valiant_flatfly's intermediate (routing.intermediate = "any") against the mean hop
count enumerated by hand, and the express channels of a cmesh by hand."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import fastnet
from fastnet.build.torus import express_neighbours
from fastnet.config import resolve
from fastnet.errors import ConfigError
from fastnet.sim import prepare
from fastnet.topology import build_network


def dor_hops_stopping_at(s, i, d, k):
    """Hops of valiant_flatfly's path s -> i -> d on a 2-D k x k flattened butterfly: dimension order (x first)
    to i, unless the path meets d's router first, then dimension order to d."""
    def path(a, b):  # routers after a on the dimension-order path a -> b
        ax, ay, bx, by = a % k, a // k, b % k, b // k
        out = []
        if ax != bx:
            out.append(bx + k * ay)
        if ay != by:
            out.append(bx + k * by)
        return out
    first = path(s, i)
    if d in first:
        return first.index(d) + 1
    return len(first) + len(path(i, d))


def test_valiant_any_intermediate_hops_as_booksim2():
    k = 3
    R = k * k
    # uniform traffic over nodes (p = 1) to another node; intermediate uniform over all routers
    want = np.mean([dor_hops_stopping_at(s, i, d, k) for s, d, i in itertools.product(range(R), repeat=3)
                    if s != d])
    auto = fastnet.run({"topology": {"kind": "hyperx", "dims": [k, k], "p": 1},
                        "routing": {"algorithm": "val", "intermediate": "any"},
                        "traffic": {"pattern": "uniform", "load": 0.05, "packet_phits": 1},
                        "sim": {"warmup": 500, "measure": 20000, "seed": 3}})
    got = float(auto["hops_mean"])
    assert got == pytest.approx(want, rel=0.02)  # about 9,000 packets
    assert int(auto["unstable"]) == 0


@pytest.mark.parametrize("topology,routing", [
    ({"kind": "fattree", "k": 2, "n": 2}, {"algorithm": "val", "intermediate": "any"}),  # a top switch
    ({"kind": "dragonfly"}, {"algorithm": "val", "intermediate": "any"}),  # a group, or a router: "router"
    ({"kind": "hyperx", "dims": [3, 3]}, {"algorithm": "ugal_l", "intermediate": "any"}),  # find_ran_intm's
    ({"kind": "torus", "dims": [4, 4]}, {"algorithm": "val", "intermediate": "router"}),  # a dragonfly's
    ({"kind": "dragonfly"}, {"algorithm": "min", "intermediate": "router"}),  # no intermediate
])
def test_an_intermediate_the_routing_does_not_draw_is_refused(topology, routing):
    with pytest.raises(ConfigError, match="routing.intermediate"):
        prepare(resolve({"topology": topology, "routing": routing}))


def test_dragonfly_router_intermediate_as_booksim2():
    """routing.intermediate = "router" (BookSim2's ugal_dragonflynew): a router drawn among all 36 of 9 groups. To
    the next group (group_adversarial), one in the source's group (1/9) is the minimal path, one global hop; one
    in the destination's group (1/9) one global hop too; any other two: 16/9 global hops a packet, against 2 for
    a group as intermediate. Local hops: on to the intermediate router inside its group, and from it."""
    def run(intermediate):
        return fastnet.run({"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2},
                            "routing": {"algorithm": "val", "intermediate": intermediate},
                            "traffic": {"pattern": "group_adversarial", "load": 0.05, "packet_phits": 1},
                            "sim": {"warmup": 500, "measure": 8000, "seed": 5}})
    auto, router = run("auto"), run("router")
    assert float(auto["hops_global_mean"]) == 2.0
    assert float(router["hops_global_mean"]) == pytest.approx(16 / 9, abs=0.03)  # about 29,000 packets
    assert float(router["hops_local_mean"]) > float(auto["hops_local_mean"]) + 0.3
    assert int(router["unstable"]) == 0


def test_cmesh_express_channels_by_hand():
    # 4 x 4 routers (router x + 4y), 4 nodes each; the edge routers' missing mesh ports go k/2 = 2 along the edge
    assert express_neighbours(4)[0] == [8, 2]  # (0, 0): -x side to (0, 2), -y side to (2, 0)
    assert express_neighbours(4)[7] == [15]  # (3, 1): +x side to (3, 3)
    assert express_neighbours(4)[5] == []  # inside
    net = build_network({"topology": {"kind": "mesh", "dims": [4, 4], "p": 4, "express": 2},
                         "links": {"latency": 2}})
    assert net.n_ports == 16 * 4 + 2 * 2 * 4 * 3 + 4 * 4  # node ports, mesh links both ways, 4k express ports
    lat = {}
    for p in np.flatnonzero(net.port_peer_router >= 0):
        lat.setdefault((int(net.port_router[p]), int(net.port_peer_router[p])), []).append(int(net.port_latency[p]))
    assert lat[(0, 1)] == [2] and lat[(0, 4)] == [2]  # mesh channels: cX = 2 cycles
    assert lat[(0, 8)] == [4] and lat[(3, 11)] == [4] and lat[(12, 14)] == [4]  # express: cY * k/2 = 4 cycles
    with pytest.raises(ConfigError, match="topology.express"):
        build_network({"topology": {"kind": "mesh", "dims": [5, 5], "express": 1}})


def cmesh_xy_next(r, t, k):
    """The router after r on BookSim2's dor_cmesh path to router t (cmesh.cpp cmesh_xy, its ports read through
    the cmesh's wiring): x first; a move of more than one router along the bottom or top row (left or right
    column) takes the edge's express channel, k/2 routers along it."""
    x, y, tx, ty, h = r % k, r // k, t % k, t // k, k // 2
    if x != tx:
        if abs(tx - x) > 1 and y in (0, k - 1):
            return y * k + (x + h) % k
        return r + (1 if tx > x else -1)
    if abs(ty - y) > 1 and x in (0, k - 1):
        return (y + h) % k * k + x
    return r + (k if ty > y else -k)


def test_dor_express_follows_booksim2s_dor_cmesh():
    """Every router pair of BookSim2's 4x4 cmesh: the path of dor_express (kernels/routing.py: dimension order, the
    express port where express_port gives one) is cmesh_xy's, hop by hop, through the ports build/torus.py wires."""
    from fastnet.build.network import P_PEER_ROUTER
    from fastnet.kernels.routing import dor_step, express_port
    from fastnet.kernels.state import PK_VCC

    s = prepare({"topology": {"kind": "mesh", "dims": [4, 4], "p": 4, "express": 2},
                 "routing": {"algorithm": "dor_express"}})
    ps, port, ip, alg, pk = s.net.topo.router_port_start, s.net.topo.port, s.routes.ip, s.routes.alg, s.state.pk
    express_hops = 0
    for r0, t in itertools.permutations(range(16), 2):
        r = r0
        pk[0, PK_VCC] = -1
        while r != t:
            out = express_port(ps, ip, r, t)
            express_hops += out >= 0
            if out < 0:
                out = dor_step(ps, port, s.state.pt, ip, alg, pk, s.state.rng_router, r, t, 0, False, False)[0]
            nxt = int(port[out, P_PEER_ROUTER])
            assert nxt == cmesh_xy_next(r, t, 4), (r0, t, r)
            r = nxt
    assert express_hops > 0
    with pytest.raises(ConfigError, match="express") as e:
        prepare({"topology": {"kind": "mesh", "dims": [4, 4]}, "routing": {"algorithm": "dor_express"}})
    assert e.value.field == "routing.algorithm"


# ---------------------------------------------------------------- xy_yx (xy_yx_mesh, xyyx_flatfly and adaptive ones)

@pytest.mark.parametrize("topology", [{"kind": "mesh", "dims": [4, 3]}, {"kind": "hyperx", "dims": [3, 4], "p": 1}])
def test_xy_yx_takes_either_dimension_order(topology):
    """XY (order 0) takes the lowest dimension in which router and destination differ first, YX (order 1) the
    highest, as BookSim2's dor_next_mesh and flatfly_outport(_yx); the routing's hop and the first port the
    adaptive choice reads agree."""
    from fastnet.build.network import P_PEER_ROUTER
    from fastnet.kernels.routing import dor_step, hx_dor_step, order_first_port
    from fastnet.kernels.state import PK_VCC

    s = prepare({"topology": topology, "routing": {"algorithm": "xy_yx"}})
    ps, port, ip, alg, pk, rng = (s.net.topo.router_port_start, s.net.topo.port, s.routes.ip, s.routes.alg,
                                  s.state.pk, s.state.rng_router)
    dims = topology["dims"]
    coord = [np.unravel_index(r, dims[::-1])[::-1] for r in range(s.net.n_routers)]  # dimension 0 fastest
    for r, t in itertools.permutations(range(s.net.n_routers), 2):
        differ = [i for i in range(len(dims)) if coord[r][i] != coord[t][i]]
        for yx in (False, True):
            pk[0, PK_VCC] = -1  # entering a dimension
            if topology["kind"] == "mesh":
                out = dor_step(ps, port, s.state.pt, ip, alg, pk, rng, r, t, 0, False, yx)[0]
            else:
                out = hx_dor_step(ps, port, s.state.pt, ip, alg, rng, r, t, yx)
            assert out == order_first_port(ps, ip, alg, r, t, yx)
            nxt = coord[port[out, P_PEER_ROUTER]]
            moved = [i for i in range(len(dims)) if nxt[i] != coord[r][i]]
            assert moved == [differ[-1] if yx else differ[0]]


def test_xy_yx_needs_two_vc_classes():
    with pytest.raises(ConfigError, match="at least 2 VCs") as e:
        prepare({"topology": {"kind": "mesh", "dims": [4, 4]}, "routing": {"algorithm": "xy_yx"},
                 "router": {"vcs": 1}})
    assert e.value.field == "router.vcs"
    with pytest.raises(ConfigError, match="routing.algorithm|mesh"):
        prepare({"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "xy_yx"}})


@pytest.mark.slow  # compiles a cycle loop of its own (about 25 s on two cores); the matrix's xy_yx rows are slow too
def test_adaptive_xy_yx_carries_transpose_as_booksim2():
    """Transpose on BookSim2's 8x8 mesh (docs/validation/matrix/mesh_8x8.cfg, 16 VCs, 1-flit packets): dim_order
    saturates at 0.15 flits/node/cycle in both simulators (the matrix), adaptive_xy_yx_mesh carries 0.3 with
    35.25 cycles in BookSim2 (the order whose first hop has fewer credits in use, each on its half of the VCs)."""
    from fastnet import booksim

    path = Path(__file__).resolve().parents[1] / "docs" / "validation" / "matrix" / "mesh_8x8.cfg"
    cfg = booksim.read_file(path, ["routing_function=adaptive_xy_yx", "traffic=transpose", "injection_rate=0.3"])
    assert cfg["routing"] == {"algorithm": "adaptive_xy_yx"}
    ds = fastnet.run(cfg)
    assert float(ds.accepted_phits_per_node_cycle) > 0.95 * 0.3
    assert float(ds.packet_latency_mean) == pytest.approx(35.25, abs=1.5)


@pytest.mark.parametrize("function, routing", [("dor_no_express", "dor"), ("dor", "dor_express"),
                                               ("xy_yx_no_express", "xy_yx")])
def test_cmesh_routing_functions_map(function, routing):
    from fastnet import booksim

    cfg = booksim.to_fastnet(booksim.parse("topology = cmesh; k = 4; n = 2; c = 4; xr = 2; yr = 2; x = 4; y = 4; "
                                           f"routing_function = {function};"))
    assert cfg["routing"] == {"algorithm": routing}
    prepare(cfg)


# ---------------------------------------------------------------- ugal_xyyx (ugal_l with routing.order = "xy_yx")

def test_ugal_xyyx_vc_quarters_and_ports_as_booksim2():
    """ugal_xyyx_flatfly with 8 VCs: XY on VCs 0-3, YX on 4-7, each half's lower pair to the intermediate (ph 1),
    its upper pair to the destination (ph 2); both candidate paths are read at their first port in the packet's
    order (flatfly_outport or flatfly_outport_yx)."""
    from fastnet import booksim
    from fastnet.build.network import LOCAL, P_PEER_PORT, P_PEER_ROUTER
    from fastnet.build.routing import minimal_scan
    from fastnet.kernels.routing import TO_DEST, TO_INTER, hx_dor_step, path_cost, vc_class
    from fastnet.kernels.state import PK_PHASE, PK_VCC, PT_HELD

    cfg = booksim.to_fastnet(booksim.parse("topology = flatfly; k = 4; n = 2; c = 4; x = 4; y = 4; xr = 2; yr = 2; "
                                           "routing_function = ugal_xyyx; num_vcs = 8;"))
    s = prepare(cfg)
    assert s.params.ugal_xy_yx
    ip, pk, vcr = s.routes.ip, s.state.pk, s.routes.vcr
    want = {(0, TO_INTER): (0, 2), (0, TO_DEST): (2, 2), (1, TO_INTER): (4, 2), (1, TO_DEST): (6, 2)}
    for (order, phase), (first, n) in want.items():
        pk[0, PK_VCC], pk[0, PK_PHASE] = order, phase
        assert tuple(vcr[LOCAL, vc_class(ip, s.params, pk, 0, 0, False)]) == (first, n)
    ps, port, pt = s.net.topo.router_port_start, s.net.topo.port, s.state.pt.copy()
    pt[:, :] = 0
    scan, buf = minimal_scan(s.routes), np.zeros(64, np.int64)
    for yx in (False, True):
        # router 0 -> 15: both dims differ
        out = hx_dor_step(ps, port, pt, ip, s.routes.alg, s.state.rng_router, 0, 15, yx)
        assert port[out, P_PEER_ROUTER] == (12 if yx else 3)
        pt[:, :] = 0
        pt[port[out, P_PEER_PORT], PT_HELD] = 5  # credits in use behind this order's first port only
        for read in (False, True):
            q, hops = path_cost(ps, port, s.routes.dist, ip, s.routes.alg, pt, buf, 0, 15, False, scan, read)
            assert (q, hops) == ((5 if read == yx else 0), 2)


def test_routing_order_is_refused_off_ugal_l_on_a_hyperx():
    with pytest.raises(ConfigError, match="xy_yx is an order of ugal_l") as e:
        prepare(resolve({"topology": {"kind": "hyperx", "dims": [4, 4], "p": 1},
                         "routing": {"algorithm": "val", "order": "xy_yx"}}))
    assert e.value.field == "routing.order"
