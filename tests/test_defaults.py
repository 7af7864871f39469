"""Which config the CLI starts from (issue 12): `--set` without a config file starts from the documented defaults,
as `fastnet.run(dict)` does, so no key of the embedded example leaks into another network; a bare `fastnet run`
is the embedded example; a file plus --set is the file plus --set. `--show-config` prints the resolved config as
TOML that reads back the same. None of these tests simulates."""

from __future__ import annotations

import tomllib

import pytest
from typer.testing import CliRunner

from fastnet import booksim, config
from fastnet.cli import app
from fastnet.errors import ConfigError

# the keys a kind needs beyond `kind` (--set strings, and the same as a dict)
EXTRA = {"graph": (["topology.edges=[[0,1],[1,2],[2,0]]"], {"edges": [[0, 1], [1, 2], [2, 0]]})}


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def shown(*args: str, command: str = "run") -> dict:
    result = invoke(command, *args, "--show-config")
    assert result.exit_code == 0, result.output
    return tomllib.loads(result.output)


@pytest.mark.parametrize("kind", list(config.TOPOLOGIES.names))
@pytest.mark.parametrize("command", ["run", "info"])
def test_set_kind_resolves_as_the_library_call(kind, command):
    sets, keys = EXTRA.get(kind, ([], {}))
    args = ["--set", f"topology.kind={kind}"] + [a for s in sets for a in ("--set", s)]
    assert shown(*args, command=command) == config.resolve({"topology": {"kind": kind, **keys}})


def test_set_starts_from_the_documented_defaults():
    cfg = shown("--set", "topology.kind=torus", "--set", "links.latency=2")
    assert cfg["topology"] == {"kind": "torus", "dims": [8, 8], "links": 1, "p": 1}
    links = cfg["links"]
    assert links["latency_local"] == links["latency_global"] == links["latency_injection"] == 2
    # on the default kind too: a section other than topology does not pull in the example's keys
    assert shown("--set", "traffic.load=0.5")["links"]["latency_local"] == 1


def test_bare_run_is_the_embedded_example():
    cfg = shown()
    assert cfg["links"]["latency_local"] == 10 and cfg["links"]["latency_global"] == 100
    assert cfg == config.resolve(config.read_toml(config.DEFAULT_CONFIG))


def test_show_config_does_not_simulate(monkeypatch):
    import fastnet.sim

    def boom(*args, **kwargs):
        raise AssertionError("--show-config simulated")

    monkeypatch.setattr(fastnet.sim, "prepare", boom)
    monkeypatch.setattr(fastnet.sim, "simulate", boom)
    result = invoke("run", "--show-config")
    assert result.exit_code == 0 and result.output.count("[topology]") == 1


TOML = """
[topology]
kind = "torus"
dims = [4, 4]

[links]
latency_local = 5

[workload]
kind = "sr"
messages = 20
wave = 2
"""


def test_file_plus_set_is_the_file_plus_set(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(TOML)
    cfg = shown(str(path), "--set", "links.latency=2", "--set", "sim.seed=9")
    assert cfg["topology"]["dims"] == [4, 4] and cfg["sim"]["seed"] == 9
    assert (cfg["links"]["latency_local"], cfg["links"]["latency_global"]) == (5, 2)
    assert cfg["workload"]["messages"] == 20
    assert cfg == config.resolve(config.merge(config.read_toml(path), config.parse_set(["links.latency=2",
                                                                                        "sim.seed=9"])))
    # the file's kind replaced: its topology keys go, the other sections stay
    cfg = shown(str(path), "--set", "topology.kind=mesh")
    assert cfg["topology"] == {"kind": "mesh", "dims": [8, 8], "links": 1, "p": 1, "express": 0}
    assert cfg["links"]["latency_local"] == 5


def test_booksim_file_plus_set(tmp_path):
    path = tmp_path / "torus.cfg"
    path.write_text("topology = torus; k = 4; n = 2; routing_function = dim_order; num_vcs = 2;\n")
    cfg = shown(str(path), "--set", "k=3", "--set", "sim.seed=5")
    want = config.resolve(config.merge(booksim.read_file(path, ["k=3"]), {"sim": {"seed": 5}}))
    assert cfg == want and cfg["topology"]["dims"] == [3, 3] and cfg["sim"]["seed"] == 5


@pytest.mark.parametrize("args", [(), ("--set", "topology.kind=jellyfish", "--set", "traffic.pattern=permutation"),
                                  ("--set", 'workload.kind="a2a"', "--set", "router.speedup=1.25"),
                                  ("--set", 'workload.kind="mpi"', "--set", 'workload.jobs=[{program="barrier", '
                                   'nodes=[0, 8]}, {kind="open_loop", nodes=[8, 16]}]')])
def test_show_config_round_trips(tmp_path, args):
    first = invoke("run", *args, "--show-config")
    assert first.exit_code == 0, first.output
    path = tmp_path / "shown.toml"
    path.write_text(first.output)
    again = invoke("run", str(path), "--show-config")
    assert again.exit_code == 0 and again.output == first.output
    assert config.load_config(path) == tomllib.loads(first.output)
    sections = [line for line in first.output.splitlines() if line.startswith("[")]
    want = list(config.SECTION_ORDER) + (["workload"] if "workload" in str(args) else [])
    want += ["mpi"] if "mpi" in str(args) else []  # an MPI workload's settings, given or not
    assert sections == [f"[{s}]" for s in want]


@pytest.mark.parametrize("value", [
    "plain", 'quote " and \\ backslash', "tab\tnew\nline\rcr\bbs\ffeed", "nul\x00 esc\x1b del\x7f",
    "unicode é ✓ 🙂", "", 0, -(2**63), 2**63 - 1, 0.1, 1e-07, 1e16, 2.0, -0.0, True, False,
    [], [[0, 1], [1, 2, "global"]], [0.5, "mixed", [True]],
    {"a": 1}, [{"program": "barrier", "nodes": [0, 8]}, {"odd key": {"b": [1.5]}}],
])
def test_to_toml_values_read_back(value):
    cfg = {"topology": {"kind": "graph", "x": value}, "sim": {"seed": 1}}
    assert tomllib.loads(config.to_toml(cfg, "a header\nof two lines")) == cfg


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, None, {"a": None}, (1, 2), "lone \udc80 surrogate", [1, None]])
def test_to_toml_refuses_what_toml_cannot_hold(value):
    with pytest.raises(ConfigError, match=r"^traffic\.x: cannot be written as TOML"):
        config.to_toml({"traffic": {"x": value}})


def test_unwritable_value_is_one_line_exit_2():
    """A value TOML cannot hold (an integer beyond 64 bits): refused by sim.warmup's range before it is written."""
    result = invoke("run", "--set", "sim.warmup=100000000000000000000", "--show-config")
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert result.output.startswith("error: sim.warmup: must be an integer >= 0 and <= 2147483647")


def test_throughput_starts_from_the_same_base():
    from fastnet.throughput.command import load_config

    assert load_config(None, ["topology.kind=torus"], {})["links"]["latency_local"] == 1
    assert load_config(None, [], {"k": 2})["links"]["latency_local"] == 10


def test_numpy_values_read_as_the_toml_values_they_stand_for():
    """A config built in Python with NumPy (a scalar from an array, np.arange) resolves as the plain values do."""
    import numpy as np

    given = {"topology": {"kind": "torus", "dims": np.array([4, 4])},
             "traffic": {"packet_phits": np.int64(8), "load": np.float32(0.25), "pattern": np.str_("tornado")},
             "sim": {"seed": np.int32(3), "measure": np.uint16(100)}, "router": {"vcs": (2 + np.int8(0))}}
    assert config.resolve(given) == config.resolve(
        {"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"packet_phits": 8, "load": 0.25,
                                                                   "pattern": "tornado"},
         "sim": {"seed": 3, "measure": 100}, "router": {"vcs": 2}})
