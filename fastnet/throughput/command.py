"""The body of `fastnet throughput` (cli.py declares the options and calls `main`).

Three modes:
- `--instance FILE.json`: the models on an explicit instance; `--json` prints {"mmf": [...], ...}, the
  per-flow rates in flow order.
- `CONFIG.toml` (or --set ...): the models on the config's topology over `samples` patterns; prints the means
  with confidence intervals, `--json` prints them as one object, `--out X.zarr` stores the dataset.
- `CONFIG.toml --simulate`: the cross-check — the engine's pattern on the engine's single-path routes, models
  and cycle-level simulation side by side (crosscheck.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np
import xarray as xr
from rich.console import Console
from rich.table import Table

from .. import config as _config
from ..arguments import unresolved_config
from ..errors import ConfigError
from . import settings as _settings

GAP_NOTE = (
    "Why the simulation differs from the models: MCF is the fluid bound on the load every host can offer at once:"
    " no run is stable above it, and with finite buffers, whole packets and round-robin allocation a run may "
    "saturate somewhat below it (0.9 x MCF is not always stable). Past saturation the models assume fluid flows "
    "sharing each link by a rule (MMF: max-min fair), while the routers share a link round-robin among input "
    "ports and VCs, in whole packets, through finite buffers. Per-port round-robin is not per-flow fairness: a "
    "flow that meets a bundle of flows at one input gets more than its fair share, so the simulation can deliver "
    "more in total than MMF (which maximises the smallest rate, not the sum) but never more than the max-total "
    "bound; head-of-line blocking and packet granularity pull it down. See docs/throughput.md."
)


def _models_arg(models: Optional[str]) -> Optional[list[str]]:
    if models is None:
        return None
    names = [m.strip() for m in models.split(",") if m.strip()]
    problem = _settings._models(names)
    if problem:
        raise ConfigError("--models", f"{problem} (got {models!r})")
    return names


def load_config(config: Optional[Path], overrides: list[str], options: dict[str, Any]) -> dict[str, Any]:
    cfg = unresolved_config(config, overrides)
    given = {k: v for k, v in options.items() if v is not None}
    if given:
        cfg = _config.merge(cfg, {"throughput": given})
    cfg.setdefault("throughput", {})
    return _config.resolve(cfg)


def run_instance(path: Path, models: list[str], as_json: bool, out_path: Optional[Path], out: Console) -> None:
    from .evaluate import run_models
    from .instance import read_instance

    inst = read_instance(path)
    if "waterfill" in models and (np.diff(inst.path_ptr) > 1).any():
        raise ConfigError("--models", "waterfill needs one path per flow; this instance has flows with more")
    res = run_models(inst, models)
    if out_path is not None:
        from ..store import write_dataset

        ds = xr.Dataset(
            {"rate": (("model", "flow"), np.asarray([res[m][0] for m in models])),
             "seconds": (("model",), np.asarray([res[m][1] for m in models])),
             "flow_src": (("flow",), inst.flow_src), "flow_dst": (("flow",), inst.flow_dst)},
            coords={"model": models, "flow": np.arange(inst.n_flows)}, attrs={"instance": str(path)})
        write_dataset(ds, out_path)
    if as_json:
        print(json.dumps({m: res[m][0].tolist() for m in models}))
        return
    table = Table(title=f"{path}: {inst.n_links} links, {inst.n_flows} flows, {inst.n_paths} paths")
    table.add_column("flow", justify="right")
    table.add_column("src -> dst")
    for m in models:
        table.add_column(m, justify="right")
    shown = min(inst.n_flows, 40)
    for f in range(shown):
        table.add_row(str(f), f"{inst.flow_src[f]} -> {inst.flow_dst[f]}", *[f"{res[m][0][f]:.6g}" for m in models])
    if shown < inst.n_flows:
        table.add_row("...", f"({inst.n_flows - shown} more; --json prints all)", *[""] * len(models))
    table.add_row("mean", "", *[f"{res[m][0].mean():.6g}" for m in models], style="bold")
    table.add_row("seconds", "", *[f"{res[m][1]:.3g}" for m in models])
    out.print(table)


def run_topology(cfg: dict[str, Any], as_json: bool, out_path: Optional[Path], write_instance: Optional[Path],
                 report: Optional[str], out: Console, err: Console) -> None:
    from .evaluate import evaluate, summary
    from .instance import write_instance as write

    t = cfg["throughput"]
    instances: list = []
    if report == "bar":
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("patterns"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TextColumn("{task.description}"), TimeElapsedColumn(), console=err, transient=True) as bar:
            task = bar.add_task("", total=t["samples"])
            ds = evaluate(cfg, progress=lambda i, n, what: bar.update(task, completed=i, total=n, description=what),
                          instances_out=instances)
    elif report == "lines":  # a model's solve reports nothing until it ends: a line as each step starts
        start = time.perf_counter()

        def line(i: int, n: int, what: str) -> None:
            err.print(f"throughput, {time.perf_counter() - start:.0f} s: {what}", highlight=False, soft_wrap=True)
        ds = evaluate(cfg, progress=line, instances_out=instances)
    else:
        ds = evaluate(cfg, instances_out=instances)
    if out_path is not None:
        from ..store import write_dataset

        write_dataset(ds, out_path)
    if write_instance is not None:
        if len(instances) == 1:
            write(instances[0], write_instance)
        else:
            for i, inst in enumerate(instances):
                write(inst, write_instance.with_name(f"{write_instance.stem}.{i}{write_instance.suffix}"))
    summ = summary(ds)
    if as_json:
        print(json.dumps({"throughput": summ, "attrs": {k: ds.attrs[k] for k in (
            "topology", "routers", "nodes", "pattern", "x", "k", "max_hops", "samples", "confidence")}}))
        return
    a = ds.attrs
    pat = a["pattern"] + (f"({a['x']})" if a["pattern"] in ("random", "perm") else "")
    table = Table(title=f"{a['topology']}: {a['routers']} routers, {a['nodes']} hosts, {pat}, k = {a['k']} "
                        f"(paths <= {a['max_hops']} hops), {a['samples']} pattern(s)")
    table.add_column("model")
    table.add_column("throughput (mean flow rate)", justify="right")
    table.add_column(f"± {a['confidence']:.0%}", justify="right")
    table.add_column("per host", justify="right")
    table.add_column("min flow rate", justify="right")
    table.add_column("seconds", justify="right")
    for m, v in summ.items():
        ci = "—" if v["ci"] is None else f"{v['ci']:.4f}"
        table.add_row(m, f"{v['throughput']:.4f}", ci, f"{v['throughput_per_node']:.4f}", f"{v['min_rate']:.4f}",
                      f"{v['seconds']:.3g}")
    out.print(table)
    if out_path is not None:
        out.print(f"results written to {out_path}")


def run_crosscheck(cfg: dict[str, Any], loads: Optional[str], as_json: bool, out_path: Optional[Path],
                   out: Console, err: Console) -> None:
    from .crosscheck import crosscheck

    load_list = None
    if loads:
        try:
            load_list = [float(v) for v in loads.split(",")]
        except ValueError:
            raise ConfigError("--loads", f"must be comma-separated numbers in (0, 1] (got {loads!r})") from None
    ds = crosscheck(cfg, load_list, progress=None if as_json else (lambda msg: err.print(msg, style="dim")))
    if out_path is not None:
        from ..store import write_dataset

        write_dataset(ds, out_path)
    L = "traffic.load"
    sim = {float(ld): {"offered": float(ds.sim_offered_phits_per_node_cycle.sel({L: ld})),
                       "accepted": float(ds.sim_accepted_phits_per_node_cycle.sel({L: ld})),
                       "saturated": bool(ds.sim_saturated.sel({L: ld}))} for ld in ds[L].values}
    models = {m: float(ds.model_throughput_per_node.sel(model=m)) for m in ds.model.values.tolist()}
    sat = ds.mmf_saturated_link.values
    top = float(max(ds[L].values))
    util = ds.sim_port_utilization.sel({L: top}).values
    bottleneck = {"links": int(sat.sum()), "model_load": 1.0,
                  "sim_utilization_mean": float(util[sat].mean()) if sat.any() else None}
    if as_json:
        print(json.dumps({"models": models, "max_total": float(ds.max_total_per_node),
                          "simulation": {str(k): v for k, v in sim.items()},
                          "mmf_bottleneck_links": bottleneck,
                          "attrs": {k: ds.attrs[k] for k in ("topology", "routers", "nodes", "flows", "pattern",
                                                             "routing")}}))
        return
    a = ds.attrs
    accepted = sim[top]["accepted"]
    table = Table(title=f"{a['topology']}: {a['routers']} routers, {a['nodes']} hosts, {a['pattern']} "
                        f"({a['flows']} flows), {a['routing']} routing — models vs simulation")
    table.add_column("")
    table.add_column("throughput per host (phits/node/cycle)", justify="right")
    table.add_column("simulation / model", justify="right")
    for ld in sorted(sim):
        s = sim[ld]
        state = "saturated" if s["saturated"] else "stable"
        table.add_row(f"simulation, offered {s['offered']:.3f}", f"{s['accepted']:.4f} ({state})", "")
    names = {"mmf": "MMF", "mcf": "MCF (saturation load)", "hm": "HM", "jm": "JM", "waterfill": "water-filling"}
    for m, v in models.items():
        table.add_row(names.get(m, m), f"{v:.4f}", f"{accepted / v:.3f}" if v > 0 else "—")
    bound = float(ds.max_total_per_node)
    table.add_row("max total, no fairness (bound)", f"{bound:.4f}", f"{accepted / bound:.3f}" if bound > 0 else "—",
                  style="dim")
    out.print(table)
    if sat.any():
        out.print(f"The {int(sat.sum())} links MMF fills carry {bottleneck['sim_utilization_mean']:.3f} "
                  f"phits/cycle on average in the simulation at load {top:g}.")
    out.print(GAP_NOTE, style="dim")


def main(config: Optional[Path], instance: Optional[Path], overrides: list[str], options: dict[str, Any],
         models: Optional[str], as_json: bool, out_path: Optional[Path], write_instance: Optional[Path],
         simulate: bool, loads: Optional[str], report: Optional[str], out: Console, err: Console) -> None:
    """Dispatch to one of the three modes; every user error is a ConfigError (output paths before any work).
    `report`: how a topology's evaluation shows its progress on `err`: "bar", "lines" (--progress where no bar is
    drawn) or None."""
    from ..checks import check_output_file
    from ..store import check_out_path

    names = _models_arg(models)
    if out_path is not None:
        check_out_path(out_path)
    if write_instance is not None:
        check_output_file(write_instance, "--write-instance")
    if instance is not None:
        if config is not None or overrides or any(v is not None for v in options.values()) or simulate:
            raise ConfigError("--instance", "an instance file brings its own links, flows and paths; give no "
                              "config, --set, --pattern/--x/--k/--samples or --simulate with it")
        run_instance(instance, names or list(_settings.DEFAULT_MODELS), as_json, out_path, out)
        return
    if names is not None:
        options = dict(options, models=names)
    cfg = load_config(config, overrides, options)
    if simulate:
        if names is not None or write_instance is not None:
            raise ConfigError("--simulate", "runs all models on the engine's routes; drop --models/--write-instance")
        run_crosscheck(cfg, loads, as_json, out_path, out, err)
        return
    if loads is not None:
        raise ConfigError("--loads", "only applies with --simulate")
    run_topology(cfg, as_json, out_path, write_instance, report, out, err)
