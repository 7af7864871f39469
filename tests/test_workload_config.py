"""The [workload] section: defaults, one-line errors naming the field (exit code 2), the --json summary, and
what happens when a workload cannot finish (reported, never a hang)."""

import json

import pytest
from typer.testing import CliRunner

import fastnet
from fastnet.cli import app
from fastnet.config import resolve
from fastnet.errors import ConfigError, WorkloadError
from fastnet.sim import prepare, simulate
from fastnet.workloads.state import TK_EXPECT

TORUS = {"topology": {"kind": "torus", "dims": [4, 2]}, "router": {"vcs": "auto"}}


def test_defaults_are_filled_and_resolution_is_idempotent():
    cfg = resolve({"workload": {"kind": "graph500", "cycle_ns": 2.0}})
    w = cfg["workload"]
    assert w["scale"] == 26 and w["edgefactor"] == 16 and w["coalescing"] == 256 and w["link_gbps"] == "auto"
    assert resolve(cfg) == cfg  # prepare() resolves again what build_network resolved
    assert cfg["traffic"]["phit_bytes"] == 4


@pytest.mark.parametrize("workload,field", [
    ({"kind": "allreduce"}, "workload.kind"),
    ({"kind": "sr", "wave": 20, "messages": 10}, "workload.wave"),
    ({"kind": "sr", "messages": 0}, "workload.messages"),
    ({"kind": "graph500", "cycle_ns": 1.0, "link_gbps": 40}, "workload.cycle_ns"),
    ({"kind": "graph500", "variant": "booksim"}, "workload.variant"),
    ({"kind": "graph500", "query_time_ns": 0}, "workload.query_time_ns"),
    ({"kind": "a2a", "tasks": 0}, "workload.tasks"),
    ({"kind": "a2a", "colour": 1}, "workload.colour"),
])
def test_bad_values_name_the_field(workload, field):
    with pytest.raises(ConfigError) as e:
        resolve({"workload": workload})
    assert e.value.field == field


@pytest.mark.parametrize("workload,field", [
    ({"kind": "a2a", "tasks": 9}, "workload.tasks"),  # 8 nodes
    ({"kind": "a2a", "tasks": 1}, "workload.tasks"),  # (an MPI program may have one rank)
    ({"kind": "o2a", "root": 8}, "workload.root"),
    ({"kind": "graph500", "root_task": 8}, "workload.root_task"),
])
def test_values_checked_against_the_network(workload, field):
    with pytest.raises(ConfigError) as e:
        prepare({**TORUS, "workload": workload})
    assert e.value.field == field


def test_cli_bad_workload_is_one_line_and_exit_code_2():
    r = CliRunner().invoke(app, ["run", "--set", 'workload.kind="allreduce"', "--json"])
    assert r.exit_code == 2
    assert "workload.kind" in r.output and len(r.output.strip().splitlines()) == 1


def test_cli_json_has_execution_cycles(tmp_path):
    cfg = tmp_path / "a2a.toml"
    cfg.write_text('[topology]\nkind = "torus"\ndims = [4, 2]\n[router]\nvcs = "auto"\n'
                   '[workload]\nkind = "a2a"\nmessage_bytes = 100\n')
    r = CliRunner().invoke(app, ["run", str(cfg), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["execution_cycles"] == out["cycles"] > 0
    assert out["messages_completed"] == 56 and out["unstable"] == 0


def test_dataset_describes_every_workload_variable():
    ds = fastnet.run({**TORUS, "workload": {"kind": "sr", "messages": 20, "wave": 5}})
    for name in ("execution_cycles", "wave_start", "wave_end", "wave_cycles", "message_latency_mean"):
        assert ds[name].attrs["units"] and ds[name].attrs["description"], name
    assert ds.wave_start.dims == ("wave",) and ds.attrs["workload"] == "sr"


def test_a_stalled_workload_is_reported_not_a_hang():
    s = prepare({**TORUS, "sim": {"watchdog": 200}, "workload": {"kind": "a2a", "message_bytes": 64}})
    s.workload.tk[3, TK_EXPECT] += 1  # task 3 now waits for a message nobody sends
    with pytest.raises(WorkloadError, match="stalled"):
        simulate(s)


def test_a_workload_that_needs_more_cycles_is_reported():
    with pytest.raises(WorkloadError, match="max_cycles"):
        fastnet.run({**TORUS, "sim": {"max_cycles": 50}, "workload": {"kind": "a2a", "message_bytes": 6400}})
