"""The zarr store of a sweep: one labelled dataset whose first dimensions are the axes, written point by point.

The parent creates the store (metadata only, every chunk at its fill value) before any point runs; each axis
chunk holds exactly one point, so workers write their points' regions concurrently without locks (xarray's
template + `to_zarr(region=...)` pattern). After a point's region is written, its worker atomically creates the
marker `.done/<index>.json` (write to a temporary name, then `os.replace`). A marker therefore means the region is
complete; a sweep killed at any moment (even SIGKILL) loses at most the points in flight, which `--resume` runs
again, overwriting whatever part of their regions had been written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..errors import ConfigError
from ..results import VARIABLES
from ..store import SWEEP_TITLE, zarr_strings
from ..workloads.build import table_rows
from ..version import __version__
from .spec import Spec, position

DONE = ".done"  # a zarr group (so zarr and xarray ignore it quietly) holding one marker file per finished point
_MARKER = re.compile(r"^(\d+)\.json$")

STATUS_PENDING, STATUS_OK, STATUS_FAILED = 0, 1, 2

# Per-point variables a sweep adds to the metrics of results.VARIABLES: name: (dtype, units, description).
PER_POINT_VARIABLES: dict[str, tuple[str, str, str]] = {
    "status": ("int8", "1", "0: not run yet, 1: finished, 2: failed (see error)"),
    "error": ("str", "", "why the point failed; empty if it did not"),
    "wall_seconds": ("float64", "s", "wall-clock time of the point's run"),
    "nodes": ("int64", "nodes", "compute nodes of the point's topology"),
    "routers": ("int64", "routers", "routers of the point's topology"),
    "ports": ("int64", "ports", "router ports of the point's topology (port_utilization uses the first ones)"),
    "vcs": ("int64", "VCs", "virtual channels per port"),
    "config": ("str", "", "the point's resolved run config (JSON), as fastnet run's attrs['config']"),
}

# Units of swept config keys, for the axis coordinates (and so for plot labels).
AXIS_UNITS: dict[str, str] = {
    "traffic.load": "phits/node/cycle",
    "traffic.packet_phits": "phits",
    "traffic.hotspot_fraction": "1",
    "router.buffer_phits": "phits",
    "router.delay": "cycles",
    "router.credit_delay": "cycles",
    "router.speedup": "1",
    "router.vcs": "VCs",
    "links.latency": "cycles",
    "links.latency_local": "cycles",
    "links.latency_global": "cycles",
    "links.latency_injection": "cycles",
    "links.latency_ejection": "cycles",
    "sim.warmup": "cycles",
    "sim.measure": "cycles",
    "sim.drain": "cycles",
    "topology.p": "nodes/router",
    "topology.a": "routers/group",
    "topology.h": "global links/router",
    "workload.message_bytes": "bytes",
    "workload.query_time_ns": "ns",
    "workload.link_gbps": "Gb/s",
    "workload.compute_cycles": "cycles",
}


@dataclass
class Layout:
    """Everything about the dataset's shape beyond the axes: what a worker needs to write a point's region.

    `fields`: name -> (extra dims, dtype, attrs) for every metric the probes produced plus PER_POINT_VARIABLES;
    `dims`: extra dim -> length (the largest any point needs; shorter values are padded with the fill value);
    `coords`: 1-D coordinates of the extra dims shared by every point: name -> (dim, values, attrs).
    """

    axes: list[str]
    shape: list[int]
    fields: dict[str, tuple[tuple[str, ...], str, dict[str, str]]] = field(default_factory=dict)
    dims: dict[str, int] = field(default_factory=dict)
    coords: dict[str, tuple[str, np.ndarray, dict[str, Any]]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"axes": self.axes, "shape": self.shape, "fields": self.fields, "dims": self.dims},
                          sort_keys=True)

    def position(self, index: int) -> tuple[int, ...]:
        return position(self.shape, index)


def fill_value(dtype: str) -> Any:
    """What a not-yet-run (or failed) point holds: NaN; for integers the type's least value (an unsigned one's
    greatest), decoded as NaN by xarray (not -1: a run's integers may be -1, e.g. task_finish_cycle); ''."""
    if dtype == "str":
        return ""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.nan
    return int(np.iinfo(dt).min if dt.kind == "i" else np.iinfo(dt).max)


def layout_from_probes(spec: Spec, configs: list[dict[str, Any]], probes: list[xr.Dataset]) -> Layout:
    """Fields and extra dims from short runs (one per kind of point); `time` sized by every point's sim."""
    lay = Layout(axes=[a.dim for a in spec.axes], shape=list(spec.shape))
    for ds in probes:
        for name, var in ds.data_vars.items():
            _, units, doc = VARIABLES.get(name, ((), var.attrs.get("units", ""), var.attrs.get("description", "")))
            lay.fields.setdefault(name, (tuple(var.dims), dtype_name(var.dtype),
                                         {"units": units, "description": doc}))
        for dim, n in ds.sizes.items():
            lay.dims[dim] = max(lay.dims.get(dim, 0), n)
    for dim, n in _table_rows(configs).items():
        lay.dims[dim] = max(lay.dims.get(dim, 0), n)
    intervals = {c["sim"]["timeseries"] for c in configs}
    if "time" in lay.dims or len(intervals) > 1:
        if len(intervals) > 1:
            raise ConfigError("sweep", "sim.timeseries must be the same for every point of a sweep "
                              f"(got {sorted(intervals)})")
        (ts,) = intervals
        lay.dims["time"] = max(-(-(c["sim"]["warmup"] + c["sim"]["measure"] + c["sim"]["drain"]) // ts)
                               for c in configs)
        lay.coords["time"] = ("time", np.arange(lay.dims["time"], dtype=np.int64) * ts,
                              {"units": "cycles", "description": "start of each time-series interval"})
    for name in dict.fromkeys(c for ds in probes for c in ds.coords):
        first = next(ds[name] for ds in probes if name in ds.coords)
        if first.dims == (name,):
            if name != "time":
                lay.coords[name] = _dim_coord(name, [ds[name] for ds in probes if name in ds.coords], lay.dims[name])
            continue
        same = all(name in ds.coords and ds[name].sizes == first.sizes and np.array_equal(ds[name], first)
                   for ds in probes)
        if same and first.sizes == {d: lay.dims[d] for d in first.dims} and first.ndim == 1:
            lay.coords[name] = (first.dims[0], first.values, dict(first.attrs))
        else:  # e.g. port_router when the topology is swept: one row per point
            lay.fields[name] = (tuple(first.dims), dtype_name(first.dtype), dict(first.attrs))
    for name, (dtype, units, doc) in PER_POINT_VARIABLES.items():
        lay.fields[name] = ((), dtype, {"units": units, "description": doc})
    return lay


def _dim_coord(name: str, seen: list[xr.DataArray], n: int) -> tuple[str, np.ndarray, dict[str, Any]]:
    """A dim's own coordinate: its labels (call, drop_cause, the first rank of each comm-matrix cell) where every
    probe that has it agrees with the longest, and the longest spans the store's dim; else 0..n-1."""
    longest = max(seen, key=len)
    if all(np.array_equal(c.values, longest.values[:len(c)]) for c in seen):
        if len(longest) == n:
            return name, longest.values, dict(longest.attrs)
        if np.array_equal(longest.values, np.arange(len(longest))):  # task, interval, port: longer for some points
            return name, np.arange(n), dict(longest.attrs)
    return name, np.arange(n), {"description": f"index (the points' own {name} labels differ)"}


def _table_rows(configs: list[dict[str, Any]]) -> dict[str, int]:
    """The longest table any point may fill, by extra dim (a workload's level or wave table; an MPI run's ranks,
    comm-matrix cells, jobs and timeline, from its program lowered once per distinct config): a point's own may
    only be known once it has run, and the store is created before."""
    from ..mpi.build import table_rows as mpi_table_rows
    from ..topology import build_network
    from ..workloads.build import workload_section

    rows: dict[str, int] = {}
    lowered: set[str] = set()
    for c in configs:
        if workload_section(c)["kind"] in ("mpi", "trace"):
            key = json.dumps({k: v for k, v in c.items() if k != "sim"}, sort_keys=True, default=str)
            if key in lowered:
                continue
            lowered.add(key)
            got = mpi_table_rows(c, build_network(c))
        else:
            got = table_rows(c)
        for dim, n in got.items():
            rows[dim] = max(rows.get(dim, 0), n)
    return rows


def dtype_name(dt: np.dtype) -> str:
    return "str" if dt.kind in "UOT" else dt.name


def _dtype(dtype: str) -> Any:
    return np.dtypes.StringDType() if dtype == "str" else np.dtype(dtype)


def _axis_coords(spec: Spec) -> dict[str, Any]:
    coords: dict[str, Any] = {}
    for a in spec.axes:
        for key, values in zip(a.keys, a.values):
            # a time or bandwidth given with its unit ("20 ns", "2 GB/s") is text, not cycles
            units = "" if any(isinstance(v, str) for v in values) else AXIS_UNITS.get(key, "")
            attrs = {"units": units, "description": f"swept config key {key}"}
            coords[key] = xr.Variable((a.dim,), coordinate(values), attrs=attrs)
    return coords


def coordinate(values: tuple[Any, ...]) -> np.ndarray:
    """Axis values as a coordinate: numbers, booleans or strings; anything else (lists, tables) as JSON text."""
    if all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.float64)
    if all(isinstance(v, str) for v in values):
        return np.array(values, dtype=np.dtypes.StringDType())
    return np.array([json.dumps(v) for v in values], dtype=np.dtypes.StringDType())


def create(path: Path, spec: Spec, lay: Layout, base_config: dict[str, Any]) -> None:
    """Write the store's metadata (no chunks: every point reads as its fill value) under a temporary name, then
    rename it into place, so that a half-created store never exists at `path`."""
    import dask.array as da

    dims = tuple(lay.axes)
    data_vars, encoding = {}, {}
    for name, (extra, dtype, attrs) in lay.fields.items():
        shape = tuple(lay.shape) + tuple(lay.dims[d] for d in extra)
        chunks = (1,) * len(dims) + tuple(lay.dims[d] for d in extra)  # one point per chunk: no write conflicts
        data_vars[name] = xr.Variable(dims + extra, da.full(shape, fill_value(dtype), dtype=_dtype(dtype),
                                                            chunks=chunks), attrs=attrs)
        encoding[name] = {"chunks": chunks}
        if dtype != "str" and np.dtype(dtype).kind in "iu":
            encoding[name].update(_FillValue=fill_value(dtype), fill_value=fill_value(dtype))
    data_vars["status"].attrs.update(flag_values=[STATUS_PENDING, STATUS_OK, STATUS_FAILED],
                                     flag_meanings="pending finished failed")
    encoding["status"] = {"chunks": (1,) * len(dims)}  # 0 = pending is a value, not a missing one
    coords = _axis_coords(spec)
    for name, (dim, values, cattrs) in lay.coords.items():
        coords[name] = xr.Variable((dim,), zarr_strings(values), attrs=cattrs)
    attrs = {
        "title": SWEEP_TITLE,
        "fastnet_version": __version__,
        "sweep_spec": spec.to_json(),
        "sweep_layout": lay.to_json(),
        "base_config": json.dumps(base_config, sort_keys=True),
        "points": int(np.prod(lay.shape)),
    }
    ds = xr.Dataset(data_vars, coords=coords, attrs=attrs)
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with warnings.catch_warnings():  # consolidated metadata: not in the zarr v3 spec yet, read by xarray
            warnings.filterwarnings("ignore", message="Consolidated metadata", category=UserWarning)
            ds.to_zarr(tmp, mode="w-", zarr_format=3, consolidated=True, compute=False, encoding=encoding)
        import zarr

        zarr.open_group(tmp / DONE, mode="w-", zarr_format=3,
                        attributes={"description": "fastnet sweep: one marker file per finished point"})
        try:
            tmp.rename(path)
        except OSError:
            raise ConfigError("--out", f"{path} appeared while this sweep created it: is another sweep "
                              "writing there?") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def read_attrs(path: Path) -> dict[str, Any]:
    import zarr

    try:
        return dict(zarr.open_group(path, mode="r").attrs)
    except Exception as e:  # noqa: BLE001 - any failure to read it means the same thing to the user
        raise ConfigError("--out", f"{path} is not a fastnet sweep store ({type(e).__name__})") from None


def point_dataset(lay: Layout, run: xr.Dataset | None, error: str = "") -> xr.Dataset:
    """The region of one point: the run's values (padded to the store's extra dims), or fill values and the
    error text when the point failed."""
    lead = (1,) * len(lay.axes)
    meta: dict[str, Any] = {"status": STATUS_FAILED, "error": error}
    if run is not None:
        meta = {k: run.attrs[k] for k in ("nodes", "routers", "ports", "vcs", "config", "wall_seconds")}
        meta["status"] = STATUS_OK
    data_vars = {}
    for name, (extra, dtype, _) in lay.fields.items():
        shape = tuple(lay.dims[d] for d in extra)
        out = np.full(shape, fill_value(dtype), dtype=_dtype(dtype))
        if name in meta:
            out[()] = meta[name]
        elif run is not None and name in run.variables:
            v = run[name].values
            out[tuple(slice(0, n) for n in v.shape)] = v
        data_vars[name] = (tuple(lay.axes) + extra, out.reshape(lead + shape))
    return xr.Dataset(data_vars)


def write_point(path: str | Path, lay: Layout, index: int, ds: xr.Dataset, marker: dict[str, Any] | None) -> None:
    """Write one point's region; then, if `marker` is given, mark the point finished (atomically)."""
    pos = lay.position(index)
    region = {d: slice(i, i + 1) for d, i in zip(lay.axes, pos)}
    ds.to_zarr(path, region=region, zarr_format=3, consolidated=False)
    if marker is not None:
        done = Path(path) / DONE
        tmp = done / f".{index}.{uuid.uuid4().hex[:8]}.tmp"
        tmp.write_text(json.dumps({"index": index, "position": list(pos), **marker}))
        os.replace(tmp, done / f"{index}.json")


def markers(path: str | Path) -> dict[int, dict[str, Any]]:
    """index -> marker of every finished point."""
    done = Path(path) / DONE
    out = {}
    for entry in os.scandir(done):
        m = _MARKER.match(entry.name)
        if m:
            out[int(m.group(1))] = json.loads(Path(entry.path).read_text())
    return out


def forget(path: str | Path, index: int) -> None:
    """Drop a point's marker so that it runs again (--retry-failed)."""
    (Path(path) / DONE / f"{index}.json").unlink(missing_ok=True)
