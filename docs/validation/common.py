"""Shared helpers of the validation scripts: run a list of configs, keep raw rows as CSV, and rewrite one
marked section of docs/validation.md with a markdown table."""

from __future__ import annotations

import csv
import datetime as dt
import sys
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "validation.md"
REFERENCE = HERE.parents[2] / "shared" / "reference"

sys.path.insert(0, str(HERE.parents[1]))  # the fastnet next to these scripts
sys.path.insert(0, str(HERE.parent))  # docs/markers.py

import fastnet  # noqa: E402
from markers import replace_section  # noqa: E402


def default_metrics(ds: Any) -> dict[str, Any]:
    return {
        "accepted": float(ds.accepted_phits_per_node_cycle),
        "offered": float(ds.offered_phits_per_node_cycle),
        "latency": float(ds.packet_latency_mean),
        "hops": float(ds.hops_mean),
        "unstable": int(ds.unstable),
        "wall_s": round(ds.attrs["wall_seconds"], 2),
    }


def _run_one(metrics: Callable[[Any], dict[str, Any]], cfg: dict[str, Any]) -> dict[str, Any]:
    return metrics(fastnet.run(cfg))


def run_points(configs: Iterable[tuple[dict[str, Any], dict[str, Any]]],
               metrics: Callable[[Any], dict[str, Any]] | None = None, workers: int = 1) -> list[dict[str, Any]]:
    """Run (labels, config) pairs; a row per point: the labels plus the metrics. `workers` > 1 runs the points
    in that many processes (then `metrics` must be a module-level function, so that it pickles)."""
    configs = list(configs)
    measure = partial(_run_one, metrics or default_metrics)
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as ex:
            return _rows(configs, ex.map(measure, [cfg for _, cfg in configs]))
    return _rows(configs, map(measure, [cfg for _, cfg in configs]))


def _rows(configs: list[tuple[dict[str, Any], dict[str, Any]]],
          results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each point's labels and metrics as one row, printed as it arrives."""
    rows = []
    for (labels, _), m in zip(configs, results):
        rows.append({**labels, **m})
        print(rows[-1], flush=True)
    return rows


def write_csv(name: str, rows: list[dict[str, Any]]) -> Path:
    path = HERE / f"{name}.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    def fmt(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_section(name: str, body: str, script: str | None = None) -> None:
    """Replace the text between <!-- name:start --> and <!-- name:end --> in docs/validation.md."""
    made_by = f"python docs/validation/{script or name + '.py'}"
    replace_section(DOC, name, f"_Generated {dt.date.today().isoformat()} by `{made_by}`._\n\n{body}")
