"""Shared helpers of the validation scripts: run a list of configs, keep raw rows as CSV, and rewrite one
marked section of docs/validation.md with a markdown table."""

from __future__ import annotations

import csv
import datetime as dt
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "validation.md"
REFERENCE = HERE.parents[2] / "shared" / "reference"

sys.path.insert(0, str(HERE.parents[1]))  # the fastnet next to these scripts
sys.path.insert(0, str(HERE.parent))  # docs/markers.py

import fastnet  # noqa: E402
from markers import replace_section  # noqa: E402


def run_points(configs: Iterable[tuple[dict[str, Any], dict[str, Any]]],
               metrics: Callable[[Any], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Run (labels, config) pairs; a row per point: the labels plus the metrics."""
    rows = []
    for labels, cfg in configs:
        ds = fastnet.run(cfg)
        row = dict(labels)
        row.update(metrics(ds) if metrics else {
            "accepted": float(ds.accepted_phits_per_node_cycle),
            "offered": float(ds.offered_phits_per_node_cycle),
            "latency": float(ds.packet_latency_mean),
            "hops": float(ds.hops_mean),
            "unstable": int(ds.unstable),
            "wall_s": round(ds.attrs["wall_seconds"], 2),
        })
        print(row, flush=True)
        rows.append(row)
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
