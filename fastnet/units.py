"""Physical units: a config's nanoseconds and GB/s turned into the integer cycles and per-link rates the kernels use.

The kernels count cycles and phits. A config may instead state times ("40 ns", "0.7 us") and bandwidths
("2 GB/s", "56 Gb/s"); `timing(cfg)` is the one place that converts them:

- the cycle time is stated (`links.cycle = "0.5 ns"`), or follows from `traffic.phit_bytes` and one reference
  bandwidth: `links.bandwidth`, or else the fastest of `links.bandwidth_{injection,local,global,black}`. A reference
  link moves one phit per cycle: cycle_ns = phit_bytes / GB/s.
- every latency and the router delay become the nearest whole number of cycles; each rounding is reported
  (`Timing.rounding`, `fastnet info`). A link latency that rounds to 0 cycles is refused.
- a link class slower than the reference moves a fraction of a phit per cycle: its `period` is the cycles per
  phit in 1/65536ths, and a packet of L phits holds it for ceil(L * period / 65536) cycles (kernels/timing.py
  `serialise`). A class faster than the reference is refused: the reference is the fastest link.

With no physical quantity in `[links]` or `[router]`, every link moves one phit per cycle, as before; the cycle
time used to report nanoseconds is then the workload's (`workload.cycle_ns` or `link_gbps`, default 40 Gb/s).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from .checks import INT_MAX
from .errors import ConfigError

PERIOD_ONE = 1 << 16  # a link's period (cycles per phit, fixed point) when it moves one phit per cycle
CLASSES = ("injection", "local", "global")  # build/network.py NODE, LOCAL, GLOBAL
DEFAULT_LINK_GBPS = 40.0  # with no stated timing: 40 Gb/s QDR/FDR10 InfiniBand (seed 000 Table IV)

_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_TIME = re.compile(rf"^\s*{_NUMBER}\s*(ps|ns|us|µs|ms|s)\s*$")
_RATE = re.compile(rf"^\s*{_NUMBER}\s*([kMGT]?)(B|b)/s\s*$")
_TIME_NS = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_PREFIX = {"": 1e-9, "k": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3}  # to GB/s (bytes)


def parse_time_ns(v: Any) -> float | None:
    """A time string ("40 ns", "0.7 us") in ns; None if v is not one."""
    m = _TIME.match(v) if isinstance(v, str) else None
    return float(m.group(1)) * _TIME_NS[m.group(2)] if m else None


def parse_gbytes(v: Any) -> float | None:
    """A bandwidth string ("5.25 GB/s", "56 Gb/s") in GB/s (10^9 bytes a second); None if v is not one."""
    m = _RATE.match(v) if isinstance(v, str) else None
    if not m:
        return None
    return float(m.group(1)) * _PREFIX[m.group(2)] / (8.0 if m.group(3) == "b" else 1.0)


def check_cycles_or_time(lo: int, auto: bool = False):
    """A config check: an integer number of cycles >= lo, or a time string (and "auto" if allowed)."""
    def check(v: Any) -> str | None:
        if auto and v == "auto":
            return None
        if isinstance(v, int) and not isinstance(v, bool) and v >= lo:
            return None
        t = parse_time_ns(v)
        if t is not None and math.isfinite(t) and (t > 0 or lo == 0):
            return None
        return (f"must be an integer number of cycles >= {lo} or a time such as \"40 ns\" or \"0.7 us\""
                + (", or \"auto\"" if auto else ""))
    return check


def check_bandwidth(v: Any) -> str | None:
    """A config check: "auto" or a bandwidth > 0 ("2 GB/s", "56 Gb/s")."""
    if v == "auto":
        return None
    b = parse_gbytes(v)
    if b is not None and math.isfinite(b) and b > 0:
        return None
    return "must be a bandwidth > 0 such as \"2 GB/s\" or \"56 Gb/s\", or \"auto\""


def check_cycle(v: Any) -> str | None:
    """A config check: "auto" or a cycle time > 0 ("0.5 ns")."""
    t = parse_time_ns(v)
    if v == "auto" or (t is not None and math.isfinite(t) and t > 0):
        return None
    return "must be a time > 0 such as \"0.5 ns\", or \"auto\" (phit_bytes / links.bandwidth)"


@dataclass(frozen=True)
class Timing:
    """A config's timing in the kernels' units."""

    cycle_ns: float  # one cycle: a reference link moves one phit
    physical: bool  # the config stated a cycle time or a bandwidth: its links may run at different rates
    basis: str  # what fixed cycle_ns ("links.cycle", "links.bandwidth", ..., "workload.cycle_ns", "default")
    latency: dict[str, int]  # cycles per link class (injection: node -> router, local, global) and ejection
    delay: int  # router delay, cycles
    period: dict[str, int]  # per link class and "black" (a 2-D dragonfly group's column links): cycles per phit
    # x PERIOD_ONE (PERIOD_ONE: the reference rate)
    rounding: list[str] = field(default_factory=list)  # one line per converted quantity

    @property
    def phit_rate(self) -> dict[str, float]:
        """Phits per cycle of each link class."""
        return {c: PERIOD_ONE / p for c, p in self.period.items()}

    def gbytes(self, phit_bytes: int) -> dict[str, float]:
        """GB/s of each link class as simulated (after the period's rounding)."""
        return {c: r * phit_bytes / self.cycle_ns for c, r in self.phit_rate.items()}

    def report(self, phit_bytes: int) -> dict[str, Any]:
        """What `fastnet info` and the result's attributes show."""
        return {"cycle_ns": self.cycle_ns, "basis": self.basis, "physical": self.physical,
                "latency_cycles": dict(self.latency), "router_delay_cycles": self.delay,
                "phits_per_cycle": {c: round(r, 6) for c, r in self.phit_rate.items()},
                "link_gbytes_per_s": {c: round(b, 6) for c, b in self.gbytes(phit_bytes).items()},
                "rounding": list(self.rounding)}


def _workload_cycle(cfg: dict[str, Any]) -> tuple[float, str] | None:
    """The cycle the workload states (workload.cycle_ns or link_gbps), if any."""
    w = cfg.get("workload") or {}
    phit = cfg["traffic"]["phit_bytes"]
    if w.get("cycle_ns", "auto") != "auto":
        return float(w["cycle_ns"]), "workload.cycle_ns"
    if w.get("link_gbps", "auto") != "auto":
        return phit * 8.0 / float(w["link_gbps"]), "workload.link_gbps"
    return None


MAX_CYCLES = 2**24  # a link latency or router delay: the event wheel spans a hop (sim.MAX_HORIZON)


def _periods(links: dict[str, Any], bw_keys: dict[str, str], reference: float, phit: int, cycle_ns: float,
             rounding: list[str]) -> dict[str, int]:
    """Each link class's period (cycles per phit, fixed point: PERIOD_ONE) from its bandwidth against the
    reference; what was rounded is added to `rounding`."""
    period: dict[str, int] = {}
    for c, key in bw_keys.items():
        v, field = links[key], key  # field: the key the value came from, which an error names
        if v == "auto" and c == "black":
            v, field = links["bandwidth_local"], "bandwidth_local"
        if v == "auto":
            v, field = links["bandwidth"], "bandwidth"
        if v == "auto":
            period[c] = PERIOD_ONE
            continue
        bw = parse_gbytes(v)
        if bw > reference * (1 + 1e-9):
            raise ConfigError(f"links.{field}", f"{v} is faster than the reference ({reference:.4g} GB/s, one phit "
                              f"of {phit} B per cycle of {cycle_ns:.4g} ns): state the fastest link as "
                              "links.bandwidth, or a shorter links.cycle")
        exact = PERIOD_ONE * reference / bw
        if exact > INT_MAX:  # a port's period is an int32 record field
            raise ConfigError(f"links.{field}", f"{v} is {reference / bw:.3g} times slower than the reference "
                              f"({reference:.4g} GB/s); at most {INT_MAX // PERIOD_ONE:,} times (a longer "
                              "links.cycle, or a slower links.bandwidth)")
        period[c] = int(round(exact))
        if period[c] != PERIOD_ONE:
            rate = PERIOD_ONE / period[c]
            rounding.append(f"links.{key}: {v} = {reference / bw:.4g} cycles a phit -> {rate:.6f} phits a cycle "
                            f"({(rate * phit / cycle_ns / bw - 1) * 100:+.4f} %)")
    return period


def timing(cfg: dict[str, Any]) -> Timing:
    """The timing of a resolved config (config.resolve calls it to check the values, so errors name fields)."""
    links, router, phit = cfg["links"], cfg["router"], cfg["traffic"]["phit_bytes"]
    bw_keys = {"injection": "bandwidth_injection", "local": "bandwidth_local", "global": "bandwidth_global",
               "black": "bandwidth_black"}
    stated_bw = {k: parse_gbytes(links[k]) for k in ("bandwidth", *bw_keys.values()) if links[k] != "auto"}
    times = [k for k in ("latency", "latency_injection", "latency_ejection", "latency_local", "latency_global")
             if parse_time_ns(links[k]) is not None] + (["router.delay"] if parse_time_ns(router["delay"]) is not None
                                                         else [])
    physical = links["cycle"] != "auto" or bool(stated_bw)
    wl = _workload_cycle(cfg)
    if physical and wl is not None:
        raise ConfigError(wl[1], "the network's timing is set in [links] (links.cycle or a bandwidth); "
                          "remove this key")
    if links["cycle"] != "auto":
        cycle_ns, basis = parse_time_ns(links["cycle"]), "links.cycle"
        reference = phit / cycle_ns
    elif stated_bw:
        key = "bandwidth" if "bandwidth" in stated_bw else max(stated_bw, key=lambda k: stated_bw[k])
        reference, basis = stated_bw[key], f"links.{key}"
        cycle_ns = phit / reference
    elif wl is not None:
        cycle_ns, basis = wl
        reference = phit / cycle_ns
    else:
        if times:
            field_ = times[0] if times[0] == "router.delay" else f"links.{times[0]}"
            raise ConfigError(field_, "a time needs the cycle time: set links.cycle, or traffic.phit_bytes and a "
                              "links.bandwidth (one phit per cycle)")
        cycle_ns, basis = phit * 8.0 / DEFAULT_LINK_GBPS, "default"
        reference = phit / cycle_ns
    rounding: list[str] = []

    def bounded(field_: str, v: Any) -> tuple[float | None, float]:
        """(v in ns or None if it is cycles, v in cycles), at most MAX_CYCLES."""
        ns = parse_time_ns(v)
        exact = int(v) if ns is None else ns / cycle_ns
        if exact > MAX_CYCLES:
            raise ConfigError(field_, f"{v} is {exact:.3g} cycles; at most {MAX_CYCLES:,} (a longer cycle: "
                              "links.cycle)")
        return ns, exact

    def cycles(field_: str, v: Any, lo: int, named: str | None = None) -> int:
        ns, exact = bounded(field_, v)
        if ns is None:
            return int(v)
        n = int(math.floor(exact + 0.5))
        if n < lo:  # (`named`: the key the value was given as, where a class took links.latency's)
            raise ConfigError(named or field_, f"{v} is {exact:.3g} cycles of {cycle_ns:.4g} ns, which rounds to "
                              f"{n}; it must be at least {lo} (a shorter cycle: a larger bandwidth or links.cycle)")
        err = (n - exact) / exact * 100 if exact else 0.0
        rounding.append(f"{field_}: {v} = {exact:.4g} cycles -> {n} ({err:+.2f} %)")
        return n

    bounded("links.latency", links["latency"])  # the classes' "auto" took it: name it first if it is too long
    latency = {c: cycles(f"links.latency_{c}", links[f"latency_{c}"], 1,
                         "links.latency" if links[f"latency_{c}"] == links["latency"] else None)
               for c in (*CLASSES, "ejection")}
    delay = cycles("router.delay", router["delay"], 0)
    period = _periods(links, bw_keys, reference, phit, cycle_ns, rounding)
    return Timing(cycle_ns=cycle_ns, physical=physical, basis=basis, latency=latency, delay=delay, period=period,
                  rounding=rounding)
