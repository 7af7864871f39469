"""The checks a config value goes through: the one leaf module that every section's schema imports (config.py's
own sections, the workload, MPI, faults, machine and throughput schemas, each topology's keys). A check returns
None for a good value, else what is allowed; `check_section` applies a schema to a table."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any, Callable

from .errors import ConfigError

Check = Callable[[Any], str | None]  # returns what is allowed when the value is bad
Schema = dict[str, tuple[Any, Check]]  # key -> (default, check)


def check_parent_dir(path: Path, option: str) -> None:
    """ConfigError(option) unless the directory `path` would be written in exists: before the work, not after."""
    if not path.parent.is_dir():
        raise ConfigError(option, f"directory {path.parent} does not exist")


def check_output_file(path: Path, option: str) -> None:
    """ConfigError(option) unless `path` can be written as a file: before the work that makes it, not after."""
    if path.is_dir():
        raise ConfigError(option, f"{path} is a directory; name a file")
    check_parent_dir(path, option)


INT_MAX = 2**31 - 1  # the default upper bound: the kernels keep ids, sizes and times in int32 records
MAX_VCS = 1024  # VCs per port (a VC is a record per port: more would only exhaust memory)


def integer(lo: int, hi: int = INT_MAX) -> Check:
    def check(v: Any) -> str | None:
        ok = isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
        if ok:
            return None
        return f"must be an integer >= {lo} and <= {hi}"
    return check


def integer_or_auto(lo: int, hi: int = INT_MAX) -> Check:
    inner = integer(lo, hi)
    return lambda v: None if v == "auto" else (inner(v) and f"{inner(v)}, or \"auto\"")


def real(lo: float, hi: float, lo_open: bool = False) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            if (v > lo if lo_open else v >= lo) and v <= hi:
                return None
        return f"must be a number in {'(' if lo_open else '['}{lo:g}, {hi:g}]"
    return check


def choice(*names: str) -> Check:
    return lambda v: None if v in names else "must be one of " + ", ".join(names)


def integer_list(lo: int, min_len: int = 1) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, list) and len(v) >= min_len and all(integer(lo)(x) is None for x in v):
            return None
        return f"must be a list of at least {min_len} integers >= {lo} and <= {INT_MAX}"
    return check


def even(lo: int) -> Check:
    def check(v: Any) -> str | None:
        ok = isinstance(v, int) and not isinstance(v, bool) and v >= lo and v % 2 == 0
        return None if ok else f"must be an even integer >= {lo}"
    return check


def string(v: Any) -> str | None:
    return None if isinstance(v, str) else "must be a string"


def boolean(v: Any) -> str | None:
    return None if isinstance(v, bool) else "must be true or false"


def check_section(name: str, given: dict[str, Any], schema: dict[str, tuple[Any, Check]]) -> dict[str, Any]:
    if not isinstance(given, dict):
        raise ConfigError(name, "must be a table")
    for key in given:
        if key not in schema:
            raise ConfigError(f"{name}.{key}", "unknown key; allowed: " + ", ".join(schema))
    out = {}
    for key, (default, check) in schema.items():
        value = given.get(key, copy.deepcopy(default))
        problem = check(value)
        if problem:
            raise ConfigError(f"{name}.{key}", f"{problem} (got {value!r})")
        out[key] = value
    return out


_WALL = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|min|h)\s*$")
_WALL_SECONDS = {"s": 1.0, "min": 60.0, "h": 3600.0}


def wall_seconds(v: Any) -> float | None:
    """A wall-clock time ("30 s", "10 min", "2 h") in seconds; None if v is not one."""
    m = _WALL.match(v) if isinstance(v, str) else None
    return float(m.group(1)) * _WALL_SECONDS[m.group(2)] if m else None


def cycles_or_wall_time(v: Any) -> str | None:
    """"auto", a number of simulated cycles >= 0, or a wall time > 0 (sim.checkpoint_every)."""
    if v == "auto" or (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
        return None
    s = wall_seconds(v)
    if s is not None and s > 0:
        return None
    return ('must be "auto", a number of simulated cycles >= 0 (0: only when stopped by a signal), or a wall time '
            'such as "30 s", "10 min" or "2 h"')
