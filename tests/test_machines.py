"""Machine presets (fastnet/machines): each resolves, builds to the size its title states, and composes with a
config and --set the documented way."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import fastnet
from fastnet import machines
from fastnet.topology import build_network
from fastnet.cli import app
from fastnet.config import resolve
from fastnet.errors import ConfigError

runner = CliRunner()


def stated_nodes(name: str) -> int:
    """The node count (or node slots) the preset's title states."""
    m = re.search(r"([\d,]+) (?:nodes|node slots)", machines.title(name))
    assert m, machines.title(name)
    return int(m.group(1).replace(",", ""))


@pytest.mark.parametrize("name", machines.names())
def test_preset_builds_to_its_stated_size(name):
    net = build_network({"machine": {"name": name}})
    assert net.n_nodes == stated_nodes(name)


def test_stampedes_buffers_outlast_its_credit_loop():
    """Its fat tree routes on one VC a port: with 256-phit buffers over a 2 x 1225-cycle credit loop a link carried
    about 0.1 phit a cycle, and the machine saturated at load 0.1 (docs/machines.md: 4096-phit buffers)."""
    from fastnet.units import timing

    cfg = resolve({"machine": {"name": "stampede"}})
    loop = 2 * max(timing(cfg).latency.values())
    assert min(cfg["router"][k] for k in ("buffer_phits", "buffer_phits_global", "buffer_phits_injection")) > loop


def test_every_machine_of_the_issue_is_shipped():
    assert {"sequoia", "mira", "hopper", "trinity", "darter", "stampede"} <= set(machines.names())


def test_config_and_set_override_the_preset():
    cfg = resolve({"machine": {"name": "hopper"}, "routing": {"algorithm": "min"}})
    assert cfg["routing"]["algorithm"] == "min"
    assert cfg["topology"]["dims"] == [17, 8, 24]
    assert cfg["machine"] == {"name": "hopper"}
    r = runner.invoke(app, ["info", "--machine", "darter", "--set", "topology.g=3", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["nodes"] == 3 * 96 * 4


def test_machines_command_lists_titles():
    r = runner.invoke(app, ["machines", "--json"])
    assert r.exit_code == 0
    rows = json.loads(r.stdout)
    assert set(rows) == set(machines.names())
    assert "Blue Gene/Q" in rows["sequoia"]


@pytest.mark.parametrize("section, field", [({"name": "nope"}, "machine.name"), ({"name": "mira", "x": 1}, "machine.x"),
                                            ("mira", "machine")])
def test_bad_machine_is_one_line(section, field):
    with pytest.raises(ConfigError) as e:
        resolve({"machine": section})
    assert e.value.field == field
    r = runner.invoke(app, ["run", "--machine", "nope"])
    assert r.exit_code == 2 and "machine.name" in r.output and len(r.output.strip().splitlines()) == 1


def test_machine_flag_names_the_preset_in_place_of_the_files(tmp_path):
    """--machine is the command line's choice, as --set machine.name would be; the file's other keys still override
    the preset's, and a --set beats both."""
    from fastnet.arguments import config_from_args

    path = tmp_path / "m.toml"
    path.write_text('[machine]\nname = "darter"\n\n[traffic]\nload = 0.2\n')
    cfg = config_from_args(path, [], "hopper")
    assert cfg["machine"]["name"] == "hopper" and cfg["topology"]["kind"] == "torus" and cfg["traffic"]["load"] == 0.2
    assert config_from_args(path, ["machine.name=mira"], "hopper")["machine"]["name"] == "mira"


def test_run_on_a_preset_small_override():
    ds = fastnet.run({"machine": {"name": "darter"}, "traffic": {"load": 0.01},
                      "routing": {"algorithm": "min"},  # the loop other tests compile (CI's time)
                      "sim": {"warmup": 200, "measure": 500, "drain": 20000}})
    assert ds.attrs["nodes"] == 768 and ds.packets_delivered.item() > 0


def test_bgq_fanout_latency_is_the_zero_load_formula_in_ns():
    """Sequoia's timing on a smaller 5-D torus: an 8-byte MPI message (40 bytes, 10 phits on the wire) from node 0
    to each other node, one at a time, takes 2 x 340 ns + h x 10 ns + (h + 1) x 8 ns + 9 cycles of 2 ns: 724 ns
    at one hop, and 1,264 ns at Sequoia's 31 (docs/machines.md measures the whole machine)."""
    import numpy as np

    dims = [4, 3, 2, 2, 2]
    ds = fastnet.run({"machine": {"name": "sequoia"}, "topology": {"dims": dims},
                      "routing": {"algorithm": "min"},  # as DOR on an idle network (minimal hops), and the MPI
                      # torus loop tests/test_mpi.py compiles, which saves CI a compilation
                      "workload": {"kind": "mpi", "program": "fanout", "message_bytes": 8, "compute_cycles": 1500}})
    finish = ds.task_finish_cycle.values.astype(np.int64)
    ranks = np.arange(1, len(finish))
    coords = np.stack([(ranks // int(np.prod(dims[:i]))) % k for i, k in enumerate(dims)])
    hops = np.minimum(coords, np.array(dims)[:, None] - coords).sum(axis=0)
    latency_ns = (finish[1:] - 1500 * ranks) * ds.attrs["cycle_ns"]
    np.testing.assert_allclose(latency_ns, 2 * 340 + 10 * hops + 8 * (hops + 1) + 9 * 2)
    assert 2 * 340 + 10 * 31 + 8 * 32 + 18 == 1264
