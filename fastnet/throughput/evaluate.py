"""Models on a fastnet topology: patterns sampled R times, averages with confidence intervals, as a Dataset.

Throughput is reported as in seed 001: the average per-flow rate normalised to the router-link bandwidth
(`throughput`), averaged over the samples with a Student-t confidence interval. Also reported: the aggregate
rate per host (`throughput_per_node`, comparable to the engine's accepted phits/node/cycle), the smallest
flow rate, the time each model took, and every flow's rate.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

import numpy as np
import xarray as xr

from .. import config as _config
from ..topology import build_network
from ..build.network import Network
from ..errors import ConfigError
from ..memory import check_throughput_fits
from ..version import __version__
from .build import build_instance
from .heuristics import hm, jm, waterfill
from .instance import Instance
from .lp import mcf, mmf
from .paths import diameter
from .patterns import make_flows, seed_dependent


def _lp_model(fn: Callable) -> Callable[[Instance], tuple[np.ndarray, np.ndarray]]:
    def run(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
        r = fn(inst)
        return r.rate, r.path_rate
    return run


def _path_model(fn: Callable) -> Callable[[Instance], tuple[np.ndarray, np.ndarray]]:
    def run(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
        path_rate = fn(inst)
        return inst.flow_rate(path_rate), path_rate
    return run


def _waterfill(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    rate = waterfill(inst)
    path_rate = np.zeros(inst.n_paths)
    has = np.diff(inst.path_ptr) > 0
    path_rate[inst.path_ptr[:-1][has]] = rate[has]
    return rate, path_rate


# name -> instance -> (flow rates, path rates)
MODELS: dict[str, Callable[[Instance], tuple[np.ndarray, np.ndarray]]] = {
    "mmf": _lp_model(mmf), "mcf": _lp_model(mcf), "hm": _path_model(hm), "jm": _path_model(jm),
    "waterfill": _waterfill,
}


def run_models(inst: Instance, models: list[str], starting: Callable[[str], None] | None = None,
               ) -> dict[str, tuple[np.ndarray, float]]:
    """{model: (flow rates, seconds)} in the order given; `starting(name)` is told before each model runs."""
    out = {}
    for name in models:
        if name not in MODELS:
            raise ConfigError("--models", f"unknown model {name!r}; allowed: " + ", ".join(MODELS))
        if starting:
            starting(name)
        t0 = time.perf_counter()
        rate, _ = MODELS[name](inst)
        out[name] = (rate, time.perf_counter() - t0)
    return out


def resolve(cfg: dict[str, Any]) -> dict[str, Any]:
    """A resolved config that always has a [throughput] section."""
    cfg = dict(cfg)
    cfg.setdefault("throughput", {})
    return _config.resolve(cfg)


def hop_limit(net: Network, tcfg: dict[str, Any]) -> int:
    """Longest path in router hops: `max_hops`, or the diameter + 1 (the engine's ksp `hop_limit` rule)."""
    return diameter(net) + 1 if tcfg["max_hops"] == "auto" else int(tcfg["max_hops"])


def sample_instance(net: Network, cfg: dict[str, Any], sample: int, max_hops: int) -> Instance:
    t = cfg["throughput"]
    flows = make_flows(net, t["pattern"], t["x"], t["seed"], sample, cfg["traffic"])
    return build_instance(net, flows, t["k"], max_hops, t["seed"], t["link_capacity"], t["host_capacity"],
                          t["path_order"])


def confidence_halfwidth(values: np.ndarray, confidence: float, axis: int = -1) -> np.ndarray:
    """Half-width of the Student-t interval of the mean (NaN with fewer than two values)."""
    from scipy import stats

    n = values.shape[axis]
    if n < 2:
        return np.full(np.delete(values.shape, axis), np.nan)
    sd = values.std(axis=axis, ddof=1)
    return stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n)


def evaluate(cfg: dict[str, Any], progress: Callable[[int, int, str], None] | None = None,
             instances_out: list[Instance] | None = None) -> xr.Dataset:
    """Run the configured models on `cfg`'s topology; see the module docstring. Patterns that do not depend on
    the seed are evaluated once whatever `samples` says. Instances are appended to `instances_out` if given.
    `progress(samples done, samples, what now)` is told at each step: the build, each sample's flows and paths,
    each model (one model on a large instance may take minutes)."""
    def say(done: int, what: str) -> None:
        if progress:
            progress(done, samples, what)

    t_start = time.perf_counter()
    cfg = resolve(cfg)
    t = cfg["throughput"]
    check_throughput_fits(cfg)
    samples = t["samples"] if seed_dependent(t["pattern"]) else 1
    say(0, "building the network")
    net = build_network(cfg)
    max_hops = hop_limit(net, t)
    models = list(t["models"])
    rates, secs, srcs, dsts, n_paths = [], [], [], [], []
    for i in range(samples):
        say(i, f"sample {i + 1}: flows and paths")
        inst = sample_instance(net, cfg, i, max_hops)
        if instances_out is not None:
            instances_out.append(inst)
        res = run_models(inst, models, lambda name: say(i, f"sample {i + 1}: {name} ({inst.n_flows:,} flows)"))
        rates.append([res[m][0] for m in models])
        secs.append([res[m][1] for m in models])
        srcs.append(inst.flow_src - net.n_routers)
        dsts.append(inst.flow_dst - net.n_routers)
        n_paths.append(np.diff(inst.path_ptr))
        say(i + 1, f"{i + 1} sample(s) done")
    rate = np.transpose(np.asarray(rates), (1, 0, 2))  # model, sample, flow
    scale = t["link_capacity"]
    per_flow = rate.mean(axis=2) / scale
    per_node = rate.sum(axis=2) / net.n_nodes / scale
    ci = confidence_halfwidth(per_flow, t["confidence"], axis=1)
    ci_node = confidence_halfwidth(per_node, t["confidence"], axis=1)
    if samples == 1 and not seed_dependent(t["pattern"]):
        ci, ci_node = np.zeros(len(models)), np.zeros(len(models))
    seconds = np.asarray(secs).T
    var = {
        "throughput": (("model", "sample"), per_flow, "1", "mean flow rate / router-link bandwidth (seed 001)"),
        "throughput_mean": (("model",), per_flow.mean(axis=1), "1", "throughput averaged over the samples"),
        "throughput_ci": (("model",), ci, "1", f"half-width of the {t['confidence']:.0%} confidence interval "
                          "of throughput_mean (Student t)"),
        "throughput_per_node": (("model", "sample"), per_node, "1",
                                "sum of flow rates / hosts / router-link bandwidth"),
        "throughput_per_node_mean": (("model",), per_node.mean(axis=1), "1", "throughput_per_node averaged"),
        "throughput_per_node_ci": (("model",), ci_node, "1", "half-width of its confidence interval"),
        "min_rate": (("model", "sample"), rate.min(axis=2) / scale, "1", "smallest flow rate / bandwidth"),
        "rate": (("model", "sample", "flow"), rate, "capacity", "rate of each flow"),
        "seconds": (("model", "sample"), seconds, "s", "time the model took on the sample"),
        "flow_src": (("sample", "flow"), np.asarray(srcs), "node", "source host of each flow"),
        "flow_dst": (("sample", "flow"), np.asarray(dsts), "node", "destination host of each flow"),
        "flow_paths": (("sample", "flow"), np.asarray(n_paths), "paths", "paths found for each flow (<= k)"),
    }
    data_vars = {name: xr.Variable(dims, np.asarray(v), attrs={"units": u, "description": d})
                 for name, (dims, v, u, d) in var.items()}
    attrs = {
        "fastnet_version": __version__, "config": json.dumps(cfg, sort_keys=True), "topology": net.kind,
        "routers": net.n_routers, "nodes": net.n_nodes, "pattern": t["pattern"], "x": t["x"], "k": t["k"],
        "max_hops": max_hops, "path_order": t["path_order"], "samples": samples, "confidence": t["confidence"],
        "wall_seconds": time.perf_counter() - t_start,
    }
    coords = {"model": models, "sample": np.arange(samples), "flow": np.arange(rate.shape[2])}
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)


def summary(ds: xr.Dataset) -> dict[str, dict[str, float]]:
    """The `--json` object of a topology run: per model, the means, intervals and seconds."""
    out: dict[str, dict[str, float]] = {}
    for m in ds.model.values.tolist():
        d = ds.sel(model=m)
        out[m] = {
            "throughput": float(d.throughput_mean), "ci": _nan_none(float(d.throughput_ci)),
            "throughput_per_node": float(d.throughput_per_node_mean),
            "ci_per_node": _nan_none(float(d.throughput_per_node_ci)),
            "min_rate": float(d.min_rate.mean()), "seconds": float(d.seconds.sum()),
        }
    return out


def _nan_none(v: float) -> float | None:
    return None if np.isnan(v) else v
