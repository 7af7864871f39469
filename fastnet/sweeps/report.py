"""What `fastnet sweep` shows: a rich progress bar (points done, failed, ETA), or off a terminal a line at most
every 10 s as points finish, and a closing summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from .runner import Progress, sweep
from .spec import load_spec
from .store import STATUS_FAILED


LINE_SECONDS = 10.0


def _line(p: Progress, elapsed: float) -> str:
    """One progress line: points finished of all, failed, time so far and left (at this run's pace)."""
    left = p.total - p.skipped - p.done
    eta = f", about {elapsed / p.done * left:.0f} s left" if p.done and left else ""
    return (f"sweep: {p.skipped + p.done}/{p.total} points ({p.skipped} before), {p.failed} failed, "
            f"{elapsed:.0f} s{eta}")


def run(spec_path: Path, out: Path, workers: int | None, scheduler: str | None, resume: bool,
        retry_failed: bool, quiet: bool, console: Console, overrides: list[str] | None = None) -> int:
    """Run the sweep with a progress bar on a terminal; return how many points of the dataset failed. `overrides`:
    --set items applied to the spec's base."""
    spec = load_spec(spec_path, overrides or ())
    t0 = time.perf_counter()
    last = Progress(total=spec.size)
    kwargs: dict[str, Any] = dict(workers=workers, scheduler=scheduler, resume=resume, retry_failed=retry_failed)
    if quiet or not console.is_terminal:
        shown = t0

        def keep(p: Progress) -> None:  # off a terminal: a line as points finish, at most one per LINE_SECONDS
            nonlocal last, shown
            last = p
            now = time.perf_counter()
            if not quiet and (now - shown >= LINE_SECONDS or p.skipped + p.done == p.total):
                shown = now
                console.print(_line(p, now - t0), highlight=False)
        ds = sweep(spec, out, progress=keep, **kwargs)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        columns = (TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("points"),
                   TextColumn("[red]{task.fields[failed]} failed"), TimeElapsedColumn(), TextColumn("ETA"),
                   TimeRemainingColumn())
        with Bar(*columns, console=console) as bar:
            task = bar.add_task("sweep", total=spec.size, failed=0)

            def show(p: Progress) -> None:
                nonlocal last
                last = p
                bar.update(task, completed=p.skipped + p.done, failed=p.failed)
            ds = sweep(spec, out, progress=show, **kwargs)
    failed = [i for i, s in enumerate(ds["status"].values.ravel()) if s == STATUS_FAILED]
    if not quiet:
        console.print(f"{spec.size} points: {last.done - last.failed} finished now, {last.skipped} before, "
                      f"{len(failed)} failed; {time.perf_counter() - t0:.1f} s -> {out}", highlight=False)
        errors = ds["error"].values.ravel()
        for i in failed[:5]:
            line = f"  failed: {spec.describe(spec.position(i))}: {str(errors[i]).splitlines()[0]}"
            console.print(escape(line), highlight=False, soft_wrap=True)  # ("[u, v]" in a message is no markup)
        if len(failed) > 5:
            console.print(f"  ... and {len(failed) - 5} more (the dataset's error variable has every message)")
    return len(failed)
