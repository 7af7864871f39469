"""BookSim2's router keys beyond its defaults (issue 36): VC buffers smaller than a packet (wormhole, with the flit
crossbar), `wait_for_tail_credit = 1` (router.wait_for_tail_credit) and `input_speedup` (router.input_speedup),
each against BookSim2's own figure for the same config file (booksim/booksim2 at 28f43299, built here)."""

from __future__ import annotations

import pytest

import fastnet
from fastnet import booksim, config
from fastnet.errors import ConfigError
from fastnet.kernels.audit import AU_CREDIT_ERRORS, AU_READY_ERRORS, audit
from fastnet.kernels.state import C_DELIVERED
from fastnet.sim import prepare, simulate

# two routers in a line, one node each: node 0 sends to node 1 and node 1 to node 0, all they can
LINE = ("topology = mesh; k = 2; n = 1; routing_function = dim_order; traffic = bitcomp; injection_rate = 1.0; "
        "injection_rate_uses_flits = 1; sim_type = throughput; sample_period = 2000; warmup_periods = 3; seed = 0; "
        "packet_size = 8; vc_buf_size = 8; ")
# a 4x4 mesh with 8-flit packets, 4 VCs of 16 flits, uniform past saturation
MESH = ("topology = mesh; k = 4; n = 2; routing_function = dim_order; num_vcs = 4; vc_buf_size = 16; "
        "packet_size = 8; injection_rate_uses_flits = 1; injection_rate = 0.8; sim_type = throughput; seed = 0; "
        "sample_period = 5000; warmup_periods = 3; ")


def accepted(text: str) -> float:
    return float(fastnet.run(booksim.to_fastnet(booksim.parse(text))).accepted_phits_per_node_cycle)


@pytest.mark.parametrize("wait, booksim2", [(0, 0.8), (1, 8 / 15)])
def test_wait_for_tail_credit_reallocates_a_vc_once_it_is_empty(wait, booksim2):
    """One VC per port: with wait_for_tail_credit = 1 the next packet may have the VC of the router downstream
    only once the credit of the last one's tail is back, so each 8-flit packet takes 15 cycles (BookSim2:
    0.5333 flits/node/cycle); with 0, as soon as that tail has crossed (BookSim2: 0.8)."""
    got = accepted(LINE + f"num_vcs = 1; wait_for_tail_credit = {wait};")
    assert got == pytest.approx(booksim2, abs=0.005)


@pytest.mark.parametrize("speedup, booksim2", [(1, 0.7415), (2, 0.7937)])
def test_input_speedup_lets_several_vcs_of_a_port_cross_at_once(speedup, booksim2):
    """input_speedup = 2 gives each input port two crossbar inputs (VC v uses input v mod 2), which lifts what
    the mesh carries past saturation as much as in BookSim2 (0.7415 -> 0.7937 flits/node/cycle)."""
    got = accepted(MESH + f"input_speedup = {speedup};")
    assert got == pytest.approx(booksim2, rel=0.01)


@pytest.mark.parametrize("crossbar", ["flit", "packet"])
def test_keys_keep_every_credit_and_packet(crossbar):
    """Wormhole buffers (flit crossbar only), wait_for_tail_credit and input_speedup 2 past saturation (BookSim2's
    allocators, the loop the tests above compile): every VC's credits add up, no VC drains forever (audit), every
    head waits once."""
    cfg = {"topology": {"kind": "mesh", "dims": [3, 3]}, "routing": {"algorithm": "dor"},
           "router": {"vcs": 2, "buffer_phits": 3 if crossbar == "flit" else 6, "crossbar": crossbar,
                      "allocator": "islip", "vc_choice": "islip", "speedup": 1.0, "wait_for_tail_credit": True,
                      "input_speedup": 2},
           "traffic": {"load": 0.9, "packet_phits": 6}, "sim": {"warmup": 500, "measure": 1500, "drain": 0}}
    s = simulate(prepare(cfg))
    a = audit(s.params, s.state)
    assert a[AU_CREDIT_ERRORS] == 0 and a[AU_READY_ERRORS] == 0
    assert int(s.state.ctr[C_DELIVERED]) > 300  # it moved


def test_wormhole_buffers_only_with_the_flit_crossbar():
    small = {"router": {"buffer_phits": 4}, "traffic": {"packet_phits": 8}}
    with pytest.raises(ConfigError, match="flit") as e:
        prepare(small)
    assert e.value.field == "router.buffer_phits"
    prepare(config.merge(small, {"router": {"crossbar": "flit"}}))


@pytest.mark.parametrize("router, field", [({"input_speedup": 0}, "router.input_speedup"),
                                           ({"input_speedup": 17}, "router.input_speedup"),
                                           ({"wait_for_tail_credit": 1}, "router.wait_for_tail_credit")])
def test_bad_values_name_the_key(router, field):
    with pytest.raises(ConfigError) as e:
        config.resolve({"router": router})
    assert e.value.field == field


def test_importer_maps_the_keys():
    cfg = booksim.to_fastnet(booksim.parse("routing_function = dim_order; packet_size = 20; "
                                           "injection_rate = 0.01; wait_for_tail_credit = 1; "
                                           "input_speedup = 2;"))
    assert cfg["router"]["buffer_phits"] == 8 and cfg["traffic"]["packet_phits"] == 20
    assert cfg["router"]["wait_for_tail_credit"] is True and cfg["router"]["input_speedup"] == 2
    assert cfg["router"]["crossbar"] == "flit"
