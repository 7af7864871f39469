"""BookSim2 configs in (fastnet/booksim.py, docs/booksim.md): the language, every mapping, BookSim2's defaults,
one-line errors for what does not map, and the two reference configs of shared/reference/booksim."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import fastnet
from fastnet import booksim, config
from fastnet.cli import app
from fastnet.errors import ConfigError
from fastnet.inspect import describe

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference" / "booksim"
# the torus config of shared/reference/booksim/README.md (torus8x8_dor.csv), at one load
TORUS_README = ("topology = torus; k = 8; n = 2; routing_function = dim_order;\n"
                "num_vcs = 2; vc_buf_size = 8; packet_size = 1; sim_type = latency;\n"
                "traffic = uniform; injection_rate = 0.2;\n")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def write(tmp_path: Path, text: str, name: str = "booksim.cfg") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def convert(text: str, base: Path = Path(".")) -> dict:
    return booksim.to_fastnet(booksim.parse(text), base)


# ---------------------------------------------------------------- the language

def test_parse_comments_whitespace_and_values():
    text = """// a line comment
    topology=torus;k = 4 ;   n =
       3;   // two statements on a line, one split over lines
    /* a block comment
       routing_function = romm; */
    routing_function = dim_order; traffic = "uniform";
    injection_rate = .25; internal_speedup = 2.0; credit_delay = -1; latency_thres = 1e3;
    watch_out = -; network_file = ../nets/a-b.txt; packet_size = {1,2};
    k = 8;  // a later statement wins
    """
    got = booksim.parse(text)
    assert got == {"topology": "torus", "k": 8, "n": 3, "routing_function": "dim_order", "traffic": "uniform",
                   "injection_rate": 0.25, "internal_speedup": 2.0, "credit_delay": -1, "latency_thres": 1000.0,
                   "watch_out": "-", "network_file": "../nets/a-b.txt", "packet_size": [1, 2]}
    assert isinstance(got["k"], int) and isinstance(got["internal_speedup"], float)


@pytest.mark.parametrize("text,line", [("k = 4;\nn = 2\n", 2), ("k = 4;\n\nk 4;", 3), ("= 4;", 1),
                                       ("/* unclosed\nk = 4;", 1)])
def test_parse_errors_name_the_line(text, line):
    with pytest.raises(ConfigError, match=f"line {line}: expected `key = value;`"):
        booksim.parse(text)


def test_detection():
    assert booksim.looks_like_booksim("topology = torus;\n// c\n")
    assert booksim.looks_like_booksim((REFERENCE / "dragonfly_k4_uniform_min_0.3.cfg").read_text()) \
        if REFERENCE.exists() else True
    assert not booksim.looks_like_booksim("[topology]\nkind = \"torus\"\n")  # TOML
    assert not booksim.looks_like_booksim("k = 4\n")  # valid TOML stays TOML
    assert not booksim.looks_like_booksim("")
    assert not booksim.looks_like_booksim("hello world;")
    assert booksim.looks_like_booksim("k = 4;\nn 2;")  # BookSim2 with a syntax error: parse reports the line


# ---------------------------------------------------------------- mappings

def test_booksim_defaults():
    """Only routing_function given: BookSim2's 8x8 torus, 16 VCs of 8 flits, 4-stage router, uniform 0.1."""
    cfg = convert("routing_function = dim_order;")
    assert cfg == {
        "topology": {"kind": "torus", "dims": [8, 8], "p": 1},
        "router": {"buffer_phits": 8, "delay": 4, "speedup": 1.0, "alloc_iters": 1, "credit_delay": 0,
                   "allocator": "islip", "crossbar": "flit", "vc_choice": "islip", "vcs": 16},  # iSLIP
        "links": {"latency": 2, "latency_injection": 2, "latency_ejection": 1},  # BookSim2's source: a cycle more
        "routing": {"algorithm": "dor"},
        "traffic": {"pattern": "uniform", "load": 0.1, "packet_phits": 1, "to_self": True},
        "sim": {"warmup": 3000, "measure": 10000},  # 3 x 1000; the window never shorter than fastnet's default
    }
    config.resolve(cfg)


@pytest.mark.parametrize("text,topology,links", [
    ("topology = dragonflynew; k = 3; n = 1; routing_function = min;",
     {"kind": "dragonfly", "p": 3, "a": 6, "h": 3, "arrangement": "consecutive"},
     {"latency": 1, "latency_local": 10, "latency_global": 100, "latency_injection": 2, "latency_ejection": 1}),
    ("topology = torus; k = 4; n = 3; routing_function = dim_order;",
     {"kind": "torus", "dims": [4, 4, 4], "p": 1}, {"latency": 2, "latency_injection": 2, "latency_ejection": 1}),
    ("topology = torus; k = 4; n = 1; use_noc_latency = 0; routing_function = dim_order;",
     {"kind": "torus", "dims": [4], "p": 1}, {"latency": 1, "latency_injection": 2, "latency_ejection": 1}),
    ("topology = mesh; k = 5; n = 2; routing_function = dim_order;",
     {"kind": "mesh", "dims": [5, 5], "p": 1}, {"latency": 1, "latency_injection": 2, "latency_ejection": 1}),
    ("topology = fattree; k = 4; n = 3; routing_function = nca;",
     {"kind": "fattree", "k": 4, "n": 3}, {"latency": 1, "latency_injection": 2, "latency_ejection": 1}),
    # the reference flattened butterfly: routers 1, 2, 3 apart on the 4x4 grid have channels of 2, 4, 6 cycles
    ("topology = flatfly; k = 4; n = 2; c = 4; x = 4; y = 4; xr = 2; yr = 2; routing_function = ran_min;",
     {"kind": "hyperx", "dims": [4, 4], "trunking": 1, "p": 4, "distance_latency": True},
     {"latency": 2, "latency_injection": 2, "latency_ejection": 1}),
    ("topology = flatfly; k = 3; n = 3; use_noc_latency = 0; routing_function = ugal;",
     {"kind": "hyperx", "dims": [3, 3, 3], "trunking": 1, "p": 1}, {"latency": 1, "latency_injection": 2,
                                                                   "latency_ejection": 1}),
])
def test_topologies_and_channel_latencies(text, topology, links):
    cfg = convert(text)
    assert cfg["topology"] == topology and cfg["links"] == links
    config.resolve(cfg)


@pytest.mark.parametrize("pattern,to_self", [("uniform", True), ("randperm", True), ("bitcomp", False)])
def test_patterns_that_may_send_to_the_source_itself(pattern, to_self):
    """BookSim2's uniform draws among all nodes, the source included, and its randperm keeps fixed points."""
    cfg = convert(f"topology = torus; k = 4; n = 2; routing_function = dim_order; traffic = {pattern};")
    assert cfg["traffic"]["to_self"] is to_self


ANYNET = "router 0 node 0 node 1 node 2 router 1\nrouter 1 node 3 node 4 node 5\n\n" \
         "router 2 node 6 node 7 node 8 router 1 router 0\n"  # BookSim2's src/examples/anynet/anynet_file


def test_anynet(tmp_path):
    (tmp_path / "net").write_text(ANYNET)
    cfg = convert("topology = anynet; network_file = net; routing_function = min; num_vcs = 4;", tmp_path)
    assert cfg["topology"] == {"kind": "graph", "edges": [[0, 1], [0, 2], [1, 2]], "p": 3}
    assert cfg["links"] == {"latency": 1, "latency_injection": 2, "latency_ejection": 1} and cfg["router"]["vcs"] == 4
    # BookSim2's one path per router pair, every VC on every hop
    assert cfg["routing"] == {"algorithm": "min", "min_path": "fixed", "vc_classes": "any"}
    assert describe(config.resolve(cfg))["nodes"] == 9
    (tmp_path / "net").write_text("router 0 router 1 5 node 0 3 node 1 3\nrouter 1 router 0 5 node 2 3 node 3 3\n")
    cfg = convert("topology = anynet; network_file = net; routing_function = min;", tmp_path)
    assert cfg["topology"]["edges"] == [[0, 1]] and cfg["links"] == {"latency": 5, "latency_injection": 4,
                                                                               "latency_ejection": 3}


@pytest.mark.parametrize("net,why", [
    ("router 0 node 0 node 1 router 1\nrouter 1 node 2\n", "same number of nodes"),
    ("router 0 node 1 router 1\nrouter 1 node 0\n", "renumber"),
    ("router 0 node 0 router 1 7\nrouter 1 node 1\n", "latencies differ"),  # 7 one way, 1 back
    ("router 0 node 0 node 1\nrouter 1 node 1\n", "connected to routers"),
    ("switch 0 node 0\n", "line 1"),
])
def test_anynet_errors(tmp_path, net, why):
    (tmp_path / "net").write_text(net)
    with pytest.raises(ConfigError, match=why) as e:
        convert("topology = anynet; network_file = net; routing_function = min;", tmp_path)
    assert e.value.field == "network_file"


@pytest.mark.parametrize("topology,function,routing", [
    ("dragonflynew", "min", {"algorithm": "min"}),
    ("dragonflynew", "ugal", {"algorithm": "ugal_l", "ugal_vcs": "booksim", "threshold": 30.0, "penalty": 2.0,
                              "ugal_hops": False, "intermediate": "router"}),  # q_min <= 2 q_val + 30, any node
    ("torus", "dim_order", {"algorithm": "dor"}),
    ("torus", "min_adapt", {"algorithm": "adaptive"}),
    ("torus", "valiant", {"algorithm": "val"}),
    ("mesh", "dim_order", {"algorithm": "dor"}),
    ("mesh", "dor", {"algorithm": "dor"}),
    ("mesh", "min_adapt", {"algorithm": "adaptive"}),
    ("mesh", "valiant", {"algorithm": "val"}),
    ("fattree", "nca", {"algorithm": "updown", "up_port": "random"}),
    ("fattree", "anca", {"algorithm": "updown", "up_port": "adaptive"}),
    ("flatfly", "ran_min", {"algorithm": "dor"}),  # flatfly_outport: the lowest differing dimension first
    ("flatfly", "ugal", {"algorithm": "ugal_l", "threshold": 2.0}),  # ugal_flatfly_onchip's threshold
    ("flatfly", "valiant", {"algorithm": "val", "intermediate": "any"}),  # valiant_flatfly: any router
    ("mesh", "xy_yx", {"algorithm": "xy_yx"}),  # XY or YX at random per packet, on VC halves
    ("mesh", "adaptive_xy_yx", {"algorithm": "adaptive_xy_yx"}),  # the order with fewer credits in use
    ("flatfly", "xyyx", {"algorithm": "xy_yx"}),
    ("flatfly", "adaptive_xyyx", {"algorithm": "adaptive_xy_yx"}),
    ("flatfly", "ugal_xyyx", {"algorithm": "ugal_l", "threshold": 2.0, "order": "xy_yx"}),  # ugal_flatfly's, XY/YX
])
def test_routing_functions(topology, function, routing):
    vcs = "num_vcs = 3;" if function == "ugal" else ""
    grid = "x = 4; y = 4;" if topology == "flatfly" else ""  # its routers on a 4x4 grid (BookSim2's default: 8x8)
    cfg = convert(f"topology = {topology}; k = 4; n = {1 if topology == 'dragonflynew' else 2}; "
                  f"routing_function = {function}; {vcs} {grid}")
    halves = {"vc_classes": "halves"} if topology in ("torus", "mesh", "flatfly") and vcs else {}  # 3 VCs: halves
    assert cfg["routing"] == {**routing, **halves}
    config.resolve(cfg)


@pytest.mark.parametrize("topology,function,vcs,want", [
    ("torus", "dim_order", 3, [(0, 2), (1, 2)]),  # dateline halves sharing VC 1: every VC used
    ("torus", "dim_order", 4, [(0, 2), (2, 2)]),
    ("mesh", "xy_yx", 5, [(0, 3), (2, 3)]),  # XY on VCs 0-2, YX on 2-4
    ("mesh", "dim_order", 3, [(0, 3)]),  # one class: every VC
])
def test_vcs_split_in_booksim2s_halves(topology, function, vcs, want):
    """BookSim2 splits the VCs of a two-class routing into [0, V - 1 - V/2] and [V/2, V - 1] (dim_order_torus,
    xy_yx_mesh, the flatfly's phases): with an odd V the halves share a VC. fastnet's own classes are disjoint
    (deadlock-free), which ran 3 VCs as 2: a 4x4x4 torus at uniform 0.45 took 35.2 cycles against 26.6."""
    from fastnet.build.network import LOCAL
    from fastnet.sim import prepare
    cfg = convert(f"topology = {topology}; k = 4; n = 2; routing_function = {function}; num_vcs = {vcs};")
    ranges = prepare(config.resolve(cfg)).routes.vcr[LOCAL]
    assert [tuple(r) for r in ranges[:len(want)].tolist()] == want
    assert cfg["routing"].get("vc_classes") == ("halves" if vcs % 2 else None)  # an even count: the same split
    with pytest.raises(ConfigError, match="routing.vc_classes"):
        prepare(config.resolve({"topology": {"kind": "dragonfly"}, "routing": {"vc_classes": "halves"}}))
    cfg["routing"]["vc_classes"] = "hop"
    per = vcs // len(want)
    assert [tuple(r) for r in prepare(config.resolve(cfg)).routes.vcr[LOCAL][:len(want)].tolist()] == [
        (k * per, per) for k in range(len(want))]


def test_router_keys():
    cfg = convert("routing_function = dim_order; num_vcs = 6; vc_buf_size = 32; routing_delay = 2; "
                  "vc_alloc_delay = 3; sw_alloc_delay = 1; st_prepare_delay = 1; st_final_delay = 2; "
                  "credit_delay = 5; internal_speedup = 1.5; alloc_iters = 2; vc_allocator = separable_input_first; "
                  "sw_allocator = islip;")
    # 9 stage cycles at 1.5 pipeline steps a cycle: 6 cycles; alloc_iters has no effect on BookSim2's IQRouter
    assert cfg["router"] == {"buffer_phits": 32, "delay": 6, "speedup": 1.5, "alloc_iters": 1, "credit_delay": 5,
                             "allocator": "islip", "crossbar": "flit", "vc_choice": "separable_input_first", "vcs": 6}
    # iterations come from the allocator's parameter alone (allocator.cpp NewAllocator)
    cfg = convert("routing_function = dim_order; sw_allocator = islip(3); vc_allocator = separable_input_first("
                  "round_robin); alloc_iters = 2;")
    assert (cfg["router"]["allocator"], cfg["router"]["alloc_iters"], cfg["router"]["vc_choice"]) == (
        "islip", 3, "separable_input_first")
    for bad in ("vc_allocator = islip(2)", "sw_allocator = separable_input_first(matrix)", "sw_allocator = islip(x)"):
        with pytest.raises(ConfigError, match="does not map") as e:
            convert(f"routing_function = dim_order; {bad};")
        assert e.value.field == bad.split(" ")[0]
    cfg = convert("routing_function = dim_order; sw_allocator = separable_input_first;")
    assert cfg["router"]["allocator"] == "separable_input_first"
    with pytest.raises(ConfigError, match="separable_input_first and islip") as e:
        convert("routing_function = dim_order; sw_allocator = wavefront;")
    assert e.value.field == "sw_allocator"


def test_dragonfly_vcs():
    """dragonflynew's routings fix the VC by phase: fastnet's auto layout; extra VCs only add injection VCs."""
    base = "topology = dragonflynew; k = 2; n = 1; routing_function = min;"
    assert "vcs" not in convert(base + "num_vcs = 2;")["router"]
    router = convert(base + "num_vcs = 4;")["router"]
    assert "vcs" not in router and router["vcs_injection"] == 4
    assert "vcs_injection" not in convert(base.replace("min", "ugal") + "num_vcs = 3;")["router"]


@pytest.mark.parametrize("text,traffic", [
    ("traffic = uniform; injection_rate = 0.3; packet_size = 1;", ("uniform", 0.3, 1)),
    ("traffic = bitcomp; injection_rate = 0.05; packet_size = 4;", ("bitcomp", 0.2, 4)),  # packets x size
    ("traffic = transpose; injection_rate = 0.4; packet_size = 4; injection_rate_uses_flits = 1;",
     ("transpose", 0.4, 4)),
    ("traffic = tornado; injection_rate = {0.25};", ("tornado", 0.25, 1)),
    ("traffic = randperm; perm_seed = 3;", ("permutation", 0.1, 1)),
    ("traffic = randperm(7);", ("permutation", 0.1, 1)),
    ("traffic = shuffle;", ("shuffle", 0.1, 1)),
    ("traffic = bitrev;", ("bitrev", 0.1, 1)),
    ("traffic = diagonal;", ("diagonal", 0.1, 1)),
    ("traffic = asymmetric;", ("asymmetric", 0.1, 1)),
    ("traffic = taper64;", ("taper64", 0.1, 1)),
])
def test_traffic(text, traffic):
    cfg = convert("routing_function = dim_order;" + text)
    assert (cfg["traffic"]["pattern"], cfg["traffic"]["load"], cfg["traffic"]["packet_phits"]) == \
        pytest.approx(traffic)


@pytest.mark.parametrize("text, fields", [
    # digit patterns: (k, n, xr) from their parameters, else the keys; BookSim2 reads k * xr digits of n
    ("traffic = tornado;", {"pattern": "tornado", "digits": [8, 2]}),
    # parameters as BookSim2's tokenize_str reads them: a list needs braces, else the text is one parameter whose
    # leading number counts (atoi), the others coming from the keys (here k = 8, n = 2, xr = 1)
    ("traffic = neighbor({4,3});", {"pattern": "neighbor", "digits": [4, 3]}),
    ("traffic = badperm_yarc({4,3,2});", {"pattern": "badperm_yarc", "digits": [8, 3]}),
    ("traffic = badperm_yarc(4,3,2);", {"pattern": "badperm_yarc", "digits": [4, 2]}),  # k = 4 alone
    ("traffic = background({{3,5}});", {"pattern": "background", "exclude": [3, 5]}),
    ("traffic = background({3,5});", {"pattern": "background", "exclude": [3]}),  # excludes 3, then a 2nd param
    # every packet to a hotspot, as likely as its rate (the last rate repeats)
    ("traffic = hotspot({{3,5,9},{2,1}});", {"pattern": "hotspot", "hotspot_fraction": 1.0,
                                             "hotspot_nodes": [3, 3, 5, 9]}),
    ("traffic = hotspot({0,9},{1});", {"pattern": "hotspot", "hotspot_fraction": 1.0,  # node 0 at rate 9
                                       "hotspot_nodes": [0] * 9}),
    ("traffic = hotspot({4});", {"pattern": "hotspot", "hotspot_fraction": 1.0, "hotspot_nodes": [4]}),
])
def test_patterns_with_parameters(text, fields):
    cfg = convert("routing_function = dim_order;" + text)
    assert {k: cfg["traffic"][k] for k in fields} == fields
    config.resolve(cfg)


def test_hotspot_without_node_draws_one():
    cfg = convert("routing_function = dim_order; traffic = hotspot; seed = 5;")
    nodes = cfg["traffic"]["hotspot_nodes"]
    assert len(nodes) == 1 and 0 <= nodes[0] < 64
    assert cfg == convert("routing_function = dim_order; traffic = hotspot; seed = 5;")


def test_chip_numbered_topologies_set_numbering():
    for text in (FLATFLY + "routing_function = ran_min; traffic = tornado;",
                 "topology = cmesh; k = 4; n = 2; c = 4; xr = 2; yr = 2; x = 4; y = 4; "
                 "routing_function = dor_no_express; traffic = transpose;"):
        cfg = convert(text)
        assert cfg["traffic"]["numbering"] == "chip"
        config.resolve(cfg)
    assert "numbering" not in convert("routing_function = dim_order;")["traffic"]


def test_packet_size_distributions():
    """BookSim2 reads packet_size and packet_size_rate per class; one class's entry may list several sizes."""
    cfg = convert("routing_function = dim_order; packet_size = {{1,4}}; packet_size_rate = {{3,1}};")
    t = cfg["traffic"]
    assert (t["packet_phits"], t["packet_sizes"], t["packet_size_rates"]) == (4, [1, 4], [3, 1])
    assert t["load"] == pytest.approx(0.1 * (3 * 1 + 1 * 4) / 4)  # packets x mean size
    t = convert("routing_function = dim_order; packet_size = {{2,4,6}}; packet_size_rate = {2};")["traffic"]
    assert t["packet_size_rates"] == [2, 2, 2]  # the last rate repeats
    t = convert("routing_function = dim_order; packet_size = {1,4};")["traffic"]  # class 0's size (classes = 1)
    assert t["packet_phits"] == 1 and "packet_sizes" not in t
    config.resolve(cfg)


def test_injection_process():
    assert "injection" not in convert("routing_function = dim_order;")["traffic"]
    t = convert("routing_function = dim_order; injection_process = on_off; burst_beta = 0.2;")["traffic"]
    assert (t["injection"], t["burst_alpha"], t["burst_beta"], t["burst_r1"]) == ("on_off", 0.5, 0.2, -1.0)
    t = convert("routing_function = dim_order; injection_process = on_off({0.1,-1,0.5});")["traffic"]
    assert (t["burst_alpha"], t["burst_beta"], t["burst_r1"]) == (0.1, -1.0, 0.5)
    t = convert("routing_function = dim_order; injection_process = on_off(0.1,-1,0.5);")["traffic"]
    assert (t["burst_alpha"], t["burst_beta"], t["burst_r1"]) == (0.1, 0.5, -1.0)  # alpha alone, as atof reads it
    for bad in ("poisson", "on_off({0.1,0.1,-1,{0,1}})", "on_off(x)"):
        with pytest.raises(ConfigError) as e:
            convert(f"routing_function = dim_order; injection_process = {bad};")
        assert e.value.field == "injection_process"


def test_bad_dragon_is_group_adversarial():
    cfg = convert("topology = dragonflynew; k = 2; n = 1; routing_function = min; traffic = bad_dragon;")
    assert cfg["traffic"]["pattern"] == "group_adversarial"
    with pytest.raises(ConfigError, match="dragonflynew") as e:
        convert("routing_function = dim_order; traffic = bad_dragon;")
    assert e.value.field == "traffic"


def test_anynet_export_round_trip(tmp_path):
    """`fastnet info --export x.anynet` writes a network file that BookSim2's anynet and fastnet read back as the
    same graph: the same router links, their latency in both directions (BookSim2's are per direction, 1 where a
    line does not give it), and nodes."""
    toml = write(tmp_path, '[topology]\nkind = "slimfly"\nq = 4\np = 4\n[links]\nlatency = 3\nlatency_injection = 1\n',
                 "sf.toml")
    result = invoke("info", toml, "--export", str(tmp_path / "sf.anynet"))
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "sf.anynet").read_text().splitlines()
    assert lines[0].startswith("router 0 node 0 node 1 node 2 node 3 router 1 3 ")
    assert lines[1].startswith("router 1 node 4 node 5 node 6 node 7 router 0 3 ")  # the way back
    cfg = convert("topology = anynet; network_file = sf.anynet; routing_function = min;", tmp_path)
    from fastnet.topology import build_network
    ours = build_network(config.resolve(config.read_toml(toml)))
    back = build_network(config.resolve(cfg))
    assert back.n_nodes == ours.n_nodes == 128 and cfg["links"]["latency"] == 3
    edges = {tuple(sorted(e)) for e in zip(ours.port_router.tolist(), ours.port_peer_router.tolist())
             if -1 not in e and e[0] != e[1]}
    assert {tuple(e) for e in cfg["topology"]["edges"]} == edges


def test_anynet_export_refuses_node_latency(tmp_path):
    toml = write(tmp_path, '[topology]\nkind = "slimfly"\nq = 5\n[links]\nlatency_injection = 3\n', "sf.toml")
    result = invoke("info", toml, "--export", str(tmp_path / "sf.anynet"))
    assert result.exit_code == 2 and "latency_injection" in result.output


def test_crossbar_follows_hold_switch_for_packet():
    """BookSim2 moves flits through its crossbar unless a packet holds the switch to its tail."""
    assert convert("routing_function = dim_order;")["router"]["crossbar"] == "flit"
    held = convert("routing_function = dim_order; hold_switch_for_packet = 1;")
    assert held["router"]["crossbar"] == "packet"


def test_measurement():
    cfg = convert("routing_function = dim_order; warmup_periods = 2; sample_period = 20000; seed = 7;")
    assert cfg["sim"] == {"warmup": 40000, "measure": 20000, "seed": 7}
    assert convert("routing_function = dim_order; sample_period = 100;")["sim"] == {"warmup": 300,
                                                                                      "measure": 10000}
    # sim_type = throughput: BookSim2 measures accepted traffic and does not drain the measured packets
    assert convert("routing_function = dim_order; sample_period = 100; sim_type = throughput;")["sim"] == {
        "warmup": 300, "measure": 10000, "drain": 0}
    # without a drain measured packets are always in flight at the end: unstable is told by the sources' queues
    import fastnet

    torus = {"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"warmup": 200, "measure": 2000, "drain": 0}}
    assert [fastnet.run({**torus, "traffic": {"load": load}}).unstable.item() for load in (0.1, 1.0)] == [0, 1]
    # past saturation the backlog grows over the window: a long drain may still deliver every measured packet, and
    # the run is unstable all the same (it was 0: only measured packets left undelivered counted)
    drained = {**torus, "sim": {"warmup": 200, "measure": 2000, "drain": 200000}}
    past = fastnet.run({**drained, "traffic": {"load": 1.0}})
    assert past.unstable.item() == 1 and past.accepted_phits_per_node_cycle < 0.95
    assert fastnet.run({**drained, "traffic": {"load": 0.3}}).unstable.item() == 0
    assert past.cycles < 200 + 2000 + 200000  # (the drain delivered the window's packets)


def test_keys_without_effect_are_accepted():
    cfg = convert("routing_function = dim_order; watch_out = -; sim_count = 1; priority = none; "
                  "input_speedup = 1; output_speedup = 1; max_samples = 10; latency_thres = 500.0; "
                  "print_csv_results = 1; stats_out = stats.m; hold_switch_for_packet = 0; vct = 1; "
                  "wait_for_tail_credit = 0; sim_type = latency; router = iq;")
    assert cfg == convert("routing_function = dim_order;")


# ---------------------------------------------------------------- errors through the CLI

FLATFLY = "topology = flatfly; k = 4; n = 2; c = 4; x = 4; y = 4; xr = 2; yr = 2; "


@pytest.mark.parametrize("text,key", [
    (FLATFLY + "routing_function = ugal_pni;", "routing_function"),
    (FLATFLY + "routing_function = ugal_xyyx; num_vcs = 6;", "num_vcs"),  # order halves, phase halves: 4 x n
    ("topology = flatfly; k = 4; n = 2; c = 16; x = 4; y = 4; xr = 4; yr = 4; routing_function = ran_min;", "xr"),
    ("topology = flatfly; k = 4; n = 3; c = 1; x = 8; y = 8; routing_function = ran_min;", "use_noc_latency"),
    ("topology = flatfly; k = 4; n = 2; c = 4; x = 4; y = 4; routing_function = ran_min;", "c"),  # xr*yr = 1
    ("topology = cmesh; routing_function = dor_no_express;", "c"),  # BookSim2 asserts c = 4 = xr * yr
    ("topology = cmesh; k = 5; c = 4; xr = 2; yr = 2; routing_function = dor_no_express;", "k"),
    ("topology = cmesh; k = 4; c = 4; xr = 2; yr = 2; routing_function = xy_yx;", "routing_function"),
    ("topology = fly; k = 4; n = 2; routing_function = dest_tag;", "n"),  # stages: not one router per node
    ("topology = qtree; routing_function = nca;", "topology"),
    ("topology = hypercube; routing_function = min;", "topology"),
    ("routing_function = romm;", "routing_function"),
    ("topology = dragonflynew; k = 4; n = 1; routing_function = valiant;", "routing_function"),
    ("traffic = uniform;", "routing_function"),  # BookSim2's default routing_function is none
    ("routing_function = dim_order; traffic = zipf;", "traffic"),
    ("routing_function = dim_order; traffic = hotspot({{1,2},{0}});", "traffic"),
    ("routing_function = dim_order; traffic = bad_dragon;", "traffic"),
    ("routing_function = dim_order; seed = time;", "seed"),
    ("routing_function = dim_order; vc_allocator = wavefront;", "vc_allocator"),
    ("routing_function = dim_order; sw_allocator = max_size;", "sw_allocator"),
    ("routing_function = dim_order; priority = age;", "priority"),
    ("routing_function = dim_order; sim_count = 2;", "sim_count"),
    ("routing_function = dim_order; input_speedup = 0;", "input_speedup"),
    ("routing_function = dim_order; wait_for_tail_credit = 2;", "wait_for_tail_credit"),
    ("routing_function = dim_order; output_speedup = 2;", "output_speedup"),
    ("routing_function = dim_order; internal_speedup = 0;", "internal_speedup"),  # was a ZeroDivisionError
    ("routing_function = dim_order; internal_speedup = 0.5;", "internal_speedup"),  # was named router.speedup
    ("routing_function = dim_order; internal_speedup = 2.0; vc_buf_size = 1; packet_size = 4;", "vc_buf_size"),
    ("routing_function = dim_order; hold_switch_for_packet = 1; internal_speedup = 2.0;", "hold_switch_for_packet"),
    ("routing_function = dim_order; hold_switch_for_packet = 2;", "hold_switch_for_packet"),
    ("routing_function = dim_order; sim_type = batch;", "sim_type"),
    ("routing_function = dim_order; colour = red;", "colour"),
    ("routing_function = dim_order; injection_rate = 0.5; packet_size = 4;", "injection_rate"),
    ("routing_function = dim_order; injection_rate = {0.1,0.2};", "injection_rate"),
    ("routing_function = dim_order; packet_size = {{1,0}};", "packet_size"),
    ("routing_function = dim_order; warmup_periods = 0;", "warmup_periods"),
    # BookSim2's 8-flit default buffers: wormhole, mapped with the flit crossbar only
    ("routing_function = dim_order; packet_size = 10; injection_rate = 0.01; hold_switch_for_packet = 1;",
     "vc_buf_size"),
    ("routing_function = dim_order; k = four;", "k"),
    ("routing_function = dim_order; c = 4;", "c"),
    ("topology = dragonflynew; k = 4; n = 2; routing_function = min;", "n"),
    ("topology = dragonflynew; k = 4; n = 1; routing_function = ugal; num_vcs = 2;", "num_vcs"),
    ("topology = dragonflynew; k = 4; n = 1; routing_function = min; num_vcs = 1;", "num_vcs"),
    ("topology = anynet; routing_function = min;", "network_file"),
    ("topology = torus; k = 4;\nrouting_function dim_order;", "config"),
])
@pytest.mark.parametrize("command", ["run", "convert"])
def test_unmappable_is_one_line_exit_2(tmp_path, text, key, command):
    result = invoke(command, write(tmp_path, text))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {key}: "), result.output
    assert "Traceback" not in result.output
    if key == "config":
        assert "line 2: expected `key = value;`" in result.output


def test_convert_refuses_toml(tmp_path):
    result = invoke("convert", write(tmp_path, '[topology]\nkind = "torus"\n', "run.toml"))
    assert result.exit_code == 2 and "not a BookSim2 config" in result.output


# ---------------------------------------------------------------- the CLI

def test_convert_writes_toml_that_resolves_the_same(tmp_path):
    cfg = write(tmp_path, TORUS_README)
    out = tmp_path / "run.toml"
    result = invoke("convert", cfg, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert config.load_config(out) == config.resolve(booksim.read_file(cfg))
    printed = invoke("convert", cfg)
    assert printed.exit_code == 0 and printed.output == out.read_text()


def test_info_and_overrides(tmp_path):
    cfg = write(tmp_path, TORUS_README)
    facts = json.loads(invoke("info", cfg, "--json").output)
    assert facts["routers"] == 64 and facts["nodes"] == 64
    facts = json.loads(invoke("info", cfg, "--set", "topology.dims=[4,4]", "--json").output)  # fastnet field
    assert facts["routers"] == 16
    facts = json.loads(invoke("info", cfg, "--set", "k=4", "--set", "n=3", "--json").output)  # BookSim2 keys
    assert facts["routers"] == 64 and facts["diameter"] == 6


def test_run_end_to_end(tmp_path):
    """A short BookSim2 config run through `fastnet run --json`, with a fastnet override on top."""
    cfg = write(tmp_path, "topology = mesh; k = 4; n = 2; routing_function = dim_order; num_vcs = 2;\n"
                          "traffic = uniform; injection_rate = 0.1; warmup_periods = 2; sample_period = 100;\n")
    result = invoke("run", cfg, "--json", "--set", "sim.measure=500", "--set", "sim.drain=500")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["packets_delivered"] > 0 and summary["cycles"] <= 200 + 500 + 500
    assert summary["offered_phits_per_node_cycle"] == pytest.approx(0.1, rel=0.3)


# ---------------------------------------------------------------- shared/reference/booksim

def needs_reference() -> None:
    if not REFERENCE.exists():
        pytest.skip("shared/reference is not next to this checkout")


def test_dragonfly_reference_is_the_embedded_default():
    """BookSim2's dragonfly speed reference converts to `fastnet run`'s embedded default but for the router keys
    that give BookSim2's router mechanics, where the embedded default keeps fastnet's own router."""
    needs_reference()
    theirs = config.resolve(booksim.read_file(REFERENCE / "dragonfly_k4_uniform_min_0.3.cfg"))
    ours = config.resolve(config.read_toml(config.DEFAULT_CONFIG))
    mechanics = ("delay", "crossbar", "vc_choice")
    assert [theirs["router"].pop(k) for k in mechanics] == [2, "flit", "separable_input_first"]  # 4 stages at speedup 2
    assert [ours["router"].pop(k) for k in mechanics] == [3, "packet", "roomiest"]
    # BookSim2's uniform may pick the source itself, and its sources send a cycle late; fastnet's own do neither
    assert theirs["traffic"].pop("to_self") and not ours["traffic"].pop("to_self")
    assert [theirs["links"].pop(k) for k in ("latency_injection", "latency_ejection")] == [2, 1]
    assert [ours["links"].pop(k) for k in ("latency_injection", "latency_ejection")] == [1, 1]
    assert theirs == ours


def torus_script():
    sys.path.insert(0, str(ROOT / "docs" / "validation"))
    try:
        return importlib.import_module("booksim_torus")
    finally:
        sys.path.remove(str(ROOT / "docs" / "validation"))


def test_torus_readme_config_is_the_validation_config(tmp_path):
    """The README's torus config at load 0.2 is docs/validation/booksim_torus.py's config for that point (but
    the drain, a bound BookSim2 does not have), and `fastnet run` on it gives the script's results."""
    needs_reference()
    script = config.resolve(torus_script().config("uniform", "dor", 0.2))
    ours = config.resolve(booksim.read_file(write(tmp_path, TORUS_README)))
    assert ours["sim"].pop("drain") >= script["sim"].pop("drain")
    assert ours == script
    result = invoke("run", write(tmp_path, TORUS_README), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    from fastnet.results import summary as summarize
    expected = summarize(fastnet.run(torus_script().config("uniform", "dor", 0.2)))
    summary.pop("wall_seconds"), expected.pop("wall_seconds")
    assert summary == expected  # cycles too: the drain ends when the last measured packet arrives


def test_reference_configs_convert_or_refuse():
    needs_reference()
    for path in sorted(REFERENCE.glob("*.cfg")):
        config.resolve(booksim.read_file(path, ["injection_rate=0.3"]))
        if path.name.startswith("c_flatfly"):  # and under BookSim2's adversarial patterns
            for pattern in ("tornado", "badperm_yarc"):
                config.resolve(booksim.read_file(path, ["injection_rate=0.3", f"traffic={pattern}"]))


EXAMPLES = REFERENCE / "src_examples"
EXAMPLE_NAMES = ["anynet/anynet_config", "cmeshconfig", "dragonflyconfig", "fattree_config", "flatflyconfig",
                 "mesh88_lat", "singleconfig", "torus88"]


def test_booksim2_example_configs_convert():
    """BookSim2's own src/examples: every one converts to a config fastnet resolves."""
    needs_reference()
    for name in EXAMPLE_NAMES:
        config.resolve(booksim.read_file(EXAMPLES / name))


@pytest.mark.parametrize("name, hops, measure, spread", [
    ("cmeshconfig", 4.0, 3000, 0.1),  # bitcomp on the chip: router (x, y) -> (3 - x, 3 - y), |3 - 2x| + |3 - 2y|
    # hops, mean 4
    ("singleconfig", 0.0, 3000, 0.1),  # one router: every packet crosses it without a network hop
    ("mesh88_lat", 5.25, 8000, 0.2),  # transpose on the 8x8 mesh: 2|x - y| hops, mean 2 * 168 / 64 (about 2,500
    # packets of 0 to 14 hops: standard error 0.08); 20-flit packets in 8-flit VCs (wormhole),
    # wait_for_tail_credit = 1, input_speedup = 2, 0.005 packets/node/cycle
])
def test_new_example_topologies_run(name, hops, measure, spread):
    """cmeshconfig, singleconfig and mesh88_lat run as they are, in a short window (a fastnet override on top)."""
    needs_reference()
    cfg = booksim.read_file(EXAMPLES / name)
    cfg["sim"].update(warmup=300, measure=measure, drain=2000)
    ds = fastnet.run(cfg)
    assert int(ds.packets_delivered) > 1000
    assert float(ds.hops_mean) == pytest.approx(hops, abs=spread)


def test_booksim2_dragonfly_ugal_routes_minimally_on_an_idle_network():
    """BookSim2's ugal_dragonflynew stays minimal while q_min <= 2 q_nonmin + 30: at zero load always. Imported
    without that bias, fastnet's ugal_l sent a packet in three or so the long way at load 0.02 (2.55 links a
    packet against 2.29, 134 cycles against BookSim2's 122 on dragonflyconfig with k = 2)."""
    needs_reference()
    hops = {}
    for routing in ("min", "ugal"):
        cfg = booksim.read_file(EXAMPLES / "dragonflyconfig", ["k=2", "num_vcs=3", "injection_rate=0.02",
                                                                f"routing_function={routing}"])
        cfg["sim"].update(warmup=300, measure=3000, drain=2000)
        hops[routing] = float(fastnet.run(cfg).hops_mean)
    assert hops["ugal"] == pytest.approx(hops["min"], rel=0.02)


def test_booksim2_dragonfly_ugal_weighs_queues_as_booksim2_does():
    """bad_dragon at 0.02 on the matrix's 72-node dragonfly under ugal (3 VCs): BookSim2 gives 144.9 cycles (this
    machine, seed 0). Weighing each queue by its path's hops (q_min x 3 against q_val x 5) instead of BookSim2's
    q_min <= 2 q_val + 30 sent more packets the long way: 154.1 cycles."""
    cfg = booksim.read_file(Path(__file__).parents[1] / "docs/validation/matrix/dragonfly_k2.cfg",
                            ["routing_function=ugal", "num_vcs=3", "traffic=bad_dragon", "injection_rate=0.02"])
    assert float(fastnet.run(cfg).packet_latency_mean) == pytest.approx(144.9, rel=0.02)


@pytest.mark.parametrize("k, xr", [(4, 2), (2, 2), (8, 1), (4, 4)])
def test_flatfly_bitcomp_pairs_the_same_nodes_in_both_numberings(k, xr):
    """BookSim2 numbers a flatfly's nodes row by row on the chip's grid of k*xr x k*xr nodes; its routing turns a
    node into (router, node in router) with flatfly_transformation (src/networks/flatfly_onchip.cpp, transcribed
    here). bitcomp commutes with that transformation, so `traffic = bitcomp` pairs the same nodes in fastnet's
    router-by-router numbering; transpose does not: the importer sets traffic.numbering = "chip" for both."""
    xcount, c = k, xr * xr
    N = (k * xr) ** 2

    def transformation(dest: int) -> int:
        horizontal = (dest % (xcount * xr)) // xr
        horizontal_rem = (dest % (xcount * xr)) % xr
        vertical = (dest // (xcount * xr)) // xr
        vertical_rem = (dest // (xcount * xr)) % xr
        return (vertical * xcount + horizontal) * c + xr * vertical_rem + horizontal_rem

    T = [transformation(b) for b in range(N)]
    assert sorted(T) == list(range(N))
    assert all(T[(N - 1) ^ b] == (N - 1) ^ T[b] for b in range(N))  # bitcomp: dest = ~src
    half = int(np.log2(N)) // 2
    transpose = [((b >> half) | (b << half)) & (N - 1) for b in range(N)]
    if xr > 1:
        assert any(T[transpose[b]] != transpose[T[b]] for b in range(N))
    cfg = convert(f"topology = flatfly; k = {k}; n = 2; c = {c}; x = {k}; y = {k}; xr = {xr}; yr = {xr}; "
                  "routing_function = ran_min; traffic = bitcomp; use_noc_latency = 0;")
    assert cfg["traffic"]["pattern"] == "bitcomp"
    assert cfg["traffic"].get("numbering") == ("chip" if c > 1 else None)


def test_anynet_vcs_deadlock_as_booksim2s_do_and_fastnets_distance_classes_do_not():
    """BookSim2's min_anynet lets every hop take every VC; on the validation jellyfish it deadlocks at 0.261
    ("Possible network deadlock", docs/validation.md). The imported config does the same and the watchdog reports
    it; fastnet's own VC classes (a class per hop) carry the same load."""
    from fastnet.booksim import read_file
    from fastnet.errors import DeadlockError

    matrix = Path(__file__).resolve().parents[1] / "docs" / "validation" / "matrix"
    cfg = read_file(matrix / "jellyfish_32.cfg", ["traffic=uniform", "injection_rate=0.27"])
    with pytest.raises(DeadlockError):
        fastnet.run(cfg)
    cfg["routing"]["vc_classes"] = "hop"
    assert not fastnet.run(cfg).unstable


def test_vc_classes_any_only_replaces_distance_classes():
    from fastnet.build.network import LOCAL
    from fastnet.sim import prepare

    with pytest.raises(ConfigError, match="routing.vc_classes"):
        prepare({"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "routing": {"vc_classes": "any"}})
    s = prepare({"topology": {"kind": "slimfly", "q": 5}, "routing": {"vc_classes": "any"}, "router": {"vcs": 4}})
    assert s.routes.vcr[LOCAL, 0].tolist() == [0, 4] and s.routes.vcr.shape[1] == 1  # every VC on every hop
