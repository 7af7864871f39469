"""Sweep specs: axes, ranges, zips, repeats, and the errors a researcher gets for a bad spec (no simulation)."""

from pathlib import Path

import numpy as np
import pytest

from fastnet.errors import ConfigError
from fastnet.sweeps.spec import load_spec

TORUS = {"topology": {"kind": "torus", "dims": [4, 4]}}


def spec(sweep, base=TORUS):
    return load_spec({"base": base, "sweep": sweep})


def test_axes_are_named_by_dotted_keys_in_order_and_expand_ranges():
    s = spec({
        "routing.algorithm": ["min"],  # a quoted dotted key
        "traffic": {"load": {"start": 0.1, "stop": 0.7, "step": 0.2}},  # TOML's unquoted dotted key nests
        "router": {"buffer_phits": {"start": 16, "stop": 256, "num": 5, "log": True}},
        "sim.warmup": {"start": 0, "stop": 100, "num": 3},
    })
    assert [a.dim for a in s.axes] == ["routing.algorithm", "traffic.load", "router.buffer_phits", "sim.warmup"]
    assert s.axes[1].values[0] == (0.1, 0.3, 0.5, 0.7)  # stop included, no 0.30000000000000004
    assert s.axes[2].values[0] == (16, 32, 64, 128, 256)  # integer ends stay integers
    assert s.axes[3].values[0] == (0, 50, 100)
    assert s.shape == (1, 4, 5, 3) and s.size == 60


def test_step_range_stops_before_an_off_grid_stop():
    s = spec({"traffic.load": {"start": 0.1, "stop": 0.5, "step": 0.3}})
    assert s.axes[0].values[0] == (0.1, 0.4)


def test_zip_is_one_axis_named_by_its_first_key_and_repeats_add_seeds_last():
    s = spec({
        "repeats": 3,
        "zip": [{"topology": {"dims": [[4, 4], [6, 6]]}, "sim.warmup": [100, 100]}],  # followers may repeat
        "traffic.load": [0.1, 0.2],
    }, base={**TORUS, "sim": {"seed": 7}})
    assert [a.keys for a in s.axes] == [("topology.dims", "sim.warmup"), ("traffic.load",), ("sim.seed",)]
    assert s.axes[-1].values[0] == (7, 8, 9)
    cfg = s.config((1, 0, 2))
    assert cfg["topology"]["dims"] == [6, 6] and cfg["sim"]["warmup"] == 100 and cfg["sim"]["seed"] == 9
    assert cfg["traffic"]["load"] == 0.1


def test_points_are_the_base_merged_with_the_values_then_resolved():
    base = {**TORUS, "links": {"latency": 2}}
    s = spec({"links.latency": [3, 5], "topology.kind": ["mesh", "dragonfly"]}, base=base)
    cfg = s.config((1, 1))
    assert cfg["links"]["latency_local"] == 5  # "auto" follows the swept latency, as it would in a run config
    assert cfg["topology"] == {"kind": "dragonfly", "p": 4, "a": 8, "h": 4, "g": "auto",
                               "arrangement": "consecutive", "group_shape": "auto",
                               "global_bundle": 1}  # the torus's dims went with the old kind
    assert s.config((0, 0))["topology"]["dims"] == [8, 8]  # the mesh's default: a new kind starts afresh


def test_base_may_be_a_file_next_to_the_spec(tmp_path):
    (tmp_path / "run.toml").write_text('[topology]\nkind = "torus"\ndims = [3, 3]\n')
    (tmp_path / "s.toml").write_text('base = "run.toml"\n[sweep]\ntraffic.load = [0.1, 0.2]\n')
    s = load_spec(tmp_path / "s.toml")
    assert s.config((1,))["topology"]["dims"] == [3, 3]


def test_no_base_means_the_embedded_default_run():
    s = load_spec({"sweep": {"traffic.load": [0.2]}})
    assert s.config((0,))["topology"]["kind"] == "dragonfly" and s.config((0,))["links"]["latency_global"] == 100


@pytest.mark.parametrize("sweep, field, words", [
    ({}, "sweep", "at least one axis"),
    ({"load": [0.1]}, "sweep.load", "dotted config key"),
    ({"traffic.load": []}, "sweep.traffic.load", "non-empty list"),
    ({"traffic.load": [0.1, 0.1]}, "sweep.traffic.load", "distinct"),
    ({"traffic.load": {"start": 0.1, "stop": 0.5}}, "sweep.traffic.load", "exactly one of step or num"),
    ({"traffic.load": {"start": 0.1, "stop": 0.5, "step": 0.1, "num": 3}}, "sweep.traffic.load", "exactly one"),
    ({"traffic.load": {"start": 0.5, "stop": 0.1, "step": 0.1}}, "sweep.traffic.load.step", "lead from start"),
    ({"traffic.load": {"start": 0.1, "stop": 0.5, "by": 0.1}}, "sweep.traffic.load.by", "unknown range key"),
    ({"traffic.load": {"start": 0, "stop": 1, "num": 3, "log": True}}, "sweep.traffic.load", "start > 0"),
    ({"zip": [{"traffic.load": [0.1, 0.2], "sim.seed": [1]}]}, "sweep.zip[0]", "equal lengths"),
    ({"zip": [{"traffic.load": [0.1, 0.1], "sim.seed": [1, 2]}]}, "sweep.traffic.load", "distinct"),
    ({"repeats": 0}, "sweep.repeats", "integer >= 1"),
    ({"repeats": 2, "sim.seed": [1, 2]}, "sweep.sim.seed", "repeats already sweeps"),
    ({"traffic.load": [0.1], "zip": [{"traffic.load": [0.2]}]}, "sweep.traffic.load", "more than one axis"),
])
def test_bad_axes_name_the_field(sweep, field, words):
    with pytest.raises(ConfigError) as e:
        spec(sweep)
    assert e.value.field == field and words in str(e.value)


def test_a_bad_value_names_the_point_before_anything_runs():
    s = spec({"traffic.load": [0.5, 1.5]})
    with pytest.raises(ConfigError) as e:
        s.configs()
    assert e.value.field == "traffic.load"
    assert "sweep point traffic.load=1.5" in str(e.value) and "(0, 1]" in str(e.value)


def test_unknown_tables_in_a_spec_are_refused():
    with pytest.raises(ConfigError) as e:
        load_spec({"base": TORUS, "sweep": {"traffic.load": [0.1]}, "swep": {}})
    assert e.value.field == "swep"


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml")),
                         ids=lambda p: p.name)
def test_example_specs_resolve_every_point(path):
    s = load_spec(path)
    assert len(s.configs()) == s.size > 1


def test_numpy_axes_are_lists_of_plain_values():
    spec = load_spec({"base": {"topology": {"kind": "torus", "dims": [4, 4]}},
                      "sweep": {"traffic.load": np.linspace(0.1, 0.3, 3), "sim.seed": np.arange(2)}})
    assert spec.to_json() == load_spec({"base": {"topology": {"kind": "torus", "dims": [4, 4]}},
                                        "sweep": {"traffic.load": [0.1, 0.2, 0.3], "sim.seed": [0, 1]}}).to_json()


def test_an_axis_of_values_with_their_own_units_is_not_labelled_in_cycles():
    from fastnet.sweeps.store import _axis_coords

    coords = _axis_coords(load_spec({"base": {"topology": {"kind": "torus", "dims": [4, 4]}},
                                     "sweep": {"links.latency": ["20 ns", "50 ns"], "router.delay": [2, 3]}}))
    assert coords["links.latency"].attrs["units"] == "" and coords["router.delay"].attrs["units"] == "cycles"
