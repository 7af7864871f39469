"""fastnet plot: curves per hue value with labelled units and a legend, seeds averaged, heatmaps per port."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import fastnet
from fastnet.cli import app
from fastnet.errors import ConfigError
from fastnet.plot import figure, open_sweep

LOADS = [0.1, 0.3, 0.5, 0.7]
PATTERNS = ["uniform", "tornado"]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("plot") / "r.zarr"
    fastnet.sweep({"base": {"topology": {"kind": "torus", "dims": [4, 4]},
                            "sim": {"warmup": 200, "measure": 500, "drain": 500}},
                   "sweep": {"traffic.load": LOADS, "traffic.pattern": PATTERNS, "repeats": 2}}, out, workers=1)
    return out


def test_latency_and_throughput_curves_one_per_hue_value_with_units_and_legend(result):
    ds = open_sweep(result)
    fig = figure(ds)  # defaults: x = traffic.load, hue = traffic.pattern, seeds averaged
    lat, thr = fig.axes
    assert lat.get_xlabel() == "offered load [phits/node/cycle]"
    assert lat.get_ylabel() == "mean packet latency [cycles]"
    assert thr.get_ylabel() == "accepted throughput [phits/node/cycle]"
    assert [t.get_text() for t in lat.get_legend().get_texts()] == PATTERNS
    assert lat.get_legend().get_title().get_text() == "traffic.pattern"
    assert [t.get_text() for t in thr.get_legend().get_texts()] == PATTERNS + ["accepted = offered"]
    for line, pattern in zip(lat.get_lines(), PATTERNS):
        want = ds["packet_latency_mean"].sel({"traffic.pattern": pattern}).mean("sim.seed").values
        np.testing.assert_allclose(line.get_ydata(), want)
        np.testing.assert_allclose(line.get_xdata(), LOADS)
    assert "mean of 2 seeds" in fig._suptitle.get_text() and "16 nodes" in fig._suptitle.get_text()


def test_the_title_names_the_swept_values_not_the_base_configs(result):
    """The sweep varies traffic.pattern: the title named the base config's (uniform) whatever was drawn."""
    ds = open_sweep(result)
    assert "uniform/tornado traffic" in figure(ds)._suptitle.get_text()
    assert ", tornado traffic" in figure(ds, sel=["traffic.pattern=tornado"])._suptitle.get_text()


def test_saturated_points_are_left_out_of_latency_but_not_of_throughput(result):
    ds = open_sweep(result).load()
    ds["unstable"].loc[{"traffic.load": 0.7, "traffic.pattern": "tornado"}] = 1
    lat, thr = figure(ds, sel=["traffic.pattern=tornado"]).axes
    assert np.isnan(lat.get_lines()[0].get_ydata()[-1]) and np.isfinite(lat.get_lines()[0].get_ydata()[:-1]).all()
    assert np.isfinite(thr.get_lines()[0].get_ydata()).all()
    assert any("1 saturated point" in t.get_text() for t in lat.texts)


def test_a_result_per_category_draws_a_curve_per_category(result):
    """packets_dropped_by_cause has a drop_cause dimension: one curve per cause (it was refused as a heatmap
    without ports); another swept axis is then fixed with --sel, as for any third axis."""
    import xarray as xr

    ds = open_sweep(result).load()
    causes = ["link", "router", "unroutable"]
    ds["dropped"] = ds["packets_created"].expand_dims(drop_cause=causes) * xr.DataArray([0, 1, 2], dims="drop_cause")
    ds = ds.assign_coords(drop_cause=causes)
    with pytest.raises(ConfigError, match="traffic.pattern"):
        figure(ds, y=["dropped"])
    (ax,) = figure(ds, y=["dropped"], sel=["traffic.pattern=uniform"]).axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == causes
    want = ds["dropped"].sel({"traffic.pattern": "uniform", "drop_cause": "unroutable"}).mean("sim.seed").values
    np.testing.assert_allclose(ax.get_lines()[2].get_ydata(), want)


def test_port_variables_draw_router_by_port_heatmaps(result):
    ds = open_sweep(result)
    fig = figure(ds, y=["port_utilization"], sel=["sim.seed=1"])
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == len(LOADS) * len(PATTERNS)  # columns: loads, rows: patterns
    img = panels[len(LOADS) + 2].images[0].get_array()  # tornado at load 0.5
    util = ds["port_utilization"].sel({"traffic.load": 0.5, "traffic.pattern": "tornado", "sim.seed": 1}).values
    routers = ds["port_router"].values
    assert img.shape == (16, 5)  # 16 routers x (4 torus ports + 1 injection port)
    np.testing.assert_allclose(img[routers, np.arange(len(util)) % 5], util)
    assert fig.axes[-1].get_ylabel() == "port utilisation [phits/cycle]"  # the colorbar


def test_cli_writes_png_and_svg(result, tmp_path):
    for name in ("lat.png", "lat.svg"):
        r = CliRunner().invoke(app, ["plot", str(result), "--x", "traffic.load", "--hue", "traffic.pattern",
                                     "--y", "packet_latency_mean", "-o", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
    assert (tmp_path / "lat.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "lat.svg").read_text()[:1000]


@pytest.mark.parametrize("kwargs, field, words", [
    ({"y": ["latency"]}, "--y", "no variable 'latency'"),
    ({"x": "traffic.load", "hue": "sim.seed"}, "--sel", "axis traffic.pattern has 2 values"),
    ({"x": "load"}, "--x", "must be an axis"),
    ({"sel": ["traffic.load=0.2"]}, "--sel", "no value 0.2"),
    ({"sel": ["traffic.load=0.1", "traffic.load=0.3"]}, "--sel", "not fixed yet"),
    ({"sel": ["port=1"]}, "--sel", "an axis of the sweep"),
    ({"y": ["port_utilization", "packet_latency_mean"]}, "--y", "plot it alone"),
])
def test_bad_plot_requests_say_what_is_allowed(result, kwargs, field, words):
    with pytest.raises(ConfigError) as e:
        figure(open_sweep(result), **kwargs)
    assert e.value.field == field and words in str(e.value)


def test_cli_plot_errors_are_one_line(result, tmp_path):
    r = CliRunner().invoke(app, ["plot", str(result), "-o", str(tmp_path / "x.jpg")])
    assert r.exit_code == 2 and ".png, .svg, .pdf" in r.output and len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(app, ["plot", str(tmp_path / "none.zarr"), "-o", str(tmp_path / "x.png")])
    assert r.exit_code == 2 and "cannot open" in r.output


def test_seeds_can_be_an_axis_of_the_plot_instead_of_averaged(result):
    ds = open_sweep(result)
    fig = figure(ds, x="sim.seed", hue="traffic.load", sel=["traffic.pattern=uniform"])
    lines = fig.axes[0].get_lines()
    assert len(lines) == len(LOADS) and all(list(line.get_xdata()) == [1, 2] for line in lines)
    assert "seeds" not in fig._suptitle.get_text()
    heat = figure(ds, y=["port_utilization"], hue="sim.seed", sel=["traffic.pattern=uniform"])
    assert len([ax for ax in heat.axes if ax.images]) == 2 * len(LOADS)


@pytest.fixture(scope="module")
def occupancy_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("occupancy") / "run.zarr"
    fastnet.run({"topology": {"kind": "torus", "dims": [4, 4]}, "traffic": {"load": 0.6},
                 "sim": {"warmup": 100, "measure": 700, "drain": 700, "occupancy_interval": 20}}, out=out)
    return out


def test_occupancy_heatmap_has_time_along_x_and_ports_by_router_along_y(occupancy_run):
    from fastnet.plot import occupancy_figure, open_result

    ds = open_result(occupancy_run)
    occ = ds["port_occupancy"].values
    fig = occupancy_figure(ds)
    ax = fig.axes[0]
    img = ax.images[0].get_array()
    assert img.shape == (80, len(ds.occupancy_time))  # 16 routers x 5 ports, one column per sample
    np.testing.assert_array_equal(img, occ.T)  # ports are numbered router by router: row = port
    assert ax.get_xlabel() == "cycle" and ax.get_xlim() == (0.0, float(ds.occupancy_time.values[-1]))
    assert ax.get_ylabel() == "router (80 ports, ordered by router)"
    assert fig.axes[-1].get_ylabel() == "port occupancy [phits]"
    net = occupancy_figure(ds, network_only=True).axes[0].images[0].get_array()
    np.testing.assert_array_equal(net, occ[:, ds["port_class"].values != 0].T)


def test_occupancy_heatmap_averages_groups_of_ports_and_samples_read_in_blocks(occupancy_run, monkeypatch):
    import fastnet.plot as plot

    ds = plot.open_result(occupancy_run)
    occ = ds["port_occupancy"].values.astype(float)
    monkeypatch.setattr(plot, "MAX_PORT_ROWS", 7)  # 80 ports -> rows of 12 (the last of 8)
    monkeypatch.setattr(plot, "MAX_TIME_COLUMNS", 10)
    monkeypatch.setattr(plot, "READ_BYTES", 3 * 80 * 2)  # a few samples per read
    fig = plot.occupancy_figure(ds)
    img = fig.axes[0].images[0].get_array()
    per_col = -(-occ.shape[0] // 10)
    assert img.shape == (7, -(-occ.shape[0] // per_col))
    np.testing.assert_allclose(img[0, 0], occ[:per_col, :12].mean())
    np.testing.assert_allclose(img[-1, -1], occ[(img.shape[1] - 1) * per_col:, 72:].mean())
    assert f"mean of 12 ports x {per_col} samples" in fig.axes[-1].get_ylabel()
    fullest = plot.occupancy_figure(ds, reduce="max")  # the fullest port and sample of each cell
    img = fullest.axes[0].images[0].get_array()
    assert img[0, 0] == occ[:per_col, :12].max() and img[-1, -1] == occ[(img.shape[1] - 1) * per_col:, 72:].max()
    assert "max of 12 ports" in fullest.axes[-1].get_ylabel()
    with pytest.raises(ConfigError) as e:
        plot.occupancy_figure(ds, reduce="median")
    assert e.value.field == "--reduce" and "mean, max" in str(e.value)


def test_cli_plots_a_run_store_and_refuses_sweep_options_on_it(occupancy_run, result, tmp_path):
    r = CliRunner().invoke(app, ["plot", str(occupancy_run), "--network-only", "-o", str(tmp_path / "o.png")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for args, field in ((["--x", "traffic.load"], "--x"), (["--y", "port_utilization"], "--y")):
        r = CliRunner().invoke(app, ["plot", str(occupancy_run), *args, "-o", str(tmp_path / "x.png")])
        assert r.exit_code == 2 and r.output.startswith(f"error: {field}"), r.output
    r = CliRunner().invoke(app, ["plot", str(result), "--network-only", "-o", str(tmp_path / "x.png")])
    assert r.exit_code == 2 and r.output.startswith("error: --network-only"), r.output
    r = CliRunner().invoke(app, ["plot", str(result), "--reduce", "max", "-o", str(tmp_path / "x.png")])
    assert r.exit_code == 2 and r.output.startswith("error: --reduce"), r.output
    r = CliRunner().invoke(app, ["plot", str(occupancy_run), "--reduce", "max", "-o", str(tmp_path / "m.png")])
    assert r.exit_code == 0, r.output


def test_a_run_store_without_occupancy_is_refused(tmp_path):
    out = tmp_path / "plain.zarr"
    fastnet.run({"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"warmup": 0, "measure": 100, "drain": 0}},
                out=out)
    r = CliRunner().invoke(app, ["plot", str(out), "-o", str(tmp_path / "x.png")])
    assert r.exit_code == 2 and "sim.occupancy_interval" in r.output and len(r.output.strip().splitlines()) == 1


def test_a_selection_on_a_zipped_coordinate_that_repeats_is_refused_not_taken_at_its_first_point(result):
    ds = open_sweep(result).load().assign_coords({"router.delay": ("traffic.load", [1, 1, 2, 2])})  # a zip follower
    with pytest.raises(ConfigError, match="router.delay = 1 is at 2 points of the axis traffic.load"):
        figure(ds, sel=["router.delay=1"])


def test_a_closed_loop_sweeps_title_names_its_workload_not_the_unused_traffic_pattern(result):
    ds = open_sweep(result).load()
    base = json.loads(ds.attrs["base_config"])
    ds.attrs["base_config"] = json.dumps({**base, "workload": {**base.get("workload", {}), "kind": "graph500"}})
    title = figure(ds)._suptitle.get_text()
    assert "graph500 workload" in title and "traffic" not in title
