"""`fastnet plot`: figures from a sweep's dataset (fastnet.sweep / `fastnet sweep`) or from one run's store.

Scalar metrics become line plots over one axis (`x`), one curve per value of another (`hue`), with the sweep's
seeds (`sim.seed`) averaged and their spread shaded. Per-port metrics (any variable with a `port` dimension, and a
`vc` dimension when runs record one) become heatmaps of router x port, one panel per x value, as in seed 004's
Fig 8. A run's store (`fastnet run --out`) draws one of:
- `port_occupancy` (sim.occupancy_interval): a heatmap of port occupancy over time, ports ordered by router;
- `timeline` (an MPI run): a Gantt chart of each rank's computation and blocking calls over time;
- `comm_matrix_bytes` (an MPI run): a heatmap of the bytes each rank sent each other rank.
Every axis label carries its units; PNG, SVG or PDF by the file's suffix.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from .errors import ConfigError

FORMATS = (".png", ".svg", ".pdf")
DEFAULT_Y = ("packet_latency_mean", "accepted_phits_per_node_cycle")
SEED = "sim.seed"
MAX_PANELS = 6  # heatmap columns; more x values are thinned evenly
OCCUPANCY = "port_occupancy"
MAX_PORT_ROWS = 1500  # rows of the occupancy heatmap: more ports are averaged in router-ordered groups
MAX_TIME_COLUMNS = 2000  # its columns: more samples are averaged in consecutive groups
READ_BYTES = 64 * 2**20  # occupancy read per block of samples
REDUCTIONS = ("mean", "max")  # how the ports (and samples) drawn in one cell of the heatmap combine
TIMELINE, COMMUNICATION_MATRIX = "timeline", "comm_matrix_bytes"
RUN_FIGURES = (OCCUPANCY, TIMELINE, COMMUNICATION_MATRIX)  # what a run's store can draw (--y)
MAX_GANTT_BARS = 128  # ranks drawn as bars; more ranks are drawn as an image of rank groups x time
# the Gantt chart's colours: computation, then the blocking calls by what the rank waits for
ACTIVITIES = (("compute", ("compute",), "0.75"),
              ("send", ("send", "isend"), "tab:orange"),
              ("receive / wait", ("recv", "irecv", "wait", "waitall", "sendrecv"), "tab:blue"),
              ("collective", ("barrier", "bcast", "reduce", "allreduce", "gather", "allgather", "scatter",
                              "alltoall", "alltoallv"), "tab:red"))

LABELS = {
    "traffic.load": "offered load",
    "accepted_phits_per_node_cycle": "accepted throughput",
    "offered_phits_per_node_cycle": "offered throughput",
    "injected_phits_per_node_cycle": "injected throughput",
    "packet_latency_mean": "mean packet latency",
    "packet_latency_p50": "median packet latency",
    "packet_latency_p99": "99th-percentile packet latency",
    "network_latency_mean": "mean network latency",
    "routing.algorithm": "routing",
    "port_utilization": "port utilisation",
    "port_occupancy": "port occupancy",
}


def label(da: xr.DataArray | xr.Variable, name: str) -> str:
    units = da.attrs.get("units", "")
    text = LABELS.get(name, name.replace("_", " "))
    return f"{text} [{units}]" if units and units != "1" else text


def open_sweep(path: str | Path) -> xr.Dataset:
    path = Path(path)
    try:
        ds = xr.open_zarr(path, chunks=None)
    except Exception as e:  # noqa: BLE001 - any failure to open means the same to the user
        raise ConfigError("RESULT", f"cannot open {path} as a zarr dataset ({type(e).__name__})") from None
    if "sweep_layout" not in ds.attrs:
        raise ConfigError("RESULT", f"{path} is not a fastnet sweep store (no sweep_layout attribute)")
    return ds


def open_result(path: str | Path) -> xr.Dataset:
    """A sweep's store, or a run's store with `port_occupancy` or an MPI timeline; ConfigError(RESULT) for anything
    else."""
    path = Path(path)
    try:
        ds = xr.open_zarr(path, chunks=None)  # lazy: the occupancy array is read a block of rows at a time
    except Exception as e:  # noqa: BLE001 - any failure to open means the same to the user
        raise ConfigError("RESULT", f"cannot open {path} as a zarr dataset ({type(e).__name__})") from None
    if "sweep_layout" not in ds.attrs and OCCUPANCY not in ds and COMMUNICATION_MATRIX not in ds:
        raise ConfigError("RESULT", f"{path} is neither a sweep store nor a run store with {OCCUPANCY} (record it "
                          "with fastnet run --out PATH --set sim.occupancy_interval=N) or an MPI run's timeline")
    return ds


def axes_of(ds: xr.Dataset) -> list[str]:
    return json.loads(ds.attrs["sweep_layout"])["axes"]


def plot(ds: xr.Dataset, output: str | Path, network_only: bool = False, reduce: str | None = None,
         **kwargs: Any) -> Path:
    """Draw `figure(ds, **kwargs)` (a sweep), or for a run's store the figure its `y` names (RUN_FIGURES; default:
    the occupancy if recorded, else the MPI timeline) into `output` (.png, .svg or .pdf)."""
    output = Path(output)
    if output.suffix.lower() not in FORMATS:
        raise ConfigError("-o", f"must end in one of {', '.join(FORMATS)} (got {output.name})")
    if "sweep_layout" in ds.attrs:
        for flag, given in (("--network-only", network_only), ("--reduce", reduce)):
            if given:
                raise ConfigError(flag, "applies to a run's occupancy heatmap, not to a sweep")
        fig = figure(ds, **kwargs)
    else:
        for flag in ("x", "hue", "sel"):
            if kwargs.get(flag):
                raise ConfigError(f"--{flag}", "applies to a sweep's store; this is one run's store, drawn as "
                                  "its port occupancy heatmap")
        ys = list(kwargs.get("y") or ()) or [OCCUPANCY if OCCUPANCY in ds else TIMELINE]
        if len(ys) > 1 or ys[0] not in RUN_FIGURES:
            raise ConfigError("--y", f"a run's store draws one of {', '.join(RUN_FIGURES)} (got {', '.join(ys)})")
        if ys[0] == OCCUPANCY:
            fig = occupancy_figure(ds, network_only, reduce or "mean")
        else:
            for flag, given in (("--network-only", network_only), ("--reduce", reduce)):
                if given:
                    raise ConfigError(flag, "applies to the occupancy heatmap")
            fig = timeline_figure(ds) if ys[0] == TIMELINE else comm_matrix_figure(ds)
    fig.savefig(output, dpi=150, bbox_inches="tight")
    return output


def figure(ds: xr.Dataset, x: str | None = None, y: list[str] | tuple[str, ...] = (), hue: str | None = None,
           sel: list[str] | tuple[str, ...] = ()) -> Any:
    """`y` (default: latency and throughput) against axis `x`, one curve per `hue` value (default: the next
    varying axis); `sel` fixes other axes (AXIS=VALUE). A per-port `y` gives heatmaps instead."""
    ds = _select(ds, sel)
    axes = [a for a in axes_of(ds) if a in ds.dims]
    category = _category(ds, axes, y)
    if category:  # a result per category (packets_dropped_by_cause): one curve per category, unless --hue is set
        axes.append(category)
        hue = hue or (category if x != category else None)
    x = x or _default_x(ds, axes)
    _check_axis(axes, x, "--x")
    if hue is None:
        hue = next((a for a in axes if a not in (x, SEED) and ds.sizes[a] > 1), None)
    elif hue:
        _check_axis(axes, hue, "--hue")
        if hue == x:
            raise ConfigError("--hue", f"must differ from --x ({x})")
    others = [a for a in axes if a not in (x, hue, SEED) and ds.sizes[a] > 1]
    if others:
        a = others[0]
        raise ConfigError("--sel", f"axis {a} has {ds.sizes[a]} values; fix one with --sel {a}=VALUE "
                          f"({_values(ds, a)}) or plot it as --x or --hue")
    ys = list(y) or [v for v in DEFAULT_Y if v in ds]
    for name in ys:
        if name not in ds.data_vars:
            raise ConfigError("--y", f"no variable {name!r}; choose from " + ", ".join(_plottable(ds)))
    extra = [name for name in ys if set(ds[name].dims) - set(axes)]
    if extra and len(ys) > 1:
        raise ConfigError("--y", f"{extra[0]} is drawn as heatmaps: plot it alone")
    return _heatmaps(ds, axes, x, ys[0], hue) if extra else _lines(ds, axes, x, ys, hue)


def _select(ds: xr.Dataset, sel: list[str] | tuple[str, ...]) -> xr.Dataset:
    for item in sel:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key not in ds.coords or ds[key].ndim != 1 or ds[key].dims[0] not in axes_of(ds):
            raise ConfigError("--sel", f"expected AXIS=VALUE with an axis of the sweep not fixed yet, got {item!r}")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        coord = ds[key]
        (dim,) = coord.dims
        hits = np.flatnonzero(coord.values == (json.dumps(value) if isinstance(value, list) else value))
        if not len(hits):
            raise ConfigError("--sel", f"{key} has no value {value!r} ({_values(ds, key)})")
        if len(hits) > 1:  # a zip's follower may repeat a value
            raise ConfigError("--sel", f"{key} = {value!r} is at {len(hits)} points of the axis {dim}; select on "
                              f"{dim} instead")
        ds = ds.isel({dim: int(hits[0])})
    return ds


def _values(ds: xr.Dataset, key: str) -> str:
    vals = [str(v) for v in ds[key].values[:8]]
    return "values: " + ", ".join(vals) + (", ..." if ds[key].size > 8 else "")


def _default_x(ds: xr.Dataset, axes: list[str]) -> str:
    varying = [a for a in axes if ds.sizes[a] > 1 and a != SEED]
    numeric = [a for a in varying if ds[a].dtype.kind in "iuf"]
    for pick in ("traffic.load", *numeric, *varying, *axes):
        if pick in axes:
            return pick
    raise ConfigError("--x", "the dataset has no axis left to plot against")


def _check_axis(axes: list[str], name: str, flag: str) -> None:
    if name not in axes:
        raise ConfigError(flag, f"must be an axis of the sweep: {', '.join(axes) or 'none left after --sel'}"
                          f" (got {name!r})")


def _plottable(ds: xr.Dataset) -> list[str]:
    return [n for n, v in ds.data_vars.items() if v.dtype.kind in "iuf" and n != "status"]


def _seed_reduce(da: xr.DataArray, x: str) -> tuple[xr.DataArray, xr.DataArray | None, xr.DataArray | None]:
    """Mean, min and max over the seeds (unless they are the x axis; a hue has been selected already)."""
    if SEED not in da.dims or SEED == x:
        return da, None, None
    if da.sizes[SEED] == 1:
        return da.isel({SEED: 0}), None, None
    return da.mean(SEED), da.min(SEED), da.max(SEED)


def _lines(ds: xr.Dataset, axes: list[str], x: str, ys: list[str], hue: str | None) -> Any:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(5.2 * len(ys), 4.2), layout="constrained")
    squeeze = {a: 0 for a in axes if a not in (x, hue, SEED)}
    hue_values = list(ds[hue].values) if hue else [None]
    xv = ds[x].values
    unstable = ds["unstable"].isel(squeeze) if "unstable" in ds else None
    for k, name in enumerate(ys):
        ax = fig.add_subplot(1, len(ys), k + 1)
        var = ds[name].isel(squeeze).astype(float)
        hidden = 0
        if unstable is not None and var.attrs.get("units") == "cycles":
            # past saturation a latency measures the drain limit, not the network: leave those points out
            sat = unstable.fillna(0) > 0
            hidden = int(sat.any(SEED).sum()) if SEED in sat.dims and SEED not in (x, hue) else int(sat.sum())
            var = var.where(~sat)
        for j, h in enumerate(hue_values):
            line = var.isel({hue: j}) if hue else var
            mean, lo, hi = _seed_reduce(line, x)
            text = str(h) if hue else None
            (l,) = ax.plot(xv, mean.values, marker="o", ms=4, lw=1.6, label=text)
            if lo is not None:
                ax.fill_between(xv, lo.values, hi.values, color=l.get_color(), alpha=0.2, lw=0)
        if name == "accepted_phits_per_node_cycle" and x == "traffic.load":
            lim = [float(np.nanmin(xv)), float(np.nanmax(xv))]
            ax.plot(lim, lim, ls=":", color="0.5", lw=1, label="accepted = offered")
        ax.set_xlabel(label(ds[x], x))
        ax.set_ylabel(label(ds[name], name))
        if ds[x].dtype.kind in "iu":
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, alpha=0.3)
        if hidden:
            ax.text(0.02, 0.98, f"{hidden} saturated point(s) not shown", transform=ax.transAxes, va="top",
                    fontsize=8, color="0.35")
        if hue or ax.get_legend_handles_labels()[1]:
            ax.legend(title=label(ds[hue], hue) if hue else None, fontsize=8, title_fontsize=8)
    n = _seeds_averaged(ds, x, hue)
    fig.suptitle(_title(ds, f"mean of {n} seeds (band: min-max)" if n > 1 else ""), fontsize=10)
    return fig


def _seeds_averaged(ds: xr.Dataset, x: str, hue: str | None) -> int:
    return ds.sizes.get(SEED, 1) if SEED not in (x, hue) else 1


def _title(ds: xr.Dataset, seeds: str = "") -> str:
    base = json.loads(ds.attrs.get("base_config", "{}"))
    parts = []
    if base:
        parts.append(_swept(ds, "topology.kind", base["topology"]["kind"]))
    if "nodes" in ds and np.isfinite(ds["nodes"].values).any():
        n = np.unique(ds["nodes"].values[np.isfinite(ds["nodes"].values)])
        parts.append(f"{int(n[0])} nodes" if len(n) == 1 else f"{int(n.min())}-{int(n.max())} nodes")
    if base:
        kind = _swept(ds, "workload.kind", base.get("workload", {}).get("kind", "open_loop"))
        if kind == "open_loop":
            parts.append(f"{_swept(ds, 'traffic.pattern', base['traffic']['pattern'])} traffic")
        else:  # a closed-loop workload: its own traffic
            parts.append(f"{kind} workload")
    return ", ".join(parts + ([seeds] if seeds else []))


def _category(ds: xr.Dataset, axes: list[str], y: list[str] | tuple[str, ...]) -> str | None:
    """The dimension of a lone `y` that is neither a sweep axis nor a port (drop_cause), if it has one."""
    if len(y) != 1 or y[0] not in ds.data_vars:
        return None
    extra = [d for d in ds[y[0]].dims if d not in axes]
    return extra[0] if len(extra) == 1 and extra[0] != "port" else None


def _swept(ds: xr.Dataset, key: str, base: str) -> str:
    """A key's value for the title: the base config's, or where the sweep varies it, the values left (one after
    --sel)."""
    if key not in ds.coords:
        return base
    return "/".join(dict.fromkeys(str(v) for v in np.asarray(ds[key].values).ravel()))


def _router_matrix(values: np.ndarray, port_router: np.ndarray) -> np.ndarray:
    """Per-port values as a router x (port of that router) matrix; ports are numbered router by router."""
    ok = port_router >= 0
    pr = port_router[ok].astype(np.int64)
    first = np.searchsorted(pr, pr, side="left")
    local = np.arange(len(pr)) - first
    m = np.full((int(pr.max()) + 1, int(local.max()) + 1), np.nan)
    m[pr, local] = values[ok]
    return m


def _heatmaps(ds: xr.Dataset, axes: list[str], x: str, name: str, hue: str | None) -> Any:
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    var = ds[name].astype(float)
    extra = [d for d in var.dims if d not in axes]
    if "port" not in extra:
        raise ConfigError("--y", f"{name} has dims {extra}; heatmaps need a port dimension")
    rows_dim = next((d for d in extra if d != "port"), None)  # e.g. vc: one row of panels per VC
    if rows_dim and hue:
        raise ConfigError("--hue", f"{name} already gives one row per {rows_dim}; fix {hue} with --sel")
    squeeze = {a: 0 for a in axes if a not in (x, hue, SEED)}
    var = var.isel(squeeze)
    if hue != SEED:
        var = _seed_reduce(var, x)[0]
    pr = ds["port_router"]
    pr = pr.isel({a: 0 for a in axes if a in pr.dims and a not in (x, hue)})  # seeds share a topology
    cols = np.unique(np.linspace(0, ds.sizes[x] - 1, min(MAX_PANELS, ds.sizes[x])).round().astype(int))
    rows = list(range(ds.sizes[rows_dim])) if rows_dim else list(range(ds.sizes[hue])) if hue else [0]
    fig = Figure(figsize=(2.6 * len(cols) + 1.2, 2.6 * len(rows) + 0.6), layout="constrained")
    vmax = float(np.nanmax(var.values)) if np.isfinite(var.values).any() else 1.0
    image = None
    for r, row in enumerate(rows):
        for c, col in enumerate(cols):
            ax = fig.add_subplot(len(rows), len(cols), r * len(cols) + c + 1)
            sel = {x: col, **({rows_dim: row} if rows_dim else {hue: row} if hue else {})}
            v = var.isel(sel).values
            p = pr.isel({k: i for k, i in sel.items() if k in pr.dims}).values
            image = ax.imshow(_router_matrix(v, np.nan_to_num(p, nan=-1)), aspect="auto", origin="lower",
                              interpolation="nearest", cmap="viridis", vmin=0, vmax=vmax)
            head = f"{x} = {ds[x].values[col]:g}" if ds[x].dtype.kind in "iuf" else f"{x} = {ds[x].values[col]}"
            if rows_dim:
                head += f"\n{rows_dim} {row}"
            elif hue:
                head += f"\n{hue} = {ds[hue].values[row]}"
            ax.set_title(head, fontsize=8)
            ax.tick_params(labelsize=7)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if r == len(rows) - 1:
                ax.set_xlabel("port of router", fontsize=8)
            if c == 0:
                ax.set_ylabel("router", fontsize=8)
    fig.colorbar(image, ax=fig.axes, label=label(ds[name], name), shrink=0.9)
    n = _seeds_averaged(ds, x, hue)
    fig.suptitle(_title(ds, f"mean of {n} seeds" if n > 1 else "") + f"; {LABELS.get(name, name)} per port",
                 fontsize=10)
    return fig


def occupancy_figure(ds: xr.Dataset, network_only: bool = False, reduce: str = "mean") -> Any:
    """Heatmap of `port_occupancy(occupancy_time, port)`: time along x, ports along y ordered by router (router 0
    at the bottom); `network_only` leaves out the injection ports. A network with more than MAX_PORT_ROWS ports
    shows the mean (`reduce="max"`: the fullest) of each run of consecutive ports, and more than MAX_TIME_COLUMNS
    samples likewise, so a 14-million-port run still draws from a bounded image, read a block of samples at a
    time."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    if OCCUPANCY not in ds:
        raise ConfigError("RESULT", f"no {OCCUPANCY} variable (record it with --set sim.occupancy_interval=N)")
    if reduce not in REDUCTIONS:
        raise ConfigError("--reduce", f"must be one of {', '.join(REDUCTIONS)} (got {reduce!r})")
    var = ds[OCCUPANCY]
    times = ds[var.dims[0]].values
    if len(times) == 0:
        raise ConfigError("RESULT", f"{OCCUPANCY} has no samples: the run ended before its first sampling cycle")
    router = ds["port_router"].values
    keep = np.flatnonzero(ds["port_class"].values != 0) if network_only else np.arange(len(router))
    if not len(keep):
        raise ConfigError("--network-only", "the network has no router-to-router ports")
    order = keep[np.argsort(router[keep], kind="stable")]  # ports are numbered router by router already
    contiguous = bool(np.array_equal(order, np.arange(order[0], order[0] + len(order))))
    per_row = -(-len(order) // MAX_PORT_ROWS)
    starts = np.arange(0, len(order), per_row)
    per_col = -(-len(times) // MAX_TIME_COLUMNS)
    image = np.empty((len(starts), -(-len(times) // per_col)))
    step = max(per_col, READ_BYTES // (var.shape[1] * var.dtype.itemsize) // per_col * per_col)
    for i in range(0, len(times), step):
        block = var[i:i + step].values
        block = block[:, order[0]:order[-1] + 1] if contiguous else block[:, order]
        ports = _reduce_groups(block, starts, 1, reduce)
        cols = np.arange(0, len(ports), per_col)
        image[:, i // per_col:i // per_col + len(cols)] = _reduce_groups(ports, cols, 0, reduce).T
    fig = Figure(figsize=(8.5, 5.2), layout="constrained")
    ax = fig.add_subplot()
    interval = int(var.attrs.get("interval", times[1] - times[0] if len(times) > 1 else times[0]))
    # a column spans the intervals ending at its sampling cycles
    x0 = float(times[0] - interval)
    extent = (x0, x0 + image.shape[1] * per_col * interval, 0, len(starts))
    shown = ax.imshow(image, aspect="auto", origin="lower", interpolation="nearest", cmap="viridis", vmin=0,
                      extent=extent)
    first_router = router[order[starts]]  # router of each row's first port, nondecreasing
    shown_routers = [int(r) for r in MaxNLocator(nbins=8, integer=True).tick_values(first_router[0],
                                                                                  first_router[-1])
                     if first_router[0] <= r <= first_router[-1]]
    ax.set_yticks(np.searchsorted(first_router, shown_routers), [str(r) for r in shown_routers])
    ax.set_xlabel("cycle")
    kind = "network ports" if network_only else "ports"
    ax.set_ylabel(f"router ({len(order):,} {kind}, ordered by router)")
    what = label(var, OCCUPANCY)
    if per_row > 1 or per_col > 1:
        what += f"\n{reduce} of " + " x ".join(p for p in (f"{per_row} ports" if per_row > 1 else "",
                                                            f"{per_col} samples" if per_col > 1 else "") if p)
    fig.colorbar(shown, ax=ax, label=what)
    ax.set_title(_run_title(ds, interval), fontsize=9)
    return fig


def _mpi_store(ds: xr.Dataset, what: str) -> None:
    if COMMUNICATION_MATRIX not in ds:
        raise ConfigError("RESULT", f"no MPI results: {what} is drawn from an MPI run's store (workload.kind = "
                          "\"mpi\" or \"trace\", fastnet run --out PATH)")


def timeline_figure(ds: xr.Dataset) -> Any:
    """Gantt chart of an MPI run: one bar per rank (rank 0 at the top) along time, coloured by what the rank did
    (ACTIVITIES); blank where it ran between calls or in calls that did not block. More than MAX_GANTT_BARS ranks
    become an image of consecutive rank groups x MAX_TIME_COLUMNS time bins, each cell the activity of the
    group's first rank at the bin's middle."""
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    _mpi_store(ds, "the timeline")
    calls = [str(c) for c in ds["call"].values]
    activity = np.full(len(calls), -1)
    for i, (_, members, _) in enumerate(ACTIVITIES):
        activity[[calls.index(c) for c in members if c in calls]] = i
    rank, start, end = (ds[f"timeline_{k}"].values for k in ("rank", "start", "end"))
    act = activity[ds["timeline_call"].values]
    n_ranks = ds.sizes["task"]
    span = max(int(ds["execution_cycles"]), int(end.max()) if len(end) else 1, 1)
    fig = Figure(figsize=(8.5, 0.8 + min(n_ranks, 40) * 0.12 + 2.2), layout="constrained")
    ax = fig.add_subplot()
    colours = [c for _, _, c in ACTIVITIES]
    if n_ranks <= MAX_GANTT_BARS:  # every interval one rectangle, of its rank's row, in one collection
        keep = act >= 0
        x0, x1, y = start[keep], end[keep], rank[keep]
        verts = np.stack([np.column_stack([x0, y - 0.4]), np.column_stack([x0, y + 0.4]),
                          np.column_stack([x1, y + 0.4]), np.column_stack([x1, y - 0.4])], axis=1)
        ax.add_collection(PolyCollection(verts, facecolors=[colours[a] for a in act[keep]], linewidths=0))
        ax.set_ylim(n_ranks - 0.5, -0.5)
        ax.set_ylabel("rank")
    else:
        per_row = -(-n_ranks // MAX_GANTT_BARS)
        cols = np.minimum(MAX_TIME_COLUMNS, span)
        image = np.full((-(-n_ranks // per_row), cols), -1)
        middles = (np.arange(cols) + 0.5) * span / cols
        first = rank % per_row == 0
        for r, a, s0, s1 in zip(rank[first] // per_row, act[first], np.searchsorted(middles, start[first]),
                                np.searchsorted(middles, end[first])):
            image[r, s0:s1] = a
        shown = np.ma.masked_less(image, 0)
        ax.imshow(shown, aspect="auto", interpolation="nearest", cmap=ListedColormap(colours), vmin=0,
                  vmax=len(colours) - 1, extent=(0, span, image.shape[0] * per_row, 0))
        ax.set_ylabel(f"rank (every {per_row}th drawn)")
    ax.set_xlim(0, span)
    ax.set_xlabel("cycle")
    ax.legend(handles=[Patch(color=c, label=name) for name, _, c in ACTIVITIES], loc="upper center",
              bbox_to_anchor=(0.5, -0.12), ncol=len(ACTIVITIES), fontsize=8, frameon=False)
    title = f"{n_ranks:,} ranks, {span:,} cycles ({span * float(ds.attrs.get('cycle_ns', 0)) / 1e3:,.1f} us)"
    if ds.attrs.get("timeline_dropped"):
        title += f"; {ds.attrs['timeline_dropped']:,} later intervals not kept ([mpi] timeline_intervals)"
    ax.set_title(f"{_mpi_title(ds)}\n{title}", fontsize=9)
    return fig


def comm_matrix_figure(ds: xr.Dataset) -> Any:
    """Heatmap of comm_matrix_bytes: sender along y, receiver along x, bytes on a log colour scale (blank: none)."""
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    _mpi_store(ds, "the communication matrix")
    m = ds[COMMUNICATION_MATRIX].values.astype(np.float64)
    per_cell = int(ds.attrs.get("comm_matrix_ranks_per_cell", 1))
    n = ds.sizes["task"]
    fig = Figure(figsize=(6.4, 5.4), layout="constrained")
    ax = fig.add_subplot()
    shown = np.ma.masked_equal(m, 0)
    positive = m[m > 0]
    norm = LogNorm(vmin=positive.min(), vmax=positive.max()) if len(positive) else None
    image = ax.imshow(shown, origin="upper", interpolation="nearest", cmap="viridis", norm=norm,
                      extent=(-0.5 * per_cell, m.shape[1] * per_cell - 0.5 * per_cell,
                              m.shape[0] * per_cell - 0.5 * per_cell, -0.5 * per_cell))
    ax.set_xlabel("receiving rank")
    ax.set_ylabel("sending rank")
    fig.colorbar(image, ax=ax, label="payload bytes" + (f" (cells of {per_cell} ranks)" if per_cell > 1 else ""))
    ax.set_title(f"{_mpi_title(ds)}\n{n:,} ranks, {int(ds['bytes']):,} bytes in {int(ds['messages']):,} messages",
                 fontsize=9)
    return fig


def _mpi_title(ds: xr.Dataset) -> str:
    what = ds.attrs.get("trace") or f"program {ds.attrs.get('mpi_program', '?')}"
    return f"{Path(str(what)).name} on {ds.attrs.get('topology', '')} ({ds.attrs.get('nodes', '?')} nodes)"


def _reduce_groups(a: np.ndarray, starts: np.ndarray, axis: int, reduce: str) -> np.ndarray:
    """Mean or max of `a` over the groups of consecutive rows (axis 0) or columns (axis 1) beginning at starts."""
    if reduce == "max":
        return np.maximum.reduceat(a, starts, axis=axis).astype(np.float64)
    sizes = np.diff(np.append(starts, a.shape[axis]))
    return np.add.reduceat(a, starts, axis=axis, dtype=np.float64) / (sizes if axis == 1 else sizes[:, None])


def _run_title(ds: xr.Dataset, interval: int) -> str:
    cfg = json.loads(ds.attrs.get("config", "{}"))
    parts = [f"{ds.attrs.get('topology', '')}: {ds.attrs.get('routers', '?')} routers, "
             f"{ds.attrs.get('nodes', '?')} nodes"]
    if cfg:
        parts.append(f"{cfg['routing']['algorithm']} routing, {cfg['traffic']['pattern']} at "
                     f"{cfg['traffic']['load']:g} phits/node/cycle")
    parts.append(f"sampled every {interval} cycles")
    return "; ".join(parts)
