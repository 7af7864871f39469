"""Sweep specs: a base run config and the axes that vary it, expanded into the points of a grid.

A spec is TOML (or the same structure as a dict)::

    base = "dragonfly.toml"              # a run config file, relative to the spec; or a [base] table
    [sweep]
    "routing.algorithm" = ["min", "val"]  # an axis: a dotted config key and its values
    traffic.load = {start = 0.05, stop = 0.8, step = 0.05}   # a range (stop included when on the grid)
    router.buffer_phits = {start = 16, stop = 256, num = 5, log = true}   # log-spaced
    repeats = 3                          # the innermost axis sim.seed = base seed + 0, 1, 2
    [[sweep.zip]]                        # keys that vary together: one axis, named after the first key
    topology.a = [4, 8]
    topology.h = [2, 4]

Each axis is a dimension of the result named after its (first) dotted key; the points are the Cartesian product
of the axes, in row-major order. Every point's config is `merge(base, values)` resolved like `fastnet run`'s,
so a bad key or value is reported before anything runs.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from .. import config as _config
from ..errors import ConfigError, FastnetError

RANGE_KEYS = ("start", "stop", "step", "num", "log")
RESERVED = ("zip", "repeats")


@dataclass(frozen=True)
class Axis:
    """One dimension of a sweep: `keys[0]` names it; zipped keys vary together (`values[k][i]` for key k)."""

    keys: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]

    @property
    def dim(self) -> str:
        return self.keys[0]

    def __len__(self) -> int:
        return len(self.values[0])


@dataclass(frozen=True)
class Spec:
    base: dict[str, Any]  # the base run config as written (unresolved), so that e.g. links.latency="auto" follows
    axes: tuple[Axis, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(a) for a in self.axes)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def assignments(self, pos: tuple[int, ...]) -> list[tuple[str, Any]]:
        """(dotted key, value) pairs of the point at grid position `pos`."""
        return [(k, a.values[j][i]) for a, i in zip(self.axes, pos) for j, k in enumerate(a.keys)]

    def describe(self, pos: tuple[int, ...]) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.assignments(pos))

    def position(self, index: int) -> tuple[int, ...]:
        return position(self.shape, index)

    def config(self, pos: tuple[int, ...]) -> dict[str, Any]:
        """The resolved run config of one point; ConfigError names the point."""
        try:
            cfg = _config.resolve(apply(self.base, self.assignments(pos)))
            if cfg["sim"]["occupancy_interval"]:  # it streams into a run's own store; a sweep has one for all
                raise ConfigError("sim.occupancy_interval", "is not recorded in sweeps (set it to 0); run the point "
                                  "alone with fastnet run --out PATH to record it")
            return cfg
        except ConfigError as e:
            raise self.error_at(e, pos) from None

    def error_at(self, e: FastnetError, pos: tuple[int, ...]) -> FastnetError:
        """The same error, saying which point it came from."""
        where = f" (sweep point {self.describe(pos)})"
        if isinstance(e, ConfigError):
            return ConfigError(e.field, str(e).split(": ", 1)[1] + where)
        return FastnetError(str(e) + where)

    def positions(self) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(len(a)) for a in self.axes))

    def configs(self) -> list[dict[str, Any]]:
        """Every point's resolved config, in row-major order: all resolve, or ConfigError names the first bad one."""
        return [self.config(pos) for pos in self.positions()]

    def to_json(self) -> str:
        """The spec with every axis expanded: what a resumed sweep must match."""
        return json.dumps({"base": self.base, "axes": [{"keys": list(a.keys), "values": [list(v) for v in a.values]}
                                                       for a in self.axes]}, sort_keys=True)


def position(shape: tuple[int, ...] | list[int], index: int) -> tuple[int, ...]:
    """Grid position of the point with row-major `index` (the order points are listed, run and marked)."""
    return tuple(int(i) for i in np.unravel_index(index, tuple(shape)))


def apply(base: dict[str, Any], values: list[tuple[str, Any]]) -> dict[str, Any]:
    """`base` with each dotted key set; a new topology.kind drops the old kind's keys (config.merge)."""
    override: dict[str, Any] = {}
    for key, value in values:
        section, *path = key.split(".")
        table = override.setdefault(section, {})
        if len(path) > 1:  # a key inside a sub-table: copy the base's sub-table so its other keys survive
            table.setdefault(path[0], copy.deepcopy(base.get(section, {}).get(path[0], {})))
            table = table[path[0]]
            for p in path[1:-1]:
                table = table.setdefault(p, {})
        table[path[-1]] = copy.deepcopy(value)
    return _config.merge(base, override)


def load_spec(spec: str | Path | dict[str, Any], overrides: list[str] | tuple[str, ...] = ()) -> Spec:
    """Read a spec (TOML path or dict) and expand its axes; ConfigError names the bad `sweep.*` or `base` field.
    `overrides` (`fastnet sweep --set section.key=value`) change the base, as `fastnet run --set` a config."""
    here = Path.cwd()
    if not isinstance(spec, (dict, str, Path)):
        raise ConfigError("spec", f"must be a table of base and sweep, or the path of a spec file (got "
                          f"{type(spec).__name__})")
    if isinstance(spec, dict):
        spec = _config.plain(spec)  # np.linspace axes, NumPy scalars: stored as JSON, compared with a resume's
    else:
        here = Path(spec).resolve().parent
        spec = _config.read_toml(spec)
    unknown = [k for k in spec if k not in ("base", "sweep")]
    if unknown:
        raise ConfigError(unknown[0], "unknown table in a sweep spec; allowed: base, sweep")
    base = spec.get("base")
    if base is None:
        base = _config.read_toml(_config.DEFAULT_CONFIG)
    elif isinstance(base, str):
        path = Path(base)
        base = _config.read_toml(path if path.is_absolute() else here / path)
    elif not isinstance(base, dict):
        raise ConfigError("base", "must be a table of run-config sections or the path of a run config")
    elif isinstance(base.get("topology"), dict) and base["topology"].get("graph") is not None:
        from ..graph_input import resolve_graph  # a networkx graph as plain edges: the spec is stored as JSON

        base = {**base, "topology": resolve_graph(base["topology"])}
    else:
        base = _config.beside(base, here)  # a spec file's own table: its file names as a run config's
    if overrides:
        base = _config.merge(base, _config.parse_set(list(overrides)))
    table = spec.get("sweep", {})
    if not isinstance(table, dict) or not table:
        raise ConfigError("sweep", "must be a table with at least one axis, e.g. traffic.load = [0.1, 0.2]")
    axes = _axes(table, _config.resolve(base)["sim"]["seed"])
    return Spec(base=base, axes=tuple(axes))


def _axes(table: dict[str, Any], base_seed: int) -> list[Axis]:
    axes: list[Axis] = []
    for name, value in table.items():
        if name == "zip":
            groups = value if isinstance(value, list) else [value]
            for i, group in enumerate(groups):
                if not isinstance(group, dict) or not group:
                    raise ConfigError(f"sweep.zip[{i}]", "must be a table of axes that vary together")
                axes.append(_zip(f"sweep.zip[{i}]", _flatten(group)))
        elif name != "repeats":
            axes.extend(Axis((k,), (v,)) for k, v in _flatten({name: value}).items())
    if "repeats" in table:
        n = table["repeats"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ConfigError("sweep.repeats", f"must be an integer >= 1 (got {n!r})")
        axes.append(Axis(("sim.seed",), (tuple(base_seed + i for i in range(n)),)))
    seen: set[str] = set()
    for a in axes:
        _distinct(f"sweep.{a.dim}", a.values[0])
        for k in a.keys:
            if k in seen:
                why = "; repeats already sweeps sim.seed" if k == "sim.seed" and "repeats" in table else ""
                raise ConfigError(f"sweep.{k}", "appears in more than one axis" + why)
            seen.add(k)
    return axes


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, tuple[Any, ...]]:
    """Dotted key -> values; nested tables (TOML's unquoted dotted keys) are walked, range tables expanded."""
    out: dict[str, tuple[Any, ...]] = {}
    for key, value in table.items():
        dotted = prefix + key
        if isinstance(value, dict) and not set(value) & {"start", "stop", "step", "num"}:
            out.update(_flatten(value, dotted + "."))
            continue
        if "." not in dotted:
            raise ConfigError(f"sweep.{dotted}", "an axis is a dotted config key such as traffic.load")
        out[dotted] = _values(f"sweep.{dotted}", value)
    return out


def _zip(field: str, group: dict[str, tuple[Any, ...]]) -> Axis:
    lengths = {k: len(v) for k, v in group.items()}
    if len(set(lengths.values())) > 1:
        raise ConfigError(field, "zipped axes must have equal lengths (got " +
                          ", ".join(f"{k}: {n}" for k, n in lengths.items()) + ")")
    return Axis(tuple(group), tuple(group.values()))


def _values(field: str, value: Any) -> tuple[Any, ...]:
    if isinstance(value, dict):
        values = _range(field, value)
    elif isinstance(value, list) and value:
        values = list(value)
    else:
        raise ConfigError(field, "must be a non-empty list of values or a range {start, stop, step} / "
                          "{start, stop, num[, log]}")
    return tuple(values)


def _distinct(field: str, values: tuple[Any, ...]) -> None:
    """A dimension's values label its points: they must differ (zipped followers may repeat)."""
    keys = [json.dumps(v, sort_keys=True) for v in values]
    if len(set(keys)) != len(keys):
        raise ConfigError(field, f"values must be distinct (got {list(values)!r})")


def _range(field: str, r: dict[str, Any]) -> list[Any]:
    bad = [k for k in r if k not in RANGE_KEYS]
    if bad:
        raise ConfigError(f"{field}.{bad[0]}", "unknown range key; allowed: " + ", ".join(RANGE_KEYS))
    for k in ("start", "stop", "step", "num"):
        if k in r and (isinstance(r[k], bool) or not isinstance(r[k], (int, float)) or not math.isfinite(r[k])):
            raise ConfigError(f"{field}.{k}", f"must be a number (got {r[k]!r})")
    if "start" not in r or "stop" not in r or ("step" in r) == ("num" in r):
        raise ConfigError(field, "a range needs start, stop and exactly one of step or num")
    start, stop, log = r["start"], r["stop"], r.get("log", False)
    if not isinstance(log, bool):
        raise ConfigError(f"{field}.log", f"must be true or false (got {log!r})")
    if "num" in r:
        num = r["num"]
        if not isinstance(num, int) or num < 1:
            raise ConfigError(f"{field}.num", f"must be an integer >= 1 (got {num!r})")
        if log and (start <= 0 or stop <= 0):
            raise ConfigError(field, "a log range needs start > 0 and stop > 0")
        raw = np.geomspace(start, stop, num) if log else np.linspace(start, stop, num)
    else:
        step = r["step"]
        if log:
            raise ConfigError(f"{field}.log", "a log range takes num, not step")
        if step == 0 or (stop - start) / step < 0:
            raise ConfigError(f"{field}.step", f"must be non-zero and lead from start to stop (got {step!r})")
        n = math.floor((stop - start) / step + 1e-9) + 1  # stop is included when it lies on the grid
        raw = start + step * np.arange(n)
    values = [float(f"{v:.12g}") for v in raw]  # 0.30000000000000004 -> 0.3
    if isinstance(start, int) and isinstance(stop, int) and all(v == int(v) for v in values):
        values = list(dict.fromkeys(int(v) for v in values))
    return values
