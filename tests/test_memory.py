"""Memory: the estimate (fastnet/memory.py) against real runs, and the up-front refusal (sim.memory_check)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import fastnet
import fastnet.memory as memory
from fastnet.cli import app
from fastnet.errors import ConfigError

SLIMFLY = {"topology": {"kind": "slimfly", "q": 13, "p": 9}, "links": {"latency": 20},
           "router": {"vcs": 2, "buffer_phits": 1600, "delay": 39, "speedup": 1.0},
           "traffic": {"load": 0.071, "packet_phits": 8}, "sim": {"warmup": 0, "measure": 2000, "drain": 0}}
TORUS = {"topology": {"kind": "torus", "dims": [8, 8]}, "sim": {"warmup": 0, "measure": 3000, "drain": 0}}


def test_a_run_needing_more_than_is_available_is_refused_before_its_state_exists(monkeypatch):
    import fastnet.kernels.state as state

    monkeypatch.setattr(memory, "available_memory", lambda: 50 * 2**20)
    monkeypatch.setattr(memory, "network_floor", lambda cfg: None)  # past the check before the build (below)
    monkeypatch.setattr(state, "new_state", lambda *a, **k: pytest.fail("state allocated before the check"))
    with pytest.raises(ConfigError) as e:
        fastnet.run(SLIMFLY)
    text = str(e.value)
    assert e.value.field == "sim.memory_check" and "50 MB is available" in text
    assert "needs about" in text and "in all" in text and "sim.memory_check = false" in text


def test_the_refusal_is_one_line_and_exit_code_2(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 50 * 2**20)
    monkeypatch.setattr(memory, "network_floor", lambda cfg: None)
    r = CliRunner().invoke(app, ["run", "--set", "topology.kind=torus"])
    assert r.exit_code == 2 and r.output.startswith("error: sim.memory_check: this run needs about")
    assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output


SIZES = [  # one or more of each family whose size network_size works out by formula
    {"kind": "slimfly", "q": 5}, {"kind": "slimfly", "q": 7, "p": 2}, {"kind": "slimfly", "q": 8},
    {"kind": "dragonfly", "p": 4, "a": 8, "h": 4}, {"kind": "dragonfly", "p": 2, "a": 4, "h": 2, "g": 5},
    {"kind": "dragonfly", "p": 4, "a": 16, "h": 4, "global_bundle": 4, "group_shape": [4, 4]},
    {"kind": "torus", "dims": [2, 3, 4], "p": 2, "links": [1, 2, 1]}, {"kind": "mesh", "dims": [4, 5]},
    {"kind": "twisted_torus", "dims": [4, 4], "twist": 1}, {"kind": "hyperx", "dims": [3, 4, 2], "trunking": [1, 2, 3]},
    {"kind": "fattree", "k": 3, "n": 2}, {"kind": "fattree", "k": 2, "n": 1},
    {"kind": "fattree", "form": "m_port_n_tree", "m": 6, "n": 4},
    {"kind": "jellyfish", "switches": 16, "radix": 6, "p": 2, "seed": 3},
]


@pytest.mark.parametrize("topology", SIZES, ids=lambda t: t["kind"])
def test_network_size_by_formula_is_the_built_networks(topology):
    from fastnet.build import network_size
    from fastnet.topology import build_network
    from fastnet.config import resolve

    cfg = resolve({"topology": topology})
    net = build_network(cfg)
    assert network_size(cfg["topology"]) == (net.n_routers, net.n_ports, net.n_nodes)


def test_a_network_too_large_to_build_is_refused_before_the_build(monkeypatch):
    """Seed 004's million-node Slim Fly against 1 GB: its floor (state and records by formula) is ~4 GB, and
    building it would take more than 1 GB before check_memory could see the estimate."""
    import fastnet.sim as sim

    monkeypatch.setattr(memory, "available_memory", lambda: 2**30)
    monkeypatch.setattr(sim, "build_network", lambda cfg: pytest.fail("built before the check"))
    r = CliRunner().invoke(app, ["run", "--set", 'topology.kind="slimfly"', "--set", "topology.q=163",
                                 "--set", "topology.p=19"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith("error: sim.memory_check: this network (53,138 routers, 14,028,432 ports, "
                               "1,009,622 nodes) needs at least ") and "1.0 GB is available" in r.output


def test_the_floor_is_below_the_estimate():
    """The check before the build never refuses what the estimate after it would let run."""
    import fastnet.sim as sim

    for cfg in (SLIMFLY, TORUS, {**TORUS, "router": {"vcs": 8, "crossbar": "flit", "vc_choice": "islip"}}):
        s = sim.prepare(cfg)
        est = memory.memory_estimate(s.net, s.routes, s.cfg, s.params.vcs)
        size, floor = memory.network_floor(s.cfg)
        assert size == (s.net.n_routers, s.net.n_ports, s.net.n_nodes)
        assert floor <= est.total - memory.IMPORT_BYTES, (cfg, floor, est)


def test_memory_check_false_runs_anyway_and_unknown_memory_runs(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 50 * 2**20)
    assert fastnet.run({**TORUS, "sim": {**TORUS["sim"], "memory_check": False}}).cycles.item() == 3000
    monkeypatch.setattr(memory, "available_memory", lambda: None)  # nothing says how much there is
    assert fastnet.run(TORUS).cycles.item() == 3000


def test_available_memory_is_memavailable_or_the_tighter_cgroup_room(monkeypatch):
    meminfo = "MemTotal:       24684092 kB\nMemAvailable:   20000000 kB\n"
    files = {"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "8589934592\n",
             "/sys/fs/cgroup/memory.current": "1073741824\n"}

    def read_text(self, *a, **k):
        if str(self) not in files:
            raise OSError(str(self))
        return files[str(self)]

    monkeypatch.setattr(memory.Path, "read_text", read_text)
    assert memory.available_memory() == 7 * 2**30  # 8 GB limit - 1 GB used < 19 GB available
    files["/sys/fs/cgroup/memory.max"] = "max\n"
    assert memory.available_memory() == 20000000 * 1024
    del files["/proc/meminfo"]  # not Linux: the free physical pages, where the OS reports them
    monkeypatch.setattr(memory.os, "sysconf", lambda name: {"SC_AVPHYS_PAGES": 1000, "SC_PAGE_SIZE": 4096}[name])
    assert memory.available_memory() == 4096 * 1000

    def no_sysconf(name):
        raise ValueError(name)

    monkeypatch.setattr(memory.os, "sysconf", no_sysconf)
    assert memory.available_memory() is None  # and check_memory lets the run go


def test_packets_in_flight_bound_what_a_run_keeps_alive():
    """Little's law at the longest route's zero-load latency, stretched for queueing: at or above the most
    packets a run below saturation holds (created - delivered, seen at every chunk end), within 2x."""
    import fastnet.sim as sim
    from fastnet.kernels.state import C_CREATED, C_DELIVERED

    for load in (0.05, 0.2, 0.35):
        s = sim.prepare({**TORUS, "traffic": {"load": load}})
        est = memory.memory_estimate(s.net, s.routes, s.cfg, s.params.vcs)
        seen = []
        sim.simulate(s, progress=lambda t, end: seen.append(int(s.state.ctr[C_CREATED] - s.state.ctr[C_DELIVERED])))
        assert max(seen) <= est.in_flight <= 2 * max(seen) + 50, (load, max(seen), est.in_flight)


def test_the_estimate_bounds_the_peak_rss_of_a_run_from_above(tmp_path):
    """A fresh process: prepare, 2,000 cycles of the 3,042-node Slim Fly, audit, dataset, zarr write."""
    code = f"""
import json, fastnet
from fastnet.memory import peak_rss
from fastnet.inspect import describe
from fastnet.config import resolve
cfg = {SLIMFLY!r}
fastnet.run(cfg, out={str(tmp_path / "r.zarr")!r})
print(json.dumps({{"peak": peak_rss(), "estimate": describe(resolve(cfg))["memory_estimate_mb"] * 2**20}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["peak"] <= r["estimate"] <= 2.5 * r["peak"], r


def test_info_reports_an_estimate_that_grows_with_the_load():
    low, high = (json.loads(CliRunner().invoke(app, [
        "info", "--set", 'topology.kind="slimfly"', "--set", "topology.q=13", "--set", "topology.p=9",
        "--set", "links.latency=20", "--set", f"traffic.load={load}", "--json"]).output) for load in (0.05, 0.6))
    assert high["packets_in_flight_estimate"] > 10 * low["packets_in_flight_estimate"] > 0
    assert high["memory_estimate_mb"] > low["memory_estimate_mb"] > 200  # the runtime alone is ~400 MB


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux carries ru_maxrss across exec")
def test_peak_rss_of_a_child_is_its_own_not_its_large_parents():
    import numpy as np

    ballast = np.ones(400 * 2**20 // 8)  # this process is now 400 MB larger than a fresh one
    code = "from fastnet.memory import peak_rss; print(peak_rss())"
    peak = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert ballast.sum() > 0 and peak < 300 * 2**20


SLIMFLY_997 = ["--set", 'topology.kind="slimfly"', "--set", "topology.q=997"]  # 1.5 billion nodes (issue 37)


@pytest.fixture
def nothing_builds(monkeypatch):
    """1 GB available, and any build of a router graph fails the test: a refusal must come first."""
    import fastnet.topology as topology

    monkeypatch.setattr(memory, "available_memory", lambda: 2**30)
    monkeypatch.setattr(topology, "build_router_graph", lambda topo: pytest.fail("built before the check"))


def refused_in_one_line(r, what="to build"):
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith("error: sim.memory_check: this network (1,988,018 routers"), r.output
    assert f"{what} and 1.0 GB is available" in r.output and "Traceback" not in r.output


def test_info_refuses_a_network_too_large_to_build_before_building_it(nothing_builds):
    """info describes a run (its memory estimate among the facts): refused by the run's floor, as run is."""
    refused_in_one_line(CliRunner().invoke(app, ["info", *SLIMFLY_997]), "before it runs")
    refused_in_one_line(CliRunner().invoke(app, ["info", *SLIMFLY_997, "--json"]), "before it runs")


def test_throughput_refuses_it_before_building_it(nothing_builds):
    refused_in_one_line(CliRunner().invoke(app, ["throughput", *SLIMFLY_997]), "the throughput models' flows and paths")


def test_a_sweeps_probe_refuses_it_before_building_it(nothing_builds, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[base.topology]\nkind = "slimfly"\nq = 997\n[sweep]\n"traffic.load" = [0.1, 0.2]\n')
    r = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "s.zarr"), "--quiet"])
    refused_in_one_line(r, "before it runs")
    assert not (tmp_path / "s.zarr").exists()


def test_convert_builds_nothing_and_writes_the_config_with_a_note(monkeypatch, tmp_path):
    """A BookSim2 config of a network larger than this machine converts (it may be for a larger one); the note
    says that run would refuse it here."""
    import fastnet.topology as topology

    monkeypatch.setattr(memory, "available_memory", lambda: 2**30)
    monkeypatch.setattr(topology, "build_router_graph", lambda topo: pytest.fail("convert built the network"))
    src = tmp_path / "big.cfg"
    src.write_text("topology = torus;\nk = 2000;\nn = 3;\nrouting_function = dim_order;\n")
    r = CliRunner().invoke(app, ["convert", str(src), "-o", str(tmp_path / "big.toml")])
    assert r.exit_code == 0 and "note: fastnet run would refuse it on this machine" in r.output, r.output
    assert (tmp_path / "big.toml").exists()
    r = CliRunner().invoke(app, ["run", str(tmp_path / "big.toml")])
    assert r.exit_code == 2 and r.output.startswith("error: sim.memory_check: this network (8,000,000,000 routers")


def test_info_on_slimfly_q997_is_refused_in_a_fresh_process_on_this_machine():
    """The issue's case as a user meets it: the network needs ~1.6 TB to run (~111 GB for its records alone)."""
    proc = subprocess.run([sys.executable, "-m", "fastnet", "info", *SLIMFLY_997], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("error: sim.memory_check: this network (1,988,018 routers"), proc.stderr


def test_throughput_refuses_flows_and_paths_beyond_the_memory_before_building(nothing_builds):
    """`fastnet throughput` counts its flows (random(X): X a host; uniform: every pair) and the LP's share of each
    path, and refuses in one line before the build: seed 004's q = 401 Slim Fly (96 M hosts), whose records fit,
    would otherwise build for minutes and then hold about 150 GB."""
    from fastnet.throughput.evaluate import resolve

    r = CliRunner().invoke(app, ["throughput", "--set", 'topology.kind="slimfly"', "--set", "topology.q=401"])
    assert r.exit_code == 2 and r.output.startswith("error: sim.memory_check: this network (321,602 routers")
    assert "flows and paths" in r.output and len(r.output.strip().splitlines()) == 1
    uniform = resolve(fastnet.config.resolve({"throughput": {"pattern": "uniform", "models": ["mcf"]}}))
    (_, _, n), need = memory.throughput_floor(uniform)
    assert n == 1056 and need > n * (n - 1) * memory.LP_BYTES_PER_PATH  # the default dragonfly: 1.1 M flows
    with pytest.raises(ConfigError, match="sim.memory_check"):
        memory.check_throughput_fits(uniform)
    memory.check_throughput_fits(dict(uniform, throughput=dict(uniform["throughput"], models=["hm"])))  # 80 MB
    # all of hotspot's traffic to its hot hosts: not every pair, so not counted as one (a floor never overstates)
    hot = resolve(fastnet.config.resolve({"traffic": {"hotspot_fraction": 1.0},
                                          "throughput": {"pattern": "hotspot", "models": ["mcf"]}}))
    assert memory.throughput_floor(hot)[1] == memory.build_floor(hot)[1]
