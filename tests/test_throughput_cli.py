"""`fastnet throughput`: the JSON instance format in and out, config runs, errors, and the engine cross-check."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from fastnet.throughput.crosscheck import crosscheck, engine_instance
from fastnet.throughput.heuristics import hm, jm
from fastnet.throughput.instance import from_lists, read_instance, to_dict, write_instance
from fastnet.throughput.lp import mcf, mmf

ROOT = Path(__file__).resolve().parents[1]
TORUS_TOML = """
[topology]
kind = "torus"
dims = [4, 4]
p = 1
"""


def fastnet(*args: str):
    """`fastnet throughput ARGS` in this process (exit code, stdout, stderr): a subprocess per call would spend
    2-4 s importing; test_cli_subprocess_stdout_is_pure_json runs the real command once."""
    from typer.testing import CliRunner

    from fastnet.cli import app

    r = CliRunner().invoke(app, ["throughput", *args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def test_cli_subprocess_stdout_is_pure_json(tmp_path):
    """HiGHS prints a banner on the C-level stdout; the real command must keep --json output parseable."""
    f = tmp_path / "i.json"
    f.write_text(json.dumps(EXAMPLE))
    r = subprocess.run([sys.executable, "-m", "fastnet", "throughput", "--instance", str(f), "--json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert list(json.loads(r.stdout)) == ["mmf", "mcf", "hm", "jm"]


def test_progress_prints_each_step_where_no_bar_is_drawn(tmp_path, monkeypatch):
    """With --json (or off a terminal) nothing is drawn; --progress prints each step on stderr as it starts, stdout
    stays one JSON object. Without it, nothing at all."""
    import io

    from rich.console import Console

    import fastnet.cli as cli

    cfg = tmp_path / "t.toml"
    cfg.write_text(TORUS_TOML)
    for flag, expect in (["--progress"], True), ([], False):
        buf = io.StringIO()
        monkeypatch.setattr(cli, "err", Console(file=buf, width=200))
        r = fastnet(str(cfg), "--pattern", "random", "--samples", "2", "--models", "mmf", "--json", *flag)
        assert r.returncode == 0, r.stderr
        assert "throughput" in json.loads(r.stdout)
        lines = buf.getvalue().splitlines()
        if not expect:
            assert lines == []
            continue
        assert all(re.match(r"throughput, \d+ s: ", line) for line in lines), lines
        assert [line.split(": ", 1)[1] for line in lines] == [
            "building the network", "sample 1: flows and paths", "sample 1: mmf (16 flows)", "1 sample(s) done",
            "sample 2: flows and paths", "sample 2: mmf (16 flows)", "2 sample(s) done"]


EXAMPLE = {  # node ids need not be 0..n-1; flow 0 has two paths
    "links": [[10, 20, 1], [20, 30, 1], [10, 30, 0.5], [-4, 10, 2]],
    "flows": [[10, 30], [10, 20], [20, 30], [-4, 30]],
    "paths": [[[0, 1], [2]], [[0]], [[1]], [[3, 2]]],
}


def test_instance_json_round_trip(tmp_path):
    inst = from_lists(EXAMPLE["links"], EXAMPLE["flows"], EXAMPLE["paths"])
    assert to_dict(inst) == EXAMPLE
    path = write_instance(inst, tmp_path / "i.json")
    assert json.loads(path.read_text()) == EXAMPLE
    back = read_instance(path)
    for name in ("link_src", "link_dst", "capacity", "flow_src", "flow_dst", "path_ptr", "link_ptr", "links"):
        np.testing.assert_array_equal(getattr(back, name), getattr(inst, name))


def test_cli_instance_json_prints_rates_in_flow_order(tmp_path):
    f = tmp_path / "i.json"
    f.write_text(json.dumps(EXAMPLE))
    r = fastnet("--instance", str(f), "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)  # stdout is exactly one JSON object (no solver banner)
    assert list(got) == ["mmf", "mcf", "hm", "jm"]
    inst = read_instance(f)
    np.testing.assert_allclose(got["mmf"], mmf(inst).rate, atol=1e-12)
    np.testing.assert_allclose(got["mcf"], mcf(inst).rate, atol=1e-12)
    np.testing.assert_allclose(got["hm"], inst.flow_rate(hm(inst)), atol=1e-12)
    np.testing.assert_allclose(got["jm"], inst.flow_rate(jm(inst)), atol=1e-12)
    # hand check of MMF: link 2 (cap 0.5) is shared by flow 0's second path and flow 3's only path
    np.testing.assert_allclose(got["mmf"], [0.5, 0.5, 0.5, 0.5], atol=1e-9)


@pytest.mark.parametrize("doc, field", [
    ({"links": [[0, 1, -1]], "flows": [[0, 1]], "paths": [[[0]]]}, "instance.links[0]"),
    ({"links": [[0, 1, 1]], "flows": [[0, 1]], "paths": [[[1]]]}, "instance.paths[0][0]"),
    ({"links": [[0, 1, 1]], "flows": [[0, 1]], "paths": [[[]]]}, "instance.paths[0][0]"),
    ({"links": [[0, 1, 1]], "flows": [[0, 1], [1, 0]], "paths": [[[0]]]}, "instance.paths"),
    ({"links": [[0, 1, 1]], "flows": [[0, "a"]], "paths": [[[0]]]}, "instance.flows[0]"),
    ({"links": [[0, 1, 1]], "flows": [[0, 1]]}, "instance.paths"),
    ({"links": [[0, 1, 1]], "flows": [[0, 1]], "paths": [[[0]]], "extra": 1}, "instance.extra"),
])
def test_cli_bad_instance_is_one_line_exit_2(tmp_path, doc, field):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    r = fastnet("--instance", str(f), "--json")
    assert r.returncode == 2
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and field in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_config_json_and_zarr(tmp_path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(TORUS_TOML)
    out = tmp_path / "r.zarr"
    r = fastnet(str(cfg), "--pattern", "random", "--x", "1", "--k", "2", "--samples", "3", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert set(got["throughput"]) == {"mmf", "mcf", "hm", "jm"} and got["attrs"]["k"] == 2
    ds = xr.open_zarr(out)
    assert ds.sizes["sample"] == 3 and list(ds.model.values) == ["mmf", "mcf", "hm", "jm"]
    assert float(ds.throughput_mean.sel(model="mmf")) == pytest.approx(got["throughput"]["mmf"]["throughput"])


def test_cli_writes_instances_the_instance_mode_reads(tmp_path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(TORUS_TOML)
    r = fastnet(str(cfg), "--pattern", "perm", "--k", "4", "--samples", "1", "--json", "--write-instance",
                str(tmp_path / "perm.json"))
    assert r.returncode == 0, r.stderr
    mean_mmf = json.loads(r.stdout)["throughput"]["mmf"]["throughput"]
    r = fastnet("--instance", str(tmp_path / "perm.json"), "--json")
    assert r.returncode == 0, r.stderr
    assert np.mean(json.loads(r.stdout)["mmf"]) == pytest.approx(mean_mmf)


def test_cli_config_errors(tmp_path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(TORUS_TOML)
    for args, field in [(("--k", "0"), "throughput.k"), (("--pattern", "zigzag"), "throughput.pattern"),
                        (("--models", "mmf,lp"), "--models"), (("--set", "throughput.models=['waterfill']",
                                                                 "--k", "2"), "throughput.models")]:
        r = fastnet(str(cfg), *args)
        assert r.returncode == 2 and field in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


# ------------------------------------------------------------------ cross-check with the cycle engine
RING = {"topology": {"kind": "torus", "dims": [11], "p": 1}, "router": {"vcs": "auto"},
        "traffic": {"pattern": "permutation"}, "sim": {"warmup": 3000, "measure": 6000, "drain": 3000, "seed": 3}}


def test_crosscheck_routes_are_the_engines():
    """At a load below saturation the simulated utilisation of every port matches the model's link loads times
    the load: the models and the engine route the same flows over the same links."""
    ds = crosscheck(RING, loads=[0.15])
    # MCF gives every flow the same rate, so its link loads divided by that rate are the flows per link
    flows_per_link = ds.model_link_load.sel(model="mcf") / ds.model_throughput_per_node.sel(model="mcf")
    sim = ds.sim_port_utilization.isel({"traffic.load": 0})
    offered = float(ds.sim_offered_phits_per_node_cycle[0])
    assert flows_per_link.max() >= 2  # some links are shared, so a wrong route would show
    np.testing.assert_allclose(sim, flows_per_link * offered, atol=0.03)


def test_crosscheck_mcf_is_the_saturation_load_and_mmf_the_saturated_throughput():
    ds = crosscheck(RING, loads=[0.85 * 1 / 3, 1.15 * 1 / 3, 1.0])
    m = ds.model_throughput_per_node
    assert float(m.sel(model="mcf")) == pytest.approx(1 / 3)  # permutation seed 3 on a ring of 11: 3 flows share a link
    assert ds.sim_saturated.values.tolist() == [0, 1, 1]
    accepted = float(ds.sim_accepted_phits_per_node_cycle[-1])
    assert float(m.sel(model="mcf")) < accepted <= float(m.sel(model="mmf")) * 1.02
    np.testing.assert_allclose(m.sel(model="mmf"), m.sel(model="waterfill"), atol=1e-9)


def test_crosscheck_models_links_at_the_engines_rates():
    """Router links at half the reference rate: the models give them half the capacity, so MCF (the saturation
    load) halves with them (it stayed 1/3, twice what the engine can carry)."""
    from fastnet.config import resolve
    from fastnet.sim import network_and_routes

    slow = resolve(dict(RING, links={"bandwidth": "2 GB/s", "bandwidth_local": "1 GB/s"}))
    net, routes = network_and_routes(slow)
    inst = engine_instance(net, routes, slow)
    node = net.port_peer_router < 0
    assert set(inst.capacity[: net.n_ports][~node].tolist()) == {0.5}
    assert set(inst.capacity[: net.n_ports][node].tolist()) == {1.0} == set(inst.capacity[net.n_ports:].tolist())
    ds = crosscheck(slow, loads=[0.1])
    assert float(ds.model_throughput_per_node.sel(model="mcf")) == pytest.approx(1 / 6)


def test_crosscheck_refuses_multipath_routing():
    from fastnet.errors import ConfigError

    cfg = dict(RING, topology={"kind": "torus", "dims": [5, 5], "p": 1})
    with pytest.raises(ConfigError, match="routing.algorithm"):
        crosscheck(cfg)


def test_cli_crosscheck_side_by_side(tmp_path):
    cfg = tmp_path / "ring.toml"
    cfg.write_text('[topology]\nkind = "torus"\ndims = [11]\np = 1\n[router]\nvcs = "auto"\n'
                   '[traffic]\npattern = "permutation"\n[sim]\nwarmup = 3000\nmeasure = 6000\ndrain = 3000\nseed = 3\n')
    r = fastnet(str(cfg), "--simulate", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert set(got["models"]) == {"mmf", "mcf", "hm", "jm", "waterfill"} and "1.0" in got["simulation"]
    r = fastnet(str(cfg), "--simulate")
    assert r.returncode == 0 and "MMF" in r.stdout and "simulation" in r.stdout and "Why the simulation" in r.stdout
