"""Physical units (fastnet/units.py): times and bandwidths in a config become whole cycles and per-link rates; a
slower link holds a packet for ceil(L x period) cycles, exactly as docs/model.md says; results carry ns and GB/s;
bad values are one-line errors naming the field."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import fastnet
from fastnet.topology import build_network
from fastnet.cli import app
from fastnet.config import resolve
from fastnet.errors import ConfigError
from fastnet.units import PERIOD_ONE, parse_gbytes, parse_time_ns, timing
from test_engine import single_packets

runner = CliRunner()


def test_parsing():
    assert parse_time_ns("40 ns") == 40 and parse_time_ns("0.7 us") == pytest.approx(700)
    assert parse_time_ns("1.5µs") == pytest.approx(1500) and parse_time_ns("250ps") == pytest.approx(0.25)
    assert parse_time_ns(40) is None and parse_time_ns("40") is None and parse_time_ns("40 cycles") is None
    assert parse_gbytes("2 GB/s") == 2 and parse_gbytes("56 Gb/s") == 7 and parse_gbytes("500 MB/s") == 0.5
    assert parse_gbytes("2 GiB/s") is None and parse_gbytes(2) is None


def test_cycle_from_phit_and_reference_bandwidth():
    """BG/Q: 4-byte phits on 2 GB/s links make a 2 ns cycle; 10 ns links are 5 cycles, the 8 ns router 4."""
    t = timing(resolve({"machine": {"name": "sequoia"}}))
    assert (t.cycle_ns, t.basis, t.physical) == (2.0, "links.bandwidth", True)
    assert t.latency == {"injection": 170, "ejection": 170, "local": 5, "global": 5} and t.delay == 4
    assert set(t.period.values()) == {PERIOD_ONE}
    assert any(line.startswith("links.latency_local: 10 ns = 5 cycles -> 5") for line in t.rounding)


def test_slower_classes_move_a_fraction_of_a_phit():
    """Aries: the fastest class (16 GB/s injection) is the reference; 5.25 and 4.7 GB/s links move 0.328 and
    0.294 phits a cycle, within 0.001 % of their bandwidth; the rounding of 55 ns on a 0.855 ns cycle shows."""
    t = timing(resolve({"machine": {"name": "trinity"}}))
    assert t.cycle_ns == 0.25 and t.basis == "links.bandwidth_injection"
    gb = t.gbytes(4)
    assert gb["injection"] == pytest.approx(16) and gb["local"] == pytest.approx(5.25, rel=1e-5)
    assert gb["global"] == pytest.approx(4.7, rel=1e-5)
    h = timing(resolve({"machine": {"name": "hopper"}}))
    assert h.delay == 64 and "router.delay: 55 ns = 64.35 cycles -> 64 (-0.54 %)" in h.rounding


def test_stated_cycle_and_plain_cycles_mix():
    cfg = resolve({"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"phit_bytes": 8},
                   "links": {"cycle": "1 ns", "bandwidth_local": "4 GB/s", "latency_injection": 3},
                   "router": {"delay": "2.4 ns"}})
    t = timing(cfg)
    assert t.cycle_ns == 1 and t.latency["injection"] == 3 and t.delay == 2
    assert t.period["local"] == 2 * PERIOD_ONE and t.period["injection"] == PERIOD_ONE


def test_no_units_is_one_phit_per_cycle_and_the_workload_cycle():
    t = timing(resolve({}))
    assert not t.physical and t.basis == "default" and t.cycle_ns == 0.8  # 4-byte phits at 40 Gb/s
    t = timing(resolve({"workload": {"kind": "a2a", "cycle_ns": 2.5}}))
    assert t.cycle_ns == 2.5 and t.basis == "workload.cycle_ns"


@pytest.mark.parametrize("cfg, field", [
    ({"links": {"bandwidth": "0 GB/s"}}, "links.bandwidth"),
    ({"links": {"bandwidth": "fast"}}, "links.bandwidth"),
    ({"links": {"bandwidth": "2 GB/s", "latency": "0.5 ns"}}, "links.latency"),  # 0.25 cycles: the key given
    ({"links": {"bandwidth": "2 GB/s", "bandwidth_local": "60 kB/s"}}, "links.bandwidth_local"),  # an int32 period
    ({"links": {"bandwidth": "2 GB/s", "latency_global": "0.9 ns"}}, "links.latency_global"),
    ({"links": {"bandwidth": "2 GB/s", "bandwidth_injection": "4 GB/s"}}, "links.bandwidth_injection"),
    ({"links": {"bandwidth": "8 GB/s", "cycle": "1 ns"}}, "links.bandwidth"),  # the key given, not a class's
    ({"links": {"latency": "40 ns"}}, "links.latency"),  # a time with no cycle time
    ({"router": {"delay": "5 ns"}}, "router.delay"),
    ({"links": {"cycle": "0 ns"}}, "links.cycle"),
    ({"links": {"latency": -3}}, "links.latency"),
    ({"links": {"bandwidth": "2 GB/s"}, "workload": {"kind": "a2a", "link_gbps": 10}}, "workload.link_gbps"),
    ({"topology": {"kind": "fattree", "form": "m_port_n_tree", "m": 5, "n": 2}}, "topology.m"),
    ({"topology": {"kind": "dragonfly", "a": 96, "group_shape": [16, 5]}}, "topology.group_shape"),
])
def test_bad_units_are_one_line_errors(cfg, field, tmp_path):
    with pytest.raises(ConfigError) as e:
        build_network(cfg)
    assert e.value.field == field
    path = tmp_path / "bad.toml"
    lines = []
    for section, values in cfg.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    path.write_text("\n".join(lines) + "\n")
    r = runner.invoke(app, ["info", str(path)])
    assert r.exit_code == 2 and field in r.output and len(r.output.strip().splitlines()) == 1, r.output


# ---------------------------------------------------------------- the kernel: exact times on slower links


def model_latency(lat: list[int], send: list[int], D: int, L: int, S: float) -> int:
    """docs/model.md's timing of one packet on an idle path of links 0 (injection) .. k (ejection): at router j
    the head arrives at a_j, the tail at e_{j-1} + l_{j-1}; it is granted at g = a_j + D, leaves the crossbar at
    max(g + ceil(L/S), tail) and the link at e_j = max(g + s_j, that); the next head arrives at e_j - s_j + l_j."""
    head, tail = lat[0], lat[0] + send[0]
    for j in range(1, len(lat)):
        g = head + D
        end = max(g + send[j], g + math.ceil(L / S), tail)
        head, tail = end - send[j] + lat[j], end + lat[j]
    return tail - 1


@pytest.mark.parametrize("bandwidths", [("16 GB/s", "5 GB/s"), ("4 GB/s", "16 GB/s"), ("3 GB/s", "7 GB/s")])
@pytest.mark.parametrize("speedup", [1.0, 2.0])
def test_zero_load_latency_on_slower_links_is_the_model(bandwidths, speedup):
    """A torus whose injection and router links run at different rates: every packet's latency is the documented
    model's, to the cycle (fast to slow, slow to fast, and both slower than a stated reference)."""
    inj, local = bandwidths
    L, D = 12, 2
    links = {"bandwidth_injection": inj, "bandwidth_local": local, "latency": "8 ns", "latency_injection": "2 ns"}
    if bandwidths[0] == "3 GB/s":
        links["bandwidth"] = "8 GB/s"
    cfg = {"topology": {"kind": "torus", "dims": [4, 3], "p": 2}, "links": links,
           "router": {"delay": D, "speedup": speedup, "buffer_phits": 16}, "traffic": {"packet_phits": L}}
    t = timing(resolve(cfg))
    send = {c: -(-L * p // PERIOD_ONE) for c, p in t.period.items()}
    assert send["injection"] != send["local"]
    rng = np.random.default_rng(2)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 24, size=(30, 2))] + [(0, 1), (0, 23)]
    s, res = single_packets(cfg, pairs, L)
    lat, netlat, hops = res[:, 0], res[:, 1], res[:, 2]
    for (a, b), got, h in zip(pairs, lat, hops):
        li, ll = t.latency["injection"], t.latency["local"]
        expected = model_latency([li] + [ll] * int(h) + [li], [send["injection"]] + [send["local"]] * int(h)
                                 + [send["injection"]], D, L, speedup)
        assert got == expected, (a, b, h)
    np.testing.assert_array_equal(lat, netlat)


def test_a_link_at_half_rate_takes_twice_as_long_for_a_long_message():
    """MPI ping-pong of 200 KB between neighbours: at half the reference bandwidth on every link the time doubles
    (to within the per-packet latency)."""
    def one_way(bw_half: bool) -> float:
        links = {"bandwidth": "4 GB/s", "latency": "4 ns"}
        if bw_half:
            links.update(bandwidth_local="2 GB/s", bandwidth_injection="2 GB/s")
        ds = fastnet.run({"topology": {"kind": "torus", "dims": [4, 4]}, "links": links,
                          "workload": {"kind": "mpi", "program": "pingpong", "message_bytes": 200_000}})
        return ds.execution_cycles.item()
    assert one_way(True) / one_way(False) == pytest.approx(2.0, rel=0.01)


def test_results_carry_both_units():
    ds = fastnet.run({"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.2, "phit_bytes": 8},
                      "links": {"bandwidth": "10 GB/s", "latency": "5 ns"},
                      "sim": {"warmup": 300, "measure": 1000, "drain": 3000}})
    cycle = ds.attrs["cycle_ns"]
    assert cycle == 0.8
    assert ds.packet_latency_mean_ns.item() == pytest.approx(ds.packet_latency_mean.item() * cycle)
    assert ds.network_latency_mean_ns.item() == pytest.approx(ds.network_latency_mean.item() * cycle)
    assert ds.accepted_gbytes_per_node.item() == pytest.approx(ds.accepted_phits_per_node_cycle.item() * 10)
    assert ds.accepted_gbytes_per_node.attrs["units"] == "GB/s"
    assert json.loads(ds.attrs["timing"])["latency_cycles"]["local"] == 6  # 5 ns / 0.8 ns = 6.25


def test_info_shows_the_derived_timing():
    r = runner.invoke(app, ["info", "--machine", "darter", "--json"])
    assert r.exit_code == 0, r.output
    facts = json.loads(r.stdout)
    assert facts["cycle_ns"] == 0.25 and facts["latency_global_cycles"] == 400
    assert facts["bandwidth_global_gbytes_per_s"] == pytest.approx(4.7, rel=1e-4)
    assert "links.bandwidth_local: 5.25 GB/s" in facts["rounding"]


def test_black_links_take_their_own_rate():
    """An Aries-like group (rows and columns): bandwidth_black sets the column links' rate, the rows keep the
    local one; auto follows bandwidth_local."""
    from fastnet.build.network import LOCAL

    topo = {"kind": "dragonfly", "p": 2, "a": 6, "h": 2, "g": 4, "group_shape": [3, 2]}
    links = {"bandwidth_injection": "8 GB/s", "bandwidth_local": "4 GB/s", "bandwidth_black": "2 GB/s"}
    net = build_network({"topology": topo, "links": links})
    local = net.port_class == LOCAL
    black = local & (net.port_wire == 1)
    assert black.any() and (net.port_period[black] == 4 * PERIOD_ONE).all()
    assert (net.port_period[local & ~black] == 2 * PERIOD_ONE).all()
    del links["bandwidth_black"]
    net = build_network({"topology": topo, "links": links})
    assert (net.port_period[local] == 2 * PERIOD_ONE).all()
