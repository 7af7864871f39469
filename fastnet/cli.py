"""The `fastnet` command: run, info, sweep, plot (and the commands other modules register on `app`).

Errors a user can fix (FastnetError: bad config, deadlock) print one line and exit with code 2; nothing is
written to --out unless the run finished.
"""

from __future__ import annotations

import json
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import booksim as _booksim
from . import config as _config
from .arguments import config_from_args
from .checks import check_output_file
from .errors import ConfigError, FastnetError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="fastnet: cycle-level interconnection-network simulator.")
err = Console(stderr=True)
out = Console()


def error_line(message: str) -> None:
    """Bad input's one line on stderr (the message printed as it is, not as rich markup)."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def fail(message: str) -> None:
    error_line(message)
    raise typer.Exit(2)


def show_config(cfg: dict[str, Any]) -> None:
    """--show-config: the resolved config as TOML on stdout (which `fastnet run FILE` reads back the same)."""
    text = _config.to_toml(cfg, "the resolved fastnet config: every key (docs/config.md)")
    print(text, end="")  # not through rich, which would take [section] for markup


def compile_kernels_saying_so(s: Any, quiet: bool) -> None:
    """Compile (or load from numba's cache) the kernels of a prepared run, telling the user when that is the
    first run's compilation: a spinner with the elapsed time on a terminal, one line afterwards elsewhere."""
    import threading
    import time

    import numba

    from .sim import compile_kernels

    what = (f"compiling kernels ({s.cfg['routing']['algorithm']} routing{', closed loop' if s.closed_loop else ''}"
            "; first run only)")
    t0 = time.perf_counter()
    if quiet or not err.is_terminal:
        compile_kernels(s)
        took = time.perf_counter() - t0
        if not quiet and took > 1.0:  # a cache load takes a fraction of a second
            err.print(f"{what} in {numba.config.CACHE_DIR} ({took:.1f} s)", highlight=False, soft_wrap=True)
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TimeElapsedColumn(), TextColumn("{task.description}"), console=err,
                  transient=True) as bar:
        task = bar.add_task("loading kernels", total=None)
        done = threading.Event()
        # the text changes only once it is clear numba is compiling, not loading from its cache
        timer = threading.Timer(1.0, lambda: done.is_set() or bar.update(task, description=what))
        timer.start()
        try:
            compile_kernels(s)
        finally:
            done.set()
            timer.cancel()


SPEED_WINDOW = 60.0  # seconds of progress the cycles/s figure and the time left are estimated from
PROGRESS_EVERY = 5.0  # default seconds between two --progress lines (with --json or off a terminal)


def cycles_per_second(speed: float | None) -> str:
    if speed is None:
        return "- cycles/s"
    return f"{speed:,.0f} cycles/s" if speed >= 100 else f"{speed:.3g} cycles/s"


def run_total(s: Any) -> int | None:
    """The cycle a prepared run is expected to end at: the end of the drain (open loop); for MPI, the longest
    rank's computation plus, for a trace, its recorded time in MPI calls (mpi/build.py expected_cycles: the
    trace's span; a generator's program: a lower bound), None when that is 0; None for the other closed-loop
    workloads."""
    if s.program is not None:
        return int(s.program.expected) or None
    return None if s.closed_loop else s.params.w1 + s.cfg["sim"]["drain"]


def progress_line(t: int, total: int | None, cycles: int, seconds: float) -> str:
    """One --progress line: cycle t of the total, the speed so far (`cycles` simulated in `seconds`), time left."""
    import datetime

    speed = cycles / seconds if seconds > 0 else None
    done = f"{t:,} of {total:,} cycles ({100 * t / total:.1f} %)" if total and t <= total else f"{t:,} cycles"
    if not total:
        left = "time left unknown (no total)"
    elif t > total:
        left = f"time left unknown (past the estimated {total:,} cycles)"
    elif speed:
        left = f"{datetime.timedelta(seconds=round((total - t) / speed))} left"
    else:
        left = "time left unknown"
    return f"progress: {done}, {cycles_per_second(speed)}, {left}"


@contextmanager
def progress_lines(s: Any, every: float) -> Iterator[Callable[[int, int], None]]:
    """--progress where no bar is drawn (--json, off a terminal): a line on stderr every `every` seconds (at the
    end of the first kernel call after that: calls last about half a second, sim._next_chunk)."""
    import time

    total, t0 = run_total(s), s.cycle
    start = last = time.perf_counter()

    def report(t: int, end: int) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last >= every:
            last = now
            err.print(progress_line(t, total, t - t0, now - start), highlight=False, soft_wrap=True)
    yield report


def draws_bar(quiet: bool, as_json: bool) -> bool:
    """Whether a command draws a progress bar on stderr: on a terminal, unless --quiet or --json (where it does
    not, --progress prints lines instead)."""
    return not (quiet or as_json) and err.is_terminal


def simulate_reporting(s: Any, occupancy: Any, bar: bool, lines: float | None, checkpoint: Any = None) -> None:
    """simulate() with the progress bar (`bar`), or a --progress line every `lines` seconds, or neither."""
    from .sim import simulate

    if bar:
        with simulation_progress(s) as report:
            simulate(s, progress=report, occupancy=occupancy, checkpoint=checkpoint)
    elif lines is not None:
        with progress_lines(s, lines) as report:
            simulate(s, progress=report, occupancy=occupancy, checkpoint=checkpoint)
    else:
        simulate(s, occupancy=occupancy, checkpoint=checkpoint)


@contextmanager
def simulation_progress(s: Any) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr for a prepared run: cycles done of the total (none for a closed-loop workload,
    whose length is unknown), simulated cycles per second, time elapsed and time left (both from rich's speed
    estimate over the last SPEED_WINDOW seconds); yields simulate()'s progress callback."""
    from rich.progress import (
        BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
    )
    from rich.text import Text

    class CyclesPerSecond(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(cycles_per_second(task.speed), style="progress.data.speed")

    total = run_total(s)
    count = "{task.completed:,}/{task.total:,} cycles" if total else "{task.completed:,} cycles"
    columns = [TextColumn("simulating"), BarColumn(), TextColumn(count), CyclesPerSecond(), TimeElapsedColumn()]
    if total:
        columns += [TextColumn("left"), TimeRemainingColumn()]
    with Progress(*columns, console=err, transient=True, speed_estimate_period=SPEED_WINDOW) as bar:
        task = bar.add_task("run", total=total, completed=s.cycle)
        # an MPI run's total is an estimate: past it, the bar grows with the run (no time left to show)
        yield lambda t, end: bar.update(task, completed=t, total=max(total, t) if total else None)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


@app.command()
def run(
    config: Optional[Path] = typer.Argument(None, help="TOML run config or BookSim2 config; omit for the built-in "
                                            "1056-node dragonfly, or with --set for the documented defaults"),
    set_: list[str] = typer.Option([], "--set", help="override section.key=value (value parsed as TOML)"),
    machine: Optional[str] = typer.Option(None, "--machine", help="start from a machine preset (fastnet machines)"),
    out_path: Optional[Path] = typer.Option(None, "--out", help="write the results dataset to this .zarr"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object instead of a table"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
    show: bool = typer.Option(False, "--show-config", help="print the resolved config as TOML and exit without "
                              "simulating"),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="write the run's whole state to this file "
                                              "every sim.checkpoint_every (\"auto\": 10 min of wall time) and when "
                                              "SIGINT or SIGTERM stops the run; removed once it finishes"),
    resume: Optional[Path] = typer.Option(None, "--resume", help="go on from this checkpoint (without a config or "
                                          "--set: the checkpoint's config); checkpoints go on to it"),
    progress: bool = typer.Option(False, "--progress", help="with --json or off a terminal (where no bar is "
                                  "drawn): print cycles done, the total and time left to stderr as the run goes"),
    progress_every: float = typer.Option(PROGRESS_EVERY, "--progress-every", min=0.0,
                                         help="seconds between two --progress lines"),
) -> None:
    """Simulate one configuration and print a summary."""
    import time
    from contextlib import nullcontext

    from .checkpoint import Checkpointer, RunStopped, read_header
    from .occupancy import recorder_for
    from .results import to_dataset
    from .sim import start
    from .store import StagedStore, check_out_path

    try:
        if resume is not None and config is None and not set_ and machine is None:
            cfg = read_header(resume)["config"]
        else:
            cfg = config_from_args(config, set_, machine)
        if show:
            show_config(cfg)
            return
        t0 = time.perf_counter()
        if out_path is not None:
            check_out_path(out_path)
        ck = Checkpointer(checkpoint if checkpoint is not None else resume, cfg, fresh=resume is None)
        with ck.signals():
            s, streamed = start(cfg, resume, ck)
            # the store is staged next to --out: streamed variables go there as the run goes, and it replaces
            # --out only once the run has finished
            with (StagedStore(out_path, tmp=streamed["store"] if streamed else None) if out_path is not None
                  else nullcontext()) as stage:
                try:
                    occupancy = recorder_for(s, stage.tmp if stage else None, streamed)
                    compile_kernels_saying_so(s, quiet=quiet or as_json)
                    bar = draws_bar(quiet, as_json)
                    simulate_reporting(s, occupancy, bar, progress_every if progress and not bar else None, ck)
                except BaseException:
                    if stage is not None:
                        stage.keep = ck.on_disk()  # the checkpoint's occupancy rows are in the staged store
                    raise
                ds = to_dataset(s, wall_seconds=time.perf_counter() - t0)
                if stage is not None:
                    stage.commit(ds)
            ck.finished()
    except FastnetError as e:
        fail(str(e))
        return
    except RunStopped as e:
        if e.finished:  # the signal came once the loop was over: the results are complete, show them first
            _print_run(ds, s, as_json)
        err.print(str(e), highlight=False, soft_wrap=True)
        if e.path is not None and e.path.exists():
            again = ["fastnet", "run", "--resume", str(e.path)] + (["--out", str(out_path)] if out_path else [])
            err.print(f"resume with: {shlex.join(again)}", highlight=False, soft_wrap=True)
        raise typer.Exit(e.exit_code) from None
    _print_run(ds, s, as_json)
    if out_path is not None and not as_json:
        out.print(f"results written to {out_path}")


def _print_run(ds: Any, s: Any, as_json: bool) -> None:
    """A run's summary: one JSON object, or a table (and an MPI run's rates and warnings)."""
    from .results import SUMMARY_ATTRS, summary

    summ = summary(ds)
    if as_json:
        print(json.dumps(summ))
        return
    t = ds.attrs
    load = (f"workload {t['workload']}" if "workload" in t
            else f"{s.cfg['traffic']['pattern']} at {s.cfg['traffic']['load']:g}")
    table = Table(title=f"{t['topology']}: {t['routers']} routers, {t['nodes']} nodes, "
                        f"{s.cfg['routing']['algorithm']} routing, {load}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("units")
    for name, value in summ.items():
        if name == "warnings" or name in SUMMARY_ATTRS:  # printed below the table
            continue
        units = ds[name].attrs.get("units", "") if name in ds else "s"
        table.add_row(name, _fmt(value), units)
    out.print(table)
    if "mpi_events" in ds:
        out.print(f"{int(ds.mpi_calls):,} MPI calls and {int(ds.messages + ds.control_messages):,} messages in "
                  f"{s.simulate_seconds:.2f} s of simulation ({t['wall_seconds']:.2f} s in all): "
                  f"{t['mpi_events_per_second']:,.0f} MPI events/s")
    for warning in summ["warnings"]:
        out.print(f"warning: {warning}", highlight=False)


@app.command()
def info(
    config: Optional[Path] = typer.Argument(None, help="TOML run config or BookSim2 config; omit for the built-in "
                                            "dragonfly, or with --set for the documented defaults"),
    set_: list[str] = typer.Option([], "--set", help="override section.key=value"),
    machine: Optional[str] = typer.Option(None, "--machine", help="start from a machine preset (fastnet machines)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    export: Optional[Path] = typer.Option(None, "--export", help="also write the topology: .graphml (routers and "
                                          "nodes), .edges/.edgelist/.txt (router links, read by the graph kind) or "
                                          ".anynet (BookSim2's anynet file)"),
    show: bool = typer.Option(False, "--show-config", help="print the resolved config as TOML and exit"),
    list_names: bool = typer.Option(False, "--registries", help="list every name a config can choose (topology "
                                    "kinds, routings, allocators, patterns, workloads, MPI programs, trace formats, "
                                    "collective algorithms) and exit"),
) -> None:
    """Describe a topology: routers, nodes, radix, diameter, links and a memory estimate."""
    from .inspect import describe, registry_table

    if list_names:
        _print_registries(registry_table(), as_json)
        return
    try:
        cfg = config_from_args(config, set_, machine)
        if show:
            show_config(cfg)
            return
        facts = describe(cfg)
        if export is not None:
            from .topology import build_network
            from .build.graph import write_network

            write_network(build_network(cfg), export)
            err.print(f"topology written to {export}", highlight=False)
    except FastnetError as e:
        fail(str(e))
        return
    if as_json:
        print(json.dumps(facts))
        return
    table = Table(title="fastnet info")
    table.add_column("property")
    table.add_column("value", justify="right")
    for k, v in facts.items():
        table.add_row(k, _fmt(v))
    out.print(table)


def _print_registries(tables: dict[str, list[dict[str, Any]]], as_json: bool) -> None:
    if as_json:
        print(json.dumps(tables))
        return
    for key, rows in tables.items():
        table = Table(title=key)
        table.add_column("name")
        table.add_column("what")
        for row in rows:
            table.add_row(row["name"], row["doc"])
        out.print(table)


@app.command()
def machines(as_json: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """List the machine presets (`fastnet run --machine NAME`, or `[machine] name = NAME` in a config)."""
    from . import machines as _machines

    rows = {name: _machines.title(name) for name in _machines.names()}
    if as_json:
        print(json.dumps(rows))
        return
    table = Table(title="fastnet machines (fastnet/machines/*.toml; docs/machines.md)")
    table.add_column("name")
    table.add_column("machine")
    for name, text in rows.items():
        table.add_row(name, text)
    out.print(table)


@app.command()
def convert(
    config: Path = typer.Argument(..., help="BookSim2 config file (key = value; statements)"),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="write the TOML here (default: print it)"),
) -> None:
    """Convert a BookSim2 config into a fastnet TOML run config (docs/booksim.md)."""
    try:
        if output is not None:
            check_output_file(output, "--output")
        if not _booksim.is_booksim_file(config):
            _config.read_toml(config)  # a missing file or bad TOML says so
            raise ConfigError("config", f"{config} is TOML, not a BookSim2 config: run it as it is")
        cfg = _booksim.read_file(config)
        resolved = _config.resolve(cfg)  # check it before writing
    except FastnetError as e:
        fail(str(e))
        return
    from .memory import check_network_fits

    try:  # convert builds nothing: a config for a larger machine is written, with a note (run refuses it here)
        check_network_fits(resolved)
    except ConfigError as e:
        err.print(f"note: fastnet run would refuse it on this machine: {escape(str(e))}", highlight=False,
                  soft_wrap=True)
    text = _config.to_toml(cfg, f"fastnet run config converted from the BookSim2 config {config}\n"
                                "(BookSim2's defaults written out; docs/booksim.md has the mapping)")
    if output is None:
        print(text, end="")
        return
    output.write_text(text)
    out.print(f"wrote {output}")


@app.command()
def sweep(
    spec: Path = typer.Argument(..., help="TOML sweep spec: a base run config and the axes to sweep (docs/sweep.md)"),
    out_path: Path = typer.Option(..., "--out", help="zarr store of the results (one dataset, one dim per axis)"),
    workers: Optional[int] = typer.Option(None, "--workers", help="local Dask worker processes (default: one per core)"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler",
                                            help="run on this dask.distributed scheduler (tcp://host:port)"),
    resume: bool = typer.Option(False, "--resume", help="continue the sweep in --out, skipping finished points"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="with --resume, run failed points again"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar and no summary"),
    overrides: list[str] = typer.Option([], "--set", help="override a key of the spec's base: section.key=value "
                                        "(repeatable), as fastnet run --set"),
) -> None:
    """Run every point of a parameter sweep on Dask; the exit code is the number of failed points (<= 125)."""
    from .sweeps import report

    try:
        failed = report.run(spec, out_path, workers, scheduler, resume, retry_failed, quiet, err, overrides)
    except FastnetError as e:
        fail(str(e))
        return
    except KeyboardInterrupt:
        err.print("interrupted: finished points are saved; rerun with --resume to run the rest")
        raise typer.Exit(130) from None
    raise typer.Exit(min(failed, 125))


@app.command()
def plot(
    result: Path = typer.Argument(..., help="a sweep's zarr store, or a run's (fastnet run --out) recorded with "
                                  "sim.occupancy_interval"),
    output: Path = typer.Option(..., "-o", "--output", help="figure file: .png, .svg or .pdf"),
    x: Optional[str] = typer.Option(None, "--x", help="axis along x (default: traffic.load if swept)"),
    y: list[str] = typer.Option([], "--y", help="variable to draw, repeatable (default: latency and throughput)"),
    hue: Optional[str] = typer.Option(None, "--hue", help="one curve per value of this axis (default: the next varying one)"),
    sel: list[str] = typer.Option([], "--sel", help="fix another axis: AXIS=VALUE (repeatable)"),
    network_only: bool = typer.Option(False, "--network-only", help="occupancy heatmap: router-to-router ports "
                                      "only (no injection ports)"),
    reduce: Optional[str] = typer.Option(None, "--reduce", help="occupancy heatmap: mean (default) or max of the "
                                         "ports and samples one cell stands for on a large network"),
) -> None:
    """Plot a sweep (curves over an axis, or router x port heatmaps for per-port variables), or a run's port
    occupancy over time (ports ordered by router)."""
    from .plot import open_result, plot as draw

    try:
        check_output_file(output, "--output")
        draw(open_result(result), output, x=x, y=y, hue=hue, sel=sel, network_only=network_only, reduce=reduce)
    except FastnetError as e:
        fail(str(e))
        return
    out.print(f"wrote {output}")


@app.command()
def throughput(
    config: Optional[Path] = typer.Argument(None, help="TOML config whose topology the models run on"),
    instance: Optional[Path] = typer.Option(None, "--instance", help="JSON instance: links, flows, paths"),
    pattern: Optional[str] = typer.Option(None, "--pattern", help="random, perm, or an engine pattern"),
    x: Optional[int] = typer.Option(None, "--x", help="X of random(X) / perm(X)"),
    k: Optional[int] = typer.Option(None, "--k", help="paths per flow (k shortest within max_hops)"),
    samples: Optional[int] = typer.Option(None, "--samples", help="random patterns to average"),
    max_hops: Optional[int] = typer.Option(None, "--max-hops", help="longest path in router hops"),
    seed: Optional[int] = typer.Option(None, "--seed", help="seed of patterns and path tie-breaks"),
    models: Optional[str] = typer.Option(None, "--models", help="comma list of mmf,mcf,hm,jm,waterfill"),
    set_: list[str] = typer.Option([], "--set", help="override section.key=value (e.g. throughput.k=4)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    out_path: Optional[Path] = typer.Option(None, "--out", help="write the results dataset to this .zarr"),
    write_instance: Optional[Path] = typer.Option(None, "--write-instance", help="save the instance as JSON (of "
                                                  "several samples: NAME.0.json, NAME.1.json, ...)"),
    simulate: bool = typer.Option(False, "--simulate", help="cross-check: models vs the cycle engine on the "
                                  "config's pattern and single-path routing"),
    loads: Optional[str] = typer.Option(None, "--loads", help="with --simulate: comma list of offered loads"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
    progress: bool = typer.Option(False, "--progress", help="with --json or off a terminal (where no bar is "
                                  "drawn): print each step to stderr as it starts, with the time spent"),
) -> None:
    """Analytic throughput: MMF, MCF, Hoefler's and Jain's methods (docs/throughput.md)."""
    from .throughput.command import main as throughput_main

    options = {"pattern": pattern, "x": x, "k": k, "samples": samples, "max_hops": max_hops, "seed": seed}
    report = "bar" if draws_bar(quiet, as_json) else "lines" if progress else None
    try:
        throughput_main(config, instance, set_, options, models, as_json, out_path, write_instance, simulate, loads,
                        report, out, err)
    except FastnetError as e:
        fail(str(e))


def main() -> None:
    try:
        app()
    except FastnetError as e:  # raised outside a command's own handling
        error_line(str(e))
        sys.exit(2)
    except MemoryError:  # sizes each within bounds whose product is too large to build (a network of 2^31 nodes)
        error_line("config: the network or workload it describes does not fit in memory (docs/memory.md)")
        sys.exit(2)


if __name__ == "__main__":
    main()
