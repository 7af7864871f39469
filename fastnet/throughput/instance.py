"""A throughput-model instance: directed links with capacities, flows, and each flow's candidate paths.

Arrays, not objects, so the numba kernels (heuristics.py) and the LP builder (lp.py) read them directly:

- `link_src, link_dst` (int64[L]) node ids of each directed link, `capacity` (float64[L]) its capacity;
- `flow_src, flow_dst` (int64[F]) and `weight` (float64[F], 1 unless a demand matrix says otherwise: a flow of
  weight w is entitled to w times the share of a weight-1 flow in every model);
- paths in two CSR levels: flow f owns paths `path_ptr[f] .. path_ptr[f+1]-1`, path p crosses the links
  `links[link_ptr[p] : link_ptr[p+1]]` (a link listed twice is crossed twice and uses its capacity twice).

JSON files use exactly `{"links": [[u, v, capacity], ...], "flows": [[src, dst], ...], "paths": [[[link, ...],
...], ...]}`; node ids are any integers. A `"weights": [w, ...]` key is read when present and written only when
some weight differs from 1, so unweighted instances round-trip in the bare format.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..checks import check_output_file
from ..errors import ConfigError


@dataclass
class Instance:
    link_src: np.ndarray
    link_dst: np.ndarray
    capacity: np.ndarray
    flow_src: np.ndarray
    flow_dst: np.ndarray
    path_ptr: np.ndarray
    link_ptr: np.ndarray
    links: np.ndarray
    weight: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.link_src = np.ascontiguousarray(self.link_src, dtype=np.int64)
        self.link_dst = np.ascontiguousarray(self.link_dst, dtype=np.int64)
        self.capacity = np.ascontiguousarray(self.capacity, dtype=np.float64)
        self.flow_src = np.ascontiguousarray(self.flow_src, dtype=np.int64)
        self.flow_dst = np.ascontiguousarray(self.flow_dst, dtype=np.int64)
        self.path_ptr = np.ascontiguousarray(self.path_ptr, dtype=np.int64)
        self.link_ptr = np.ascontiguousarray(self.link_ptr, dtype=np.int64)
        self.links = np.ascontiguousarray(self.links, dtype=np.int64)
        if self.weight is None:
            self.weight = np.ones(len(self.flow_src), dtype=np.float64)
        self.weight = np.ascontiguousarray(self.weight, dtype=np.float64)

    @property
    def n_links(self) -> int:
        return len(self.capacity)

    @property
    def n_flows(self) -> int:
        return len(self.flow_src)

    @property
    def n_paths(self) -> int:
        return len(self.link_ptr) - 1

    @property
    def path_flow(self) -> np.ndarray:
        """int64[n_paths]: the flow each path belongs to."""
        return np.repeat(np.arange(self.n_flows, dtype=np.int64), np.diff(self.path_ptr))

    def paths_of(self, f: int) -> list[list[int]]:
        return [self.links[self.link_ptr[p]:self.link_ptr[p + 1]].tolist()
                for p in range(self.path_ptr[f], self.path_ptr[f + 1])]

    def link_load(self, path_rate: np.ndarray) -> np.ndarray:
        """float64[L]: traffic each link carries when path p carries path_rate[p]."""
        per_entry = np.repeat(np.asarray(path_rate, dtype=np.float64), np.diff(self.link_ptr))
        return np.bincount(self.links, weights=per_entry, minlength=self.n_links)

    def flow_rate(self, path_rate: np.ndarray) -> np.ndarray:
        """float64[F]: the sum of each flow's path rates."""
        return np.bincount(self.path_flow, weights=np.asarray(path_rate, dtype=np.float64), minlength=self.n_flows)

    def validate(self, where: str = "instance") -> "Instance":
        """Raise ConfigError unless the arrays describe a well-formed instance."""
        L, F = self.n_links, self.n_flows
        if not (len(self.link_src) == len(self.link_dst) == L):
            raise ConfigError(f"{where}.links", "link arrays differ in length")
        if not np.all(np.isfinite(self.capacity)) or (self.capacity < 0).any():
            i = int(np.flatnonzero(~(np.isfinite(self.capacity) & (self.capacity >= 0)))[0])
            raise ConfigError(f"{where}.links[{i}]", f"capacity must be a finite number >= 0 (got {self.capacity[i]})")
        if len(self.flow_dst) != F or len(self.weight) != F or len(self.path_ptr) != F + 1:
            raise ConfigError(f"{where}.flows", "flow arrays differ in length")
        if not np.all(np.isfinite(self.weight)) or (self.weight <= 0).any():
            raise ConfigError(f"{where}.weights", "each weight must be a finite number > 0")
        if self.path_ptr[0] != 0 or (np.diff(self.path_ptr) < 0).any() or self.path_ptr[-1] != self.n_paths:
            raise ConfigError(f"{where}.paths", "path offsets are not a valid CSR")
        if self.link_ptr[0] != 0 or self.link_ptr[-1] != len(self.links):
            raise ConfigError(f"{where}.paths", "link offsets are not a valid CSR")
        lens = np.diff(self.link_ptr)
        if (lens <= 0).any():
            p = int(np.flatnonzero(lens <= 0)[0])
            f = int(np.searchsorted(self.path_ptr, p, side="right") - 1)
            raise ConfigError(f"{where}.paths[{f}][{p - self.path_ptr[f]}]", "a path needs at least one link")
        if len(self.links) and (self.links.min() < 0 or self.links.max() >= L):
            e = int(np.flatnonzero((self.links < 0) | (self.links >= L))[0])
            p = int(np.searchsorted(self.link_ptr, e, side="right") - 1)
            f = int(np.searchsorted(self.path_ptr, p, side="right") - 1)
            raise ConfigError(f"{where}.paths[{f}][{p - self.path_ptr[f]}]",
                              f"link index {int(self.links[e])} is not in 0..{L - 1}")
        return self


def from_lists(links: list, flows: list, paths: list, weights: list | None = None, where: str = "instance") -> Instance:
    """An Instance from the JSON lists (see the module docstring); every entry is checked."""
    if not isinstance(links, list):
        raise ConfigError(f"{where}.links", "must be a list of [u, v, capacity]")
    if not isinstance(flows, list):
        raise ConfigError(f"{where}.flows", "must be a list of [src, dst]")
    if not isinstance(paths, list) or len(paths) != len(flows):
        raise ConfigError(f"{where}.paths", f"must be a list with one list of paths per flow ({len(flows)})")
    L = len(links)
    src = np.empty(L, dtype=np.int64)
    dst = np.empty(L, dtype=np.int64)
    cap = np.empty(L, dtype=np.float64)
    for i, e in enumerate(links):
        ok = isinstance(e, list) and len(e) == 3 and _is_int(e[0]) and _is_int(e[1]) and _is_num(e[2])
        if not ok or not (math.isfinite(e[2]) and e[2] >= 0):
            raise ConfigError(f"{where}.links[{i}]", f"must be [u, v, capacity] with integer u, v and a finite "
                              f"capacity >= 0 (got {e!r})")
        src[i], dst[i], cap[i] = e
    F = len(flows)
    fs = np.empty(F, dtype=np.int64)
    fd = np.empty(F, dtype=np.int64)
    for i, fl in enumerate(flows):
        if not (isinstance(fl, list) and len(fl) == 2 and _is_int(fl[0]) and _is_int(fl[1])):
            raise ConfigError(f"{where}.flows[{i}]", f"must be [src, dst] with integer node ids (got {fl!r})")
        fs[i], fd[i] = fl
    path_ptr = np.zeros(F + 1, dtype=np.int64)
    link_ptr = [0]
    flat: list[int] = []
    for i, plist in enumerate(paths):
        if not isinstance(plist, list):
            raise ConfigError(f"{where}.paths[{i}]", "must be a list of paths (lists of link indices)")
        for j, path in enumerate(plist):
            if not isinstance(path, list) or not path or not all(_is_int(x) and 0 <= x < L for x in path):
                raise ConfigError(f"{where}.paths[{i}][{j}]", f"must be a non-empty list of link indices in "
                                  f"0..{L - 1} (got {path!r})")
            flat.extend(path)
            link_ptr.append(len(flat))
        path_ptr[i + 1] = len(link_ptr) - 1
    w = None
    if weights is not None:
        if not (isinstance(weights, list) and len(weights) == F and all(_is_num(x) and x > 0 for x in weights)):
            raise ConfigError(f"{where}.weights", f"must be a list of {F} numbers > 0, one per flow")
        w = np.asarray(weights, dtype=np.float64)
    return Instance(src, dst, cap, fs, fd, path_ptr, np.asarray(link_ptr, dtype=np.int64),
                    np.asarray(flat, dtype=np.int64), w).validate(where)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def to_dict(inst: Instance) -> dict[str, Any]:
    out: dict[str, Any] = {
        "links": [[int(u), int(v), _num(c)] for u, v, c in zip(inst.link_src, inst.link_dst, inst.capacity)],
        "flows": [[int(s), int(t)] for s, t in zip(inst.flow_src, inst.flow_dst)],
        "paths": [inst.paths_of(f) for f in range(inst.n_flows)],
    }
    if (inst.weight != 1.0).any():
        out["weights"] = [float(w) for w in inst.weight]
    return out


def _num(c: float) -> int | float:
    return int(c) if float(c).is_integer() else float(c)


def read_instance(path: str | Path) -> Instance:
    p = Path(path)
    if not p.is_file():
        raise ConfigError("--instance", f"no such file: {p}")
    try:
        data = json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ConfigError("--instance", f"{p} is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise ConfigError("--instance", 'must be a JSON object {"links": ..., "flows": ..., "paths": ...}')
    extra = set(data) - {"links", "flows", "paths", "weights"}
    if extra:
        raise ConfigError(f"instance.{sorted(extra)[0]}", "unknown key; allowed: links, flows, paths, weights")
    for key in ("links", "flows", "paths"):
        if key not in data:
            raise ConfigError(f"instance.{key}", "missing")
    return from_lists(data["links"], data["flows"], data["paths"], data.get("weights"))


def write_instance(inst: Instance, path: str | Path) -> Path:
    p = Path(path)
    check_output_file(p, "--write-instance")
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(json.dumps(to_dict(inst), separators=(",", ":")))
    tmp.replace(p)
    return p
