"""BookSim2's traffic patterns (src/traffic.cpp) as fastnet patterns: each against a table computed by hand on a
small network, and BookSim2's chip numbering of its flattened butterfly (flatfly_transformation)."""

import numpy as np
import pytest

from fastnet.config import resolve
from fastnet.errors import ConfigError
from fastnet.topology import build_network
from fastnet.traffic.patterns import PAT_GROUP, PAT_TABLE, chip_ids, compile_traffic


def traffic(topology: dict, **tcfg):
    cfg = resolve({"topology": topology, "traffic": tcfg})
    return compile_traffic(build_network(cfg), cfg["traffic"], seed=1)


TORUS44 = {"kind": "torus", "dims": [4, 4]}  # 16 nodes, node = router = x + 4y
FLATFLY = {"kind": "hyperx", "dims": [4, 4], "p": 4}  # BookSim2's flatfly k = 4, n = 2, c = 4, xr = yr = 2


def rows(tr) -> dict[int, list[int]]:
    """The candidates of every source (sorted: a node listed twice is twice as likely)."""
    assert tr.pattern == PAT_GROUP
    return {n: sorted(tr.group_nodes[tr.group_start[g]:tr.group_start[g + 1]].tolist())
            for n, g in enumerate(tr.table)}


@pytest.mark.parametrize("pattern, table", [
    # shuffle: rotate the 4 bits left (8 = 1000 -> 0001)
    ("shuffle", [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15]),
    # bitrev: reverse the 4 bits (1 = 0001 -> 1000)
    ("bitrev", [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15]),
    # neighbor: (x, y) -> (x + 1, y + 1) mod 4
    ("neighbor", [5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0]),
])
def test_deterministic_patterns(pattern, table):
    tr = traffic(TORUS44, pattern=pattern)
    assert tr.pattern == PAT_TABLE
    assert tr.table.tolist() == table


def test_digit_patterns_read_traffic_digits():
    # tornado(5, 1) on 16 nodes (BookSim2's k = 5, n = 1): only digit 0, base 5: s -> (s mod 5 + 2) mod 5
    tr = traffic(TORUS44, pattern="tornado", digits=[5, 1])
    assert tr.table.tolist() == [(s % 5 + 2) % 5 for s in range(16)]
    with pytest.raises(ConfigError, match="traffic.digits"):
        traffic(TORUS44, pattern="neighbor", digits=[5, 2])  # ids up to 24 on 16 nodes
    with pytest.raises(ConfigError, match="traffic.digits"):
        traffic({"kind": "fattree", "k": 2, "n": 3}, pattern="neighbor")  # no grid: digits must be given


def test_badperm_yarc_draws_in_the_column_of_the_source_row():
    r = rows(traffic(TORUS44, pattern="badperm_yarc"))
    for s in range(16):  # row y = s // 4 -> any of j*4 + y
        assert r[s] == [s // 4, 4 + s // 4, 8 + s // 4, 12 + s // 4]


def test_random_patterns_rows():
    r = rows(traffic(TORUS44, pattern="diagonal"))
    assert r[3] == [3, 3, 4] and r[15] == [0, 15, 15]  # RandomInt(2) == 0: the next node 1/3, else itself
    r = rows(traffic(TORUS44, pattern="asymmetric"))
    assert r[3] == [3, 11] and r[11] == [3, 11]  # s mod 8, in either half
    r = rows(traffic(TORUS44, pattern="background", exclude=[1, 2]))
    assert r[0] == [0] + list(range(3, 16)) == r[5]
    with pytest.raises(ConfigError, match="traffic.exclude: must name nodes below 16"):  # as hotspot_nodes
        traffic(TORUS44, pattern="background", exclude=[1, 999])
    with pytest.raises(ConfigError, match="taper64"):
        traffic(TORUS44, pattern="taper64")


def test_taper64_weights():
    r = rows(traffic({"kind": "mesh", "dims": [8, 8]}, pattern="taper64"))
    counts = np.bincount(r[0], minlength=64) / len(r[0])
    window = {55, 56, 57, 63, 0, 1, 7, 8, 9}  # (0 + 8*dy + dx) mod 64, dx, dy in -1..1
    for d in range(64):  # half to each of the 9 window offsets, half uniform over the 64 nodes
        assert counts[d] == pytest.approx(0.5 / 64 + (0.5 / 9 if d in window else 0))


def booksim_transformation(dest, k=4, xr=2, c=4):
    """flatfly_transformation of src/networks/flatfly_onchip.cpp (x = k routers per row, xr = yr)."""
    horizontal = (dest % (k * xr)) // xr
    horizontal_rem = (dest % (k * xr)) % xr
    vertical = (dest // (k * xr)) // xr
    vertical_rem = (dest // (k * xr)) % xr
    return (vertical * k + horizontal) * c + xr * vertical_rem + horizontal_rem


def test_chip_numbering_is_flatfly_transformation():
    net = build_network(resolve({"topology": FLATFLY}))
    assert chip_ids(net).tolist() == [booksim_transformation(b) for b in range(64)]


def test_patterns_in_chip_numbering():
    T = [booksim_transformation(b) for b in range(64)]
    # tornado on BookSim2's ids: base 8 (k * xr), 2 digits; each moves (8 + 1) // 2 - 1 = 3
    tr = traffic(FLATFLY, pattern="tornado", numbering="chip")
    for b in range(64):
        x, y = b % 8, b // 8
        assert tr.table[T[b]] == T[(x + 3) % 8 + 8 * ((y + 3) % 8)]
    assert tr.table[0] == 23  # chip (0, 0) -> (3, 3): router (1, 1) = 5, its node 2*1 + 1 = 3
    # badperm_yarc: source b draws among j*8 + b // 8, in fastnet's ids
    r = rows(traffic(FLATFLY, pattern="badperm_yarc", numbering="chip"))
    for b in range(64):
        assert r[T[b]] == sorted(T[j * 8 + b // 8] for j in range(8))
    # hotspot nodes are BookSim2's ids too
    tr = traffic(FLATFLY, pattern="hotspot", numbering="chip", hotspot_nodes=[9], hotspot_fraction=1.0)
    assert tr.hot.tolist() == [T[9]]
    with pytest.raises(ConfigError, match="traffic.numbering"):
        traffic(TORUS44 | {"p": 2}, pattern="uniform", numbering="chip")


def test_packet_size_distribution():
    """traffic.packet_sizes with packet_size_rates (BookSim2's packet_size lists): sizes 1 and 4, 3 to 1, mean 7/4;
    the packet rate is load / mean size, so the offered phits stay the load."""
    import fastnet

    ds = fastnet.run({"topology": {"kind": "mesh", "dims": [4, 4]}, "routing": {"algorithm": "dor"},
                      "traffic": {"pattern": "uniform", "load": 0.2, "packet_phits": 4, "packet_sizes": [1, 4],
                                  "packet_size_rates": [3, 1]},
                      "sim": {"warmup": 500, "measure": 20000, "seed": 2}})
    assert float(ds.offered_phits_per_node_cycle) == pytest.approx(0.2, rel=0.03)
    packets = int(ds.packets_created) / (16 * int(ds.cycles))  # created over the whole run
    assert packets == pytest.approx(0.2 / (7 / 4), rel=0.03)
    with pytest.raises(ConfigError, match="traffic.packet_sizes"):
        traffic(TORUS44, packet_phits=2, packet_sizes=[1, 4])
    with pytest.raises(ConfigError, match="traffic.packet_size_rates: needs traffic.packet_sizes"):
        traffic(TORUS44, packet_size_rates=[1])  # rates without sizes were ignored


def test_on_off_injection_keeps_the_load():
    """BookSim2's on/off source: r1 follows from the load (r1 = rate (alpha + beta) / alpha = 0.4 here), and the
    node's long-run rate is the load."""
    import fastnet

    from fastnet.traffic.patterns import on_off

    assert on_off(0.2, 0.1, 0.1, -1.0) == pytest.approx((0.1, 0.1, 0.4))
    assert on_off(0.2, -1.0, 0.1, 0.4) == pytest.approx((0.1, 0.1, 0.4))
    assert on_off(0.2, 0.1, -1.0, 0.4) == pytest.approx((0.1, 0.1, 0.4))
    with pytest.raises(ConfigError, match="burst_r1"):
        on_off(0.2, 0.1, 0.1, 0.5)  # none negative
    with pytest.raises(ConfigError, match="load 2.4 gives r1 = 1.2, not a probability; loads from 0 to 2 do") as e:
        on_off(0.6, 0.1, 0.1, -1.0, size=4.0)  # the load is what does not fit, not a burst parameter
    assert e.value.field == "traffic.load"
    with pytest.raises(ConfigError, match="gives beta = 3.9, not a probability; loads from 0.0363636 to 0.4 do"):
        on_off(0.01, 0.1, -1.0, 0.4)  # too low a load for beta
    ds = fastnet.run({"topology": {"kind": "mesh", "dims": [4, 4]}, "routing": {"algorithm": "dor"},
                      "traffic": {"pattern": "uniform", "load": 0.2, "packet_phits": 1, "injection": "on_off",
                                  "burst_alpha": 0.1, "burst_beta": 0.1},
                      "sim": {"warmup": 500, "measure": 40000, "seed": 2}})
    assert float(ds.offered_phits_per_node_cycle) == pytest.approx(0.2, rel=0.05)
