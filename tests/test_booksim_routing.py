"""BookSim2's routings on a flattened butterfly (src/networks/flatfly_onchip.cpp) and its concentrated mesh
(src/networks/cmesh.cpp): valiant_flatfly's intermediate (routing.intermediate = "any") against the mean hop
count enumerated by hand, and the express channels of a cmesh by hand."""

from __future__ import annotations

import itertools

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


def test_valiant_any_is_refused_where_the_intermediate_is_not_a_router():
    with pytest.raises(ConfigError, match="routing.intermediate"):
        prepare(resolve({"topology": {"kind": "fattree", "k": 2, "n": 2},
                         "routing": {"algorithm": "val", "intermediate": "any"}}))


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
