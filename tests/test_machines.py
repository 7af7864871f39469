"""Machine presets (fastnet/machines): each resolves, builds to the size its title states, and composes with a
config and --set the documented way."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import fastnet
from fastnet import machines
from fastnet.build import build_network
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


def test_run_on_a_preset_small_override():
    ds = fastnet.run({"machine": {"name": "darter"}, "traffic": {"load": 0.01},
                      "sim": {"warmup": 200, "measure": 500, "drain": 20000}})
    assert ds.attrs["nodes"] == 768 and ds.packets_delivered.item() > 0
