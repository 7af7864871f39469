"""The `fastnet` command: bad input is one line and exit code 2; run/info outputs; --out zarr."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import xarray as xr
from typer.testing import CliRunner

from fastnet.cli import app

SMALL_TOML = """
[topology]
kind = "torus"
dims = [4, 4]

[sim]
warmup = 100
measure = 500
drain = 500
"""


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return str(path)


def invoke(*args):
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("args,field", [
    (["--set", "router.colour=3"], "router.colour"),
    (["--set", 'topology.kind="hypercube"'], "topology.kind"),
    (["--set", 'topology.kind="slimfly"', "--set", "topology.q=6"], "topology.q"),
    (["--set", "traffic.load=0"], "traffic.load"),
    (["--set", "traffic.load=1.5"], "traffic.load"),
    (["--set", 'topology.kind="jellyfish"', "--set", "topology.radix=1"], "topology.radix"),
    (["--set", 'topology.kind="torus"', "--set", "topology.dims=[1,8]"], "topology.dims"),
    (["--set", "traffic.pattern=zigzag"], "traffic.pattern"),
    (["--set", "sim.warmup=-5"], "sim.warmup"),
    (["--set", "router.vcs=1"], "router.vcs"),
    (["--set", "traffic.pattern=bitcomp"], "traffic.pattern"),  # 1056 nodes is not a power of two
    (["--set", "router.buffer_phits=4"], "router.buffer_phits"),  # smaller than a 10-phit packet
    (["--set", "oops"], "--set"),
])
def test_bad_config_is_one_line_exit_2(args, field):
    result = invoke("run", *args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: " + field), result.output
    assert "Traceback" not in result.output


def test_bad_files(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[topology\nkind = 3")
    result = invoke("run", str(bad))
    assert result.exit_code == 2 and "is not valid TOML" in result.output
    result = invoke("info", str(tmp_path / "missing.toml"))
    assert result.exit_code == 2 and "no such file" in result.output
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("[network]\nx = 1\n")
    result = invoke("run", str(unknown))
    assert result.exit_code == 2 and "network: unknown section" in result.output


def test_output_files_in_a_missing_directory_or_on_a_directory_are_one_line(tmp_path):
    """-o / --write-instance naming a directory, or a file in one that does not exist: one line naming the option,
    exit 2, nothing written (it was a traceback from the write, after the work)."""
    booksim = tmp_path / "b.cfg"
    booksim.write_text("topology = torus;\nk = 4;\nn = 2;\n")
    graph = tmp_path / "jf.toml"
    graph.write_text('[topology]\nkind = "jellyfish"\nswitches = 8\nradix = 4\np = 1\n')
    for args, option in [(["convert", str(booksim), "-o", str(tmp_path / "no" / "t.toml")], "--output"),
                         (["convert", str(booksim), "-o", str(tmp_path)], "--output"),
                         (["plot", str(tmp_path / "r.zarr"), "-o", str(tmp_path / "no" / "x.png")], "--output"),
                         (["throughput", str(graph), "--samples", "1", "--write-instance", str(tmp_path)],
                          "--write-instance")]:
        result = invoke(*args)
        assert result.exit_code == 2 and f"{option}:" in result.output, (args, result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.cfg", "jf.toml"]


def test_real_process_exit_code_and_stderr():
    proc = subprocess.run([sys.executable, "-m", "fastnet", "run", "--set", "traffic.load=2"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "traffic.load" in proc.stderr and "Traceback" not in proc.stderr


def test_run_json_and_out(tmp_path, small):
    out = tmp_path / "r.zarr"
    result = invoke("run", small, "--json", "--out", str(out))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    for key in ("accepted_phits_per_node_cycle", "offered_phits_per_node_cycle", "packet_latency_mean",
                "packet_latency_p99", "network_latency_mean", "hops_mean", "packets_injected",
                "packets_delivered", "cycles", "wall_seconds"):
        assert key in summary
    ds = xr.open_zarr(out)
    assert ds.packets_delivered.item() == summary["packets_delivered"]
    assert ds.attrs["fastnet_version"] and json.loads(ds.attrs["config"])["topology"]["dims"] == [4, 4]
    assert ds.port_utilization.dims == ("port",) and "port_class" in ds.coords


def test_a_run_replaces_a_runs_store_but_not_a_sweeps(tmp_path, small):
    from fastnet.store import SWEEP_TITLE, write_dataset

    out = tmp_path / "r.zarr"
    write_dataset(xr.Dataset(attrs={"title": "a run"}), out)
    assert invoke("run", small, "--out", str(out)).exit_code == 0
    write_dataset(xr.Dataset({"x": ("point", [1, 2])}, attrs={"title": SWEEP_TITLE}), out)
    result = invoke("run", small, "--out", str(out))
    assert result.exit_code == 2 and "--out:" in result.output and "sweep" in result.output
    assert xr.open_zarr(out).x.values.tolist() == [1, 2]


def test_failed_run_keeps_existing_output(tmp_path, small):
    out = tmp_path / "r.zarr"
    assert invoke("run", small, "--out", str(out)).exit_code == 0
    before = xr.open_zarr(out).packets_delivered.item()
    assert invoke("run", small, "--set", "traffic.load=7", "--out", str(out)).exit_code == 2
    assert xr.open_zarr(out).packets_delivered.item() == before


def test_table_output_and_info(small):
    result = invoke("run", small)
    assert result.exit_code == 0 and "packet_latency_mean" in result.output and "cycles" in result.output
    result = invoke("info", "--set", 'topology.kind="slimfly"', "--set", "topology.q=13", "--set", "topology.p=9",
                    "--json")
    facts = json.loads(result.output)
    assert facts["routers"] == 338 and facts["nodes"] == 3042 and facts["radix"] == 28 and facts["diameter"] == 2
    assert facts["memory_estimate_mb"] > 0


@pytest.mark.parametrize("sets,field", [(["routing.min_path=\"fixed\""], "routing.min_path"),
                                        (["routing.algorithm=\"val\"", "routing.intermediate=\"any\""],
                                         "routing.intermediate")])
def test_info_refuses_the_routing_settings_run_refuses(sets, field):
    """`fastnet info` describes the network a run would have: a setting the dragonfly cannot take stops both."""
    args = [a for s in ["topology.kind=\"dragonfly\"", *sets] for a in ("--set", s)]
    for command in ("info", "run"):
        result = invoke(command, *args)
        assert result.exit_code == 2 and f"{field}:" in result.output, (command, result.output)


def test_every_config_key_is_documented():
    from pathlib import Path

    from fastnet import config

    doc = (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text()
    keys = {k for section in config.SECTIONS.values() for k in section}
    keys |= {k for kind in config.TOPOLOGIES for k in kind.keys} | set(config.TOPOLOGIES.names)
    missing = sorted(k for k in keys if f"`{k}`" not in doc and f"| {k} |" not in doc)
    assert not missing, f"docs/config.md lacks {missing}"


def test_stores_hold_strings_zarr_v3_specifies(tmp_path):
    """A fixed-width unicode array has no zarr v3 specification (zarr warns that other libraries may not read the
    store): a run's strings are written as variable-length UTF-8, as a sweep's are, and read back equal."""
    import warnings

    import numpy as np
    import xarray as xr

    from fastnet.store import write_dataset

    ds = xr.Dataset({"n": ("call", np.arange(2))}, coords={"call": np.array(["send", "allreduce"])},
                    attrs={"kind": "mpi"})
    ds["label"] = ("call", np.array(["a", "bc"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_dataset(ds, tmp_path / "r.zarr")
    back = xr.open_zarr(tmp_path / "r.zarr").load()
    assert back.call.values.tolist() == ["send", "allreduce"] and back.label.values.tolist() == ["a", "bc"]
    assert back.n.sel(call="allreduce").item() == 1


def test_every_registered_name_is_in_its_config_key_s_row():
    """docs/config.md lists the names a key takes in that key's row (or points to docs/registries.md): a name added to
    a registry and not there is a row gone stale."""
    import re
    from pathlib import Path

    from fastnet.inspect import registries

    doc = (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text()
    sections = dict(re.findall(r"^## `\[(\w+)\]`\n(.*?)(?=^## |\Z)", doc, re.M | re.S))
    stale = {}
    for keys, reg in registries().items():
        for key in keys.split(", "):  # the collective algorithms: mpi.allreduce, mpi.allgather
            section, field = key.split(".")
            row = re.search(rf"^\| `{field}` \|.*$", sections.get(section, ""), re.M)
            if row is None or "registries.md" in row.group(0):
                continue
            names = [e.name for e in reg if field in e.attrs.get("collectives", (field,))]
            missing = [name for name in names if f"`{name}`" not in row.group(0)]
            if missing:
                stale[key] = missing
    assert not stale, f"docs/config.md rows lack these names (or a link to registries.md): {stale}"
