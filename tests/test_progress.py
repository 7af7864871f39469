"""fastnet run's progress bar (cycles/s and time left, on a terminal only) and the time-sized kernel chunks."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

import fastnet
import fastnet.cli as cli
import fastnet.sim as sim

TORUS = ["--set", "topology.kind=torus", "--set", "sim.warmup=3000", "--set", "sim.measure=3000",
         "--set", "sim.drain=3000"]


def run_with_stderr(monkeypatch, terminal: bool, *args: str) -> str:
    buf = io.StringIO()
    monkeypatch.setattr(cli, "err", Console(file=buf, force_terminal=terminal, width=160))
    result = CliRunner().invoke(cli.app, ["run", *TORUS, *args])
    assert result.exit_code == 0, result.output
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())  # without the terminal's control codes


def test_on_a_terminal_the_bar_shows_cycles_per_second_and_time_left(monkeypatch):
    text = run_with_stderr(monkeypatch, True)
    frames = re.findall(r"simulating .*? ([\d,]+)/9,000 cycles (\S+) cycles/s (\d+:\d\d:\d\d) left (\S+)", text)
    assert frames, text
    done, speed, elapsed, left = frames[-1]
    assert int(done.replace(",", "")) > 0 and float(speed.replace(",", "")) > 0 and re.match(r"\d+:\d\d:\d\d", left)


def test_off_a_terminal_and_with_quiet_or_json_there_is_no_bar(monkeypatch):
    assert "simulating" not in run_with_stderr(monkeypatch, False)
    assert "simulating" not in run_with_stderr(monkeypatch, True, "--quiet")
    assert "simulating" not in run_with_stderr(monkeypatch, True, "--json")


@pytest.mark.parametrize("speed, text", [(None, "- cycles/s"), (17.26, "17.3 cycles/s"), (5776.4, "5,776 cycles/s")])
def test_cycles_per_second_reads_well_slow_and_fast(speed, text):
    assert cli.cycles_per_second(speed) == text


def test_chunks_aim_at_half_a_second_of_work():
    assert sim._next_chunk(16, 16, 1e-6) == sim.CHUNK  # fast: grow to the most at once
    assert sim._next_chunk(16, 16, 0.001) == 8000  # units of work (cycles and grants) for about 0.5 s
    assert sim._next_chunk(2048, 2048, 120.0) == 8  # 17 cycles/s (the million-node Slim Fly): ~0.5 s calls
    assert sim._next_chunk(2048, 100, 0.04) == 2048  # too short a call to time (1,250 would shrink): not on it
    assert sim._next_chunk(8, 0, 0.0) == 8  # stopped at once (a pool ran low): no measure
    assert sim._next_chunk(1, 1, 10.0) == sim.MIN_CHUNK


def test_short_chunks_report_more_often_and_change_no_result(monkeypatch):
    cfg = {"topology": {"kind": "torus", "dims": [4, 4]}, "sim": {"warmup": 500, "measure": 1000, "drain": 500}}
    reference = fastnet.run(cfg)
    monkeypatch.setattr(sim, "CHUNK_SECONDS", 1e-6)  # as if every cycle were slow: chunks of MIN_CHUNK cycles
    seen = []
    short = fastnet.run(cfg, progress=lambda t, end: seen.append(t))
    assert len(seen) > 1000 and np.diff(seen).max() <= sim.FIRST_CHUNK
    assert seen[-1] == int(short.cycles) < 2000  # the last call too: the drain ended with the network empty
    for name, var in reference.data_vars.items():
        np.testing.assert_array_equal(short[name].values, var.values, err_msg=name)


def test_off_a_terminal_progress_prints_lines_with_the_total_and_time_left():
    """`--progress` with --json, in a subprocess whose stderr is a pipe: a line every --progress-every seconds
    with cycles done, the total (an MPI run's: its busiest rank's computation, 20 x 20,000 cycles here) and time
    left; stdout stays one JSON object."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    sets = ["topology.kind='torus'", "topology.dims=[4,4]", "workload.kind='mpi'", "workload.program='allreduce'",
            "workload.message_bytes=65536", "workload.iterations=20", "workload.compute_cycles=20000"]
    args = [a for kv in sets for a in ("--set", kv)]
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).resolve().parents[1])}
    # every kernel call's line (--progress-every 0): on a fast machine the whole run takes well under a second,
    # and a line every 0.2 s could all fall after the estimated total
    proc = subprocess.run([sys.executable, "-m", "fastnet", "run", *args, "--json", "--progress",
                           "--progress-every", "0"], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["execution_cycles"] > 400_000
    lines = re.findall(r"progress: ([\d,]+) (?:of ([\d,]+) cycles \([\d.]+ %\)|cycles), (\S+) cycles/s, (.*)",
                       proc.stderr)
    assert len(lines) >= 2, proc.stderr
    assert any(total == "400,000" and re.fullmatch(r"\d+:\d\d:\d\d left", left) for _, total, _, left in lines)
    assert all(int(done.replace(",", "")) > 0 for done, *_ in lines)


def test_an_mpi_run_on_a_terminal_has_a_total_and_time_left(monkeypatch):
    sets = ["workload.kind='mpi'", "workload.program='allreduce'", "workload.message_bytes=65536",
            "workload.iterations=20", "workload.compute_cycles=20000", "topology.dims=[4,4]"]
    text = run_with_stderr(monkeypatch, True, *[a for kv in sets for a in ("--set", kv)])
    frames = re.findall(r"simulating .*? ([\d,]+)/([\d,]+) cycles .*? left (\S+)", text)
    assert frames and frames[0][1] == "400,000", text


def test_progress_line_reads_well():
    assert cli.progress_line(100, 400, 100, 2.0) == "progress: 100 of 400 cycles (25.0 %), 50 cycles/s, 0:00:06 left"
    assert cli.progress_line(500, 400, 500, 1.0).endswith("time left unknown (past the estimated 400 cycles)")
    assert cli.progress_line(500, None, 500, 1.0) == "progress: 500 cycles, 500 cycles/s, time left unknown (no total)"
