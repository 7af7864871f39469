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

import fastnet  # noqa: E402


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


def write_section(name: str, body: str) -> None:
    """Replace the text between <!-- name:start --> and <!-- name:end --> in docs/validation.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = DOC.read_text() if DOC.exists() else "# Validation\n"
    block = f"{start}\n_Generated {dt.date.today().isoformat()} by `python docs/validation/{name}.py`._\n\n{body}\n{end}"
    if start in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(text)
