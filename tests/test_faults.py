"""Failures (fastnet/faults, docs/faults.md): what a failing link or router does to packets and credits, routing
around failures, the [faults] section's checks, and the results."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import fastnet
from fastnet import sim as S
from fastnet.cli import app
from fastnet.errors import ConfigError
from fastnet.faults.kernel import on_link
from fastnet.kernels.audit import AU_CREDIT_ERRORS, AU_DELIVERING, AU_DUPLICATES, AU_IN_VCS, AU_QUEUED, audit
from fastnet.kernels.state import (
    C_CREATED, C_DELIVERED, C_DROP_LINK, C_DROP_ROUTER, C_DROP_UNROUTABLE, C_DROPPED, C_INJECTED, VS_NODE_PKT,
)

TORUS = {"topology": {"kind": "torus", "dims": [8, 8]}, "routing": {"algorithm": "adaptive"},
         "traffic": {"load": 0.7}, "sim": {"warmup": 3000, "measure": 3000, "drain": 3000}}
SMALL_DF = {"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "routing": {"algorithm": "ugal_l"},
            "sim": {"warmup": 1000, "measure": 2000, "drain": 3000}}


def with_faults(base, **faults):
    return {**base, "faults": faults}


FLIT_SMALL = {"crossbar": "flit", "buffer_phits": 6}  # a 4-phit packet often finds room for part of it only: it
# goes on credit by credit, from its node too, and a cut leaves VCs holding parts of packets (saturated past 0.6
# on the adaptive torus: load 0.6)


@pytest.mark.parametrize("router", [{}, {"crossbar": "flit"}, FLIT_SMALL], ids=["packet", "flit", "flit-small"])
def test_link_failing_mid_run_drops_what_was_on_it_and_the_run_goes_on(monkeypatch, router):
    """The judged case: on an 8x8 torus under adaptive routing, link 0-1 fails at cycle 5,000. Every cycle,
    injected = delivered + dropped + in flight (the audit's count of packets in VCs and being delivered); the
    drop count equals what was on the link; the run goes on and delivers the rest. With the flit crossbar and
    4-phit packets, packets stream through several routers at once, and the streams over the link are cut."""
    monkeypatch.setattr(S, "CHUNK", 1)  # a kernel call per cycle: the audit runs after every cycle
    monkeypatch.setattr(S, "FIRST_CHUNK", 1)
    load = 0.6 if router == FLIT_SMALL else 0.7
    base = {**TORUS, "router": router, "traffic": {"load": load, "packet_phits": 4}} if router else TORUS
    s = S.prepare(with_faults(base, events=[[5000, "fail", 0, 1]]))
    ports = s.faults.ports_of(0, 1)
    assert len(ports) == 2
    seen = {}
    apply = s.faults.apply

    def counting_apply(s_, t):
        seen["on_link"] = on_link(s.net.topo, s.params, s.state, ports, t)
        seen["delivered_before"] = int(s.state.ctr[C_DELIVERED])
        apply(s_, t)
        seen["dropped"] = int(s.state.ctr[C_DROPPED])

    monkeypatch.setattr(s.faults, "apply", counting_apply)
    cycles = []

    def check(t, end):
        a = audit(s.params, s.state)
        ctr = s.state.ctr
        in_flight = int(a[AU_IN_VCS] + a[AU_DELIVERING])
        assert ctr[C_INJECTED] == ctr[C_DELIVERED] + ctr[C_DROPPED] + in_flight, t
        assert ctr[C_CREATED] == ctr[C_INJECTED] + a[AU_QUEUED], t
        assert a[AU_DUPLICATES] == 0 and a[AU_CREDIT_ERRORS] == 0
        seen["node_sends"] = seen.get("node_sends", 0) + int((s.state.vs[:, VS_NODE_PKT] >= 0).sum())
        cycles.append(t)

    S.simulate(s, progress=check)
    assert seen["on_link"] > 0  # at this load packets are on the link (else this test would prove nothing)
    assert (seen["node_sends"] > 0) == (router == FLIT_SMALL)  # nodes sending packets in credit by credit
    # dropped at once, or (a packet whose head had been forwarded) where it would have been delivered
    assert seen["dropped"] <= seen["on_link"] == int(s.state.ctr[C_DROP_LINK])
    assert int(s.state.ctr[C_DROPPED]) == seen["on_link"]  # no later drop: the ring detour reaches everyone
    assert int(s.state.ctr[C_DELIVERED]) > seen["delivered_before"] + 3000  # it went on, and drained
    assert s.cycle > 6000 and set(cycles) == set(range(1, s.cycle + 1))  # after every cycle, the last included


def test_a_link_down_from_the_start_is_routed_around():
    """Dimension order takes the other way round the ring: nothing is dropped, paths get longer, and the link's
    two ports were down the whole run."""
    cfg = {**TORUS, "routing": {"algorithm": "dor"}, "traffic": {"load": 0.3}}
    healthy = fastnet.run(cfg)
    ds = fastnet.run(with_faults(cfg, links=[[0, 1]]))
    assert int(ds.packets_dropped) == 0 and int(ds.unstable) == 0
    assert float(ds.hops_mean) > float(healthy.hops_mean)
    down = np.flatnonzero(ds.port_failed_cycles.values)
    assert len(down) == 2 and (ds.port_failed_cycles.values[down] == int(ds.cycles)).all()
    assert ds.packets_dropped_by_cause.sel(drop_cause="link").item() == 0


def test_recovered_link_counts_its_time_down():
    s = S.prepare(with_faults(TORUS, events=[[1000, "fail", 9, 10], [1500, "recover", 9, 10]]))
    S.simulate(s)
    failed = s.faults.port_failed_cycles(s.cycle)
    assert sorted(failed[failed > 0].tolist()) == [500, 500]
    assert s.net.topo.port[s.faults.ports_of(9, 10), 1].tolist() == [10, 9]  # peers restored


def test_dragonfly_global_failures_past_saturation():
    """UGAL-L with failed global links stays deadlock-free past saturation and drops nothing (every group pair
    keeps a Valiant path); accepted throughput falls as more links fail."""
    accepted = []
    for fraction in (0.0, 0.15, 0.3):
        ds = fastnet.run(with_faults({**SMALL_DF, "traffic": {"load": 0.9}}, fraction=fraction,
                                     link_class="global", seed=3))
        assert int(ds.packets_dropped) == 0
        accepted.append(float(ds.accepted_phits_per_node_cycle))
    assert accepted[0] > accepted[1] > accepted[2] > 0.2


def test_dragonfly_link_failing_under_minimal_packets_detours_them():
    """A global link fails mid-run: packets routed to it before their global hop turn into Valiant packets."""
    cfg = with_faults({**SMALL_DF, "routing": {"algorithm": "val"}, "traffic": {"load": 0.4}},
                      events=[[1500, "fail", 0, 4]])  # group 0's link to group 1 (Valiant saturates at 0.45-0.5 here)
    ds = fastnet.run(cfg)
    causes = dict(zip(ds.drop_cause.values.tolist(), ds.packets_dropped_by_cause.values.tolist()))
    assert causes["router"] == 0
    assert int(ds.unstable) == 0 and int(ds.packets_delivered) > 0


@pytest.mark.parametrize("up_port", ["mlid", "adaptive"])
def test_fat_tree_updown_goes_around_failed_links_and_switches(up_port):
    """Up*/down* with failures: up only toward a switch with a live way down (faults/plan.py updown_reach). 10 %
    of the links down from the start drop nothing; a link and a leaf switch failing mid-run drop only what was
    on them or in it, and the traffic of the leaf's nodes (unroutable)."""
    base = {"topology": {"kind": "fattree", "k": 4, "n": 3}, "routing": {"algorithm": "updown", "up_port": up_port},
            "traffic": {"load": 0.6}, "sim": {"warmup": 1000, "measure": 2000, "drain": 3000}}
    ds = fastnet.run(with_faults(base, fraction=0.1, seed=2))
    assert int(ds.packets_dropped) == 0 and ds.attrs["faults_links_down_at_start"] == 13
    ds = fastnet.run(with_faults(base, events=[[1500, "fail", 16, 32], [1800, "fail", 5]], allow_disconnected=True))
    link, router, unroutable = ds.packets_dropped_by_cause.values.tolist()
    assert router > 0 and unroutable > 0 and int(ds.unstable) == 0
    with pytest.raises(ConfigError, match=r"leaf switches 0 and 1 have no live up\*/down\* path"):
        S.prepare(with_faults(base, links=[[0, 16], [0, 17], [0, 18], [0, 19]]))  # leaf 0's four up links


@pytest.mark.parametrize("router", [{}, {"crossbar": "flit"}, FLIT_SMALL], ids=["packet", "flit", "flit-small"])
def test_router_failing_mid_run_with_disconnection_allowed(router):
    """A table routing: router 5 fails at cycle 2,000. Its buffered packets are dropped (cause router), traffic to
    and from its node afterwards has no route (cause unroutable), and the audit still balances. With the flit
    crossbar and 4-phit packets the streams out of the router and into it are cut as well."""
    cfg = {"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "min"}, "router": router,
           "traffic": {"load": 0.5, "packet_phits": 4 if router else 1},
           "sim": {"warmup": 1000, "measure": 2000, "drain": 2000},
           "faults": {"events": [[2000, "fail", 5]], "allow_disconnected": True}}
    s = S.prepare(cfg)
    S.simulate(s)  # check_conservation: created = delivered + dropped + queued + in flight
    ctr = s.state.ctr
    assert ctr[C_DROP_ROUTER] > 0 and ctr[C_DROP_UNROUTABLE] > 0
    assert ctr[C_DROPPED] == ctr[C_DROP_LINK] + ctr[C_DROP_ROUTER] + ctr[C_DROP_UNROUTABLE]
    assert (s.routes.dist[5] == 255).all() and len(s.faults.recompute_seconds) == 1


def test_same_seed_same_result_with_failures():
    cfg = with_faults({**SMALL_DF, "traffic": {"load": 0.7}}, fraction=0.2, link_class="global",
                      events=[[1200, "fail", 1, 12]])
    a, b = fastnet.run(cfg), fastnet.run(cfg)
    for name in ("packets_delivered", "packets_dropped", "packet_latency_mean", "accepted_phits_per_node_cycle"):
        assert a[name].item() == b[name].item()
    assert (a.packets_dropped_by_cause.values == b.packets_dropped_by_cause.values).all()


@pytest.mark.parametrize("faults, field, words", [
    ({"links": [[0, 2]]}, "faults.links", "not linked"),
    ({"links": [[0, 99]]}, "faults.links", "does not exist"),
    ({"links": [[0, 1], [2, 3]]}, "faults", "ring of dimension 0"),
    ({"events": [[10, "recover", 0, 1]]}, "faults.events[0]", "not down"),
    ({"routers": [3]}, "faults.routers", "table routing"),
    ({"fraction": 0.1, "link_class": "global"}, "faults.link_class", "no global links"),
    ({"links": [[0, 1]], "bogus": 1}, "faults.bogus", "unknown key"),
    ({"links": [[0, "a"]]}, "faults.links", "pairs of router ids"),
    ({"file": "/nonexistent/faults.toml"}, "faults.file", "no such file"),
])
def test_bad_faults_name_the_field(faults, field, words):
    cfg = {"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "dor"}, "faults": faults}
    with pytest.raises(ConfigError) as e:
        S.prepare(cfg)
    assert e.value.field == field and words in str(e.value)


@pytest.mark.parametrize("cfg, field, words", [
    ({"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "faults": {"links": [[0, 1]]}},
     "faults.links", "inside a dragonfly group"),
    ({"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "faults": {"links": [[0, 4]]}},
     "faults", "min routing has no detour"),
    ({"topology": {"kind": "fattree", "k": 2, "n": 2}, "routing": {"algorithm": "val"},
      "faults": {"links": [[0, 2]]}}, "faults", "does not route around failures"),
    ({"topology": {"kind": "torus", "dims": [4, 4]}, "routing": {"algorithm": "min"},
      "faults": {"routers": [5]}}, "faults", "router 5 has failed"),
    ({"topology": {"kind": "torus", "dims": [4, 4]}, "workload": {"kind": "a2a"},
      "faults": {"events": [[100, "fail", 0, 1]]}}, "faults.events", "closed-loop workload"),
    # no advice to set faults.allow_disconnected, which a closed loop refuses
    ({"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}, "workload": {"kind": "a2a"},
      "faults": {"links": [[0, 4]]}}, "faults", "closed-loop workload needs every destination reachable"),
])
def test_unsupported_or_disconnecting_failures_are_refused(cfg, field, words):
    with pytest.raises(ConfigError) as e:
        S.prepare(cfg)
    assert e.value.field == field and words in str(e.value)


def test_a_faults_section_with_nothing_failed_takes_any_routing():
    """docs/faults.md: a sweep over faults.fraction starts at 0, also for a routing that has no detour (it was
    refused for the routing before anything was drawn): the run is the one without the section."""
    base = {"topology": {"kind": "fattree", "k": 2, "n": 2}, "routing": {"algorithm": "val"},
            "sim": {"warmup": 200, "measure": 500, "drain": 1000}}
    plain = fastnet.run(base)
    for faults in ({"fraction": 0.0}, {"links": [], "events": []}):
        ds = fastnet.run({**base, "faults": faults})
        assert ds.packet_latency_mean.item() == plain.packet_latency_mean.item()
        assert ds.packets_delivered.item() == plain.packets_delivered.item()
    with pytest.raises(ConfigError, match="does not route around failures"):
        S.prepare({**base, "faults": {"fraction": 0.5}})


def test_faults_from_a_file_and_the_json_summary(tmp_path):
    (tmp_path / "f.toml").write_text("[faults]\nlinks = [[0, 1]]\n")
    result = CliRunner().invoke(app, [
        "run", "--set", "topology.kind=\"torus\"", "--set", "topology.dims=[4,4]", "--set", "routing.algorithm=\"dor\"",
        "--set", f"faults.file=\"{tmp_path / 'f.toml'}\"", "--set", "sim.warmup=500", "--set", "sim.measure=500",
        "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["packets_dropped"] == 0 and out["unstable"] == 0


def test_sweep_over_the_failed_fraction_and_its_plot(tmp_path):
    """`fastnet sweep` sweeps faults.fraction (0 included: the same variables at every point) and `fastnet plot`
    draws accepted throughput against it."""
    from fastnet.plot import figure, open_sweep

    spec = {"base": {**SMALL_DF, "traffic": {"load": 0.9}, "faults": {"link_class": "global", "seed": 3}},
            "sweep": {"faults.fraction": [0.0, 0.15, 0.3]}}
    fastnet.sweep(spec, tmp_path / "f.zarr", workers=1)
    ds = open_sweep(tmp_path / "f.zarr")
    accepted = ds.accepted_phits_per_node_cycle.values
    assert accepted[0] > accepted[1] > accepted[2] and (ds.packets_dropped.values == 0).all()
    assert (ds.port_failed_cycles.astype(bool).sum("port").values // 2).tolist() == [0, 5, 11]  # of 36 links
    fig = figure(ds, x="faults.fraction", y=["accepted_phits_per_node_cycle"])
    assert fig.axes[0].get_xlabel().startswith("faults.fraction")


def test_a_larger_failed_fraction_fails_the_links_of_a_smaller_one():
    """With one seed the fractions draw from one random order of the links, so a sweep over faults.fraction adds
    failures to the same network instead of comparing unrelated sets (5 % and 10 % of the 528 global links shared
    0 or 1 link)."""
    from fastnet.build.routing import build_routes
    from fastnet.config import resolve
    from fastnet.faults.plan import plan_faults
    from fastnet.topology import build_network

    cfg = resolve({"topology": {"kind": "dragonfly", "p": 4, "a": 8, "h": 4}, "routing": {"algorithm": "ugal_l"}})
    net = build_network(cfg)
    routes = build_routes(net)
    down = [plan_faults(resolve({**cfg, "faults": {"fraction": x, "link_class": "global", "seed": 1}}), net,
                        routes).states[0][1].links for x in (0.01, 0.05, 0.1)]
    assert [len(d) for d in down] == [5, 26, 53] and down[0] < down[1] < down[2]
