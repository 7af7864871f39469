"""Running a sweep on Dask: a LocalCluster of worker processes, or an existing dask.distributed scheduler.

The parent resolves every point (a bad spec fails before anything runs), runs one short probe of each kind of
point (its results fix the store's variables and extra dims; the probe also fills numba's on-disk cache, so that
workers load the kernels instead of compiling them side by side: house style 10 and numba#4807), creates the
store, and submits the points that have no done marker. Each task runs `fastnet.run`, writes its own region and
marker (store.py) and returns a small summary; nothing but that summary travels back.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import traceback
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import xarray as xr

from .. import config as _config
from ..checks import check_parent_dir
from ..errors import ConfigError, FastnetError
from ..version import __version__
from . import store
from .spec import Spec, load_spec

PROBE_CYCLES = {"warmup": 50, "measure": 50, "drain": 100}  # a probe only needs the kernels and the schema
PROBE_TRIES = 3  # points of a kind tried before the kind is left to fail in the sweep itself


@dataclass
class Progress:
    total: int
    skipped: int = 0  # finished by an earlier run (--resume)
    done: int = 0  # finished by this run, failed ones included
    failed: int = 0


def sweep(spec: str | Path | dict[str, Any] | Spec, out: str | Path | None = None, *, workers: int | None = None,
          scheduler: str | None = None, resume: bool = False, retry_failed: bool = False,
          progress: Callable[[Progress], None] | None = None) -> xr.Dataset:
    """Run every point of a sweep spec (TOML path or dict) and return its dataset.

    `out`: the zarr store (None: a temporary one, loaded into memory and removed). `workers`: LocalCluster
    processes (default: one per core). `scheduler`: address of an existing dask.distributed scheduler; `out` must
    then be on a path every worker can reach. `resume`: continue an existing store, skipping finished points
    (`retry_failed`: and running failed ones again). `progress` is called with the counts after each point.
    """
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    configs = spec.configs()
    if out is None:
        if scheduler:
            raise ConfigError("out", "a sweep on a remote scheduler needs a store path every worker can reach")
        tmp = Path(tempfile.mkdtemp(prefix="fastnet-sweep-"))
        try:
            return _run(spec, configs, tmp / "sweep.zarr", workers, None, False, False, progress).load()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return _run(spec, configs, Path(out).absolute(), workers, scheduler, resume, retry_failed, progress)


def _run(spec: Spec, configs: list[dict[str, Any]], path: Path, workers: int | None, scheduler: str | None,
         resume: bool, retry_failed: bool, progress: Callable[[Progress], None] | None) -> xr.Dataset:
    if workers is not None and workers < 1:
        raise ConfigError("--workers", f"must be >= 1 (got {workers})")
    if workers is not None and scheduler:
        raise ConfigError("--workers", "sets the size of a local cluster; a --scheduler has its own workers")
    exists = path.exists()
    if exists and not resume:
        raise ConfigError("--out", f"{path} exists; pass --resume to finish that sweep, or choose another path")
    check_parent_dir(path, "--out")
    attrs = _same_spec(path, spec) if exists else {}
    with contextlib.ExitStack() as stack:  # a remote scheduler is reached first: a bad address writes nothing
        remote = stack.enter_context(_remote(scheduler)) if scheduler else None
        probes = probe(spec, configs)
        lay = store.layout_from_probes(spec, configs, probes.datasets)
        if exists:
            if attrs.get("sweep_layout") != lay.to_json():
                raise ConfigError("--resume", f"{path} was written by fastnet {attrs.get('fastnet_version')} with "
                                  f"other variables than fastnet {__version__} produces; use another --out")
        else:
            store.create(path, spec, lay, _config.resolve(spec.base))
        done = store.markers(path)
        if retry_failed:
            for i, m in list(done.items()):
                if m["status"] != "ok":
                    store.forget(path, i)
                    del done[i]
        state = Progress(total=spec.size, skipped=len(done))
        state.done = _keep_probed_points(path, lay, probes, done)
        todo = [i for i in range(spec.size) if i not in done]
        if progress:
            progress(state)
        if todo:
            point_checkpoint(path, 0).parent.mkdir(exist_ok=True)
            if remote is not None:
                _warm_workers(remote, probes.configs)
            client = remote or stack.enter_context(_local_cluster(workers, len(todo)))
            _submit_all(client, str(path), lay, todo, configs, state, progress)
    with contextlib.suppress(OSError):  # every point done: no checkpoint is left (a failed task's may be)
        point_checkpoint(path, 0).parent.rmdir()
    return xr.open_zarr(path, chunks=None)  # lazy arrays without a dask graph of one task per point


def probe_kinds(configs: list[dict[str, Any]]) -> list[list[int]]:
    """Points grouped by kind (topology, routing, traffic pattern, workload): together the kinds run every kernel
    variant the sweep uses, and each kind has one set of extra dims (ports)."""
    kinds: dict[str, list[int]] = {}
    for i, c in enumerate(configs):
        w = c.get("workload") or {}
        workload = [w.get(k) for k in ("kind", "variant", "tasks")]  # not its sizes: a probe runs it to the end
        key = json.dumps([c["topology"], c["routing"], c["traffic"]["pattern"], workload], sort_keys=True)
        kinds.setdefault(key, []).append(i)
    return list(kinds.values())


def short(cfg: dict[str, Any]) -> dict[str, Any]:
    sim = {**cfg["sim"], **{k: min(cfg["sim"][k], n) for k, n in PROBE_CYCLES.items()}, "checkpoint_every": "auto"}
    return {**cfg, "sim": sim}


def point_checkpoint(path: Path, index: int) -> Path:
    """Where point `index` of the sweep in `path` keeps its checkpoint while it runs: beside the store, in
    `<store>.checkpoints/` (the point's sim.checkpoint_every, "auto": every 10 minutes)."""
    return path.with_name(path.name + ".checkpoints") / f"point-{index}.ckpt"


@dataclass
class Probes:
    datasets: list[xr.Dataset]  # one per kind that ran: the store's variables and extra dims
    configs: list[dict[str, Any]]  # what each ran (a remote cluster's workers run them to fill their caches)
    points: dict[int, tuple[xr.Dataset, float]]  # closed-loop probes: the point itself, and its seconds


def probe(spec: Spec, configs: list[dict[str, Any]]) -> Probes:
    """A short run of the first point of each kind that runs at all (trying up to PROBE_TRIES); a point that
    fails here will fail in the sweep too and be recorded there. Raises the first error if no point runs.
    A closed-loop workload has no shorter form: its probe is the point's own run, kept as that point's result."""
    from ..sim import run
    from ..workloads.build import workload_section

    out, first_error = Probes([], [], {}), None
    for kind in probe_kinds(configs):
        for i in kind[:PROBE_TRIES]:
            whole = workload_section(configs[i])["kind"] != "open_loop"
            cfg = configs[i] if whole else short(configs[i])
            t0 = time.perf_counter()
            try:
                ds = run(cfg)
            except FastnetError as e:
                first_error = first_error or (i, e)
                continue
            out.datasets.append(ds)
            out.configs.append(cfg)
            if whole:
                out.points[i] = (ds, time.perf_counter() - t0)
            break
    if not out.datasets:
        i, e = first_error
        raise spec.error_at(e, spec.position(i)) from None
    return out


def _keep_probed_points(path: Path, lay: store.Layout, probes: Probes, done: dict[int, Any]) -> int:
    """Write the closed-loop points the probes ran whole, as a worker would have, so they do not run twice;
    returns how many."""
    kept = 0
    for i, (ds, seconds) in probes.points.items():
        if i not in done:
            kept += 1
            marker = {"status": "ok", "session": "probe", "pid": os.getpid(), "seconds": seconds,
                      "compiled": kernel_compiles(), "resumed_from_cycle": 0}
            store.write_point(path, lay, i, store.point_dataset(lay, ds), marker)
            done[i] = marker
    return kept


def _same_spec(path: Path, spec: Spec) -> dict[str, Any]:
    """The store's attrs, if it holds this very sweep (checked before any probe runs)."""
    attrs = store.read_attrs(path)
    if "sweep_spec" not in attrs:
        raise ConfigError("--out", f"{path} is not a fastnet sweep store; choose another path")
    if attrs["sweep_spec"] != spec.to_json():
        raise ConfigError("--resume", f"{path} holds a different sweep (its spec differs from this one); "
                          "use another --out")
    return attrs


@contextlib.contextmanager
def _remote(scheduler: str) -> Iterator[Any]:
    """A client of an existing dask.distributed scheduler."""
    from distributed import Client

    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:
        raise ConfigError("--scheduler", f"cannot connect to {scheduler} ({e})") from None
    with client:
        yield client


@contextlib.contextmanager
def _local_cluster(workers: int | None, points: int) -> Iterator[Any]:
    """A LocalCluster of single-threaded worker processes and its client."""
    import numba
    from distributed import Client, LocalCluster

    from ..kernels import _jit  # noqa: F401  (sets numba's cache directory)

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    n = min(workers or cores, points)  # a resume with one point left needs one worker
    # One single-threaded process per core: points are independent and each is one sequential kernel loop;
    # numba's parallel routing-table build gets the cores a worker would otherwise oversubscribe.
    # The workers load the kernels the parent's probe compiled, from the cache directory the parent uses.
    env = {"NUMBA_NUM_THREADS": str(max(1, cores // n)), "NUMBA_CACHE_DIR": numba.config.CACHE_DIR}
    # ":0": the scheduler's HTTP server on a free port (None still takes 8787, and warns when another has it)
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR, env=env) as cluster, Client(cluster) as client:
        yield client


def _warm_workers(client: Any, probes: list[dict[str, Any]]) -> None:
    """Fill each host's numba cache through one worker there, then load it on the others (never compiling on
    two workers of one host at once), and check that the workers run this fastnet."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    first: dict[str, str] = {}
    for addr, w in info.items():
        first.setdefault(w.get("host", addr), addr)
    rest = [a for a in info if a not in first.values()]
    versions = client.run(warm_worker, probes, workers=list(first.values()))
    if rest:
        versions.update(client.run(warm_worker, probes, workers=rest))
    wrong = {a: v for a, v in versions.items() if v != __version__}
    if wrong:
        addr, v = next(iter(wrong.items()))
        raise ConfigError("--scheduler", f"worker {addr} runs fastnet {v}, this is fastnet {__version__}")


def warm_worker(probes: list[dict[str, Any]]) -> str:
    from ..sim import run

    for cfg in probes:
        run(cfg)
    return __version__


def _submit_all(client: Any, path: str, lay: store.Layout, todo: list[int], configs: list[dict[str, Any]],
                state: Progress, progress: Callable[[Progress], None] | None) -> None:
    from distributed import as_completed

    session = uuid.uuid4().hex[:12]
    lay_f = client.scatter(lay, broadcast=True)
    # Highest offered load first: points near saturation run longest (drain), and starting the longest first
    # keeps every worker busy until the end instead of leaving one to finish the slowest point alone.
    todo = sorted(todo, key=lambda i: -configs[i]["traffic"]["load"])
    futures = {client.submit(run_point, path, lay_f, i, configs[i], session, key=f"fastnet-point-{i}-{session}",
                             pure=False): i for i in todo}
    for fut in as_completed(futures):
        i = futures[fut]
        try:
            ok = fut.result()["ok"]
        except Exception as e:  # noqa: BLE001 - the task itself died (worker lost, store unreachable, ...)
            ok = False
            text = f"the task failed outside fastnet.run: {type(e).__name__}: {e}"
            with contextlib.suppress(Exception):  # best effort; the point has no marker and runs again on resume
                store.write_point(path, lay, i, store.point_dataset(lay, None, text), None)
        state.done += 1
        state.failed += not ok
        if progress:
            progress(state)


def run_point(path: str, lay: store.Layout, index: int, cfg: dict[str, Any], session: str) -> dict[str, Any]:
    """A Dask task: run one point, write its region and then its done marker; any error of the run is recorded
    as the point's error (the sweep goes on)."""
    from ..checkpoint import read_header
    from ..sim import run

    t0 = time.perf_counter()
    ck = point_checkpoint(Path(path), index)
    resumed = 0
    try:
        try:  # a point killed mid-run (its worker lost) goes on from its checkpoint
            resumed = read_header(ck)["cycle"] if ck.exists() else 0
            result = run(cfg, checkpoint=ck, resume=ck if ck.exists() else None)
        except ConfigError as e:
            if e.field != "--resume":
                raise
            ck.unlink(missing_ok=True)  # one this fastnet cannot resume (another version): run it from the start
            resumed = 0
            result = run(cfg, checkpoint=ck)
        ds = store.point_dataset(lay, result)
        error = ""
    except Exception as e:  # noqa: BLE001 - every failure of a point is data for the sweep, not a crash
        error = f"{type(e).__name__}: {e}"
        if not isinstance(e, FastnetError):  # a bug: keep where it happened
            error += "\n" + traceback.format_exc(limit=-8)
        ds = store.point_dataset(lay, None, error)
    marker = {"status": "failed" if error else "ok", "session": session, "pid": os.getpid(),
              "seconds": time.perf_counter() - t0, "compiled": kernel_compiles(), "resumed_from_cycle": resumed}
    store.write_point(path, lay, index, ds, marker)
    ck.unlink(missing_ok=True)  # (a failed run leaves its checkpoint: it would fail again)
    return {"index": index, "ok": not error, "error": error}


def kernel_compiles() -> int:
    """How many fastnet kernels this process compiled rather than loaded from numba's cache."""
    from numba.core.dispatcher import Dispatcher

    seen: dict[int, Dispatcher] = {}
    for name, mod in list(sys.modules.items()):
        if name.startswith("fastnet.") and mod is not None:
            for obj in vars(mod).values():
                for d in obj.values() if isinstance(obj, dict) else [obj]:  # dicts: kernels made on demand (LOOPS)
                    if isinstance(d, Dispatcher):
                        seen[id(d)] = d
    return sum(sum(d.stats.cache_misses.values()) for d in seen.values())
