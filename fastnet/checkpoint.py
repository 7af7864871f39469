"""Checkpoints of a single run, resumed exactly, and a clean stop on SIGINT or SIGTERM (docs/long_runs.md).

A checkpoint is taken at a chunk boundary of sim.simulate's loop, where nothing is half done (where a chunk ends
does not change the results: tests/test_progress.py). It holds what the run changes and prepare() cannot derive
from the config: the simulation state (engine arrays, packet and event pools, random streams, statistics so far),
the traffic and workload tuples (MPI ranks, messages and their random streams), the fault plan's progress, the
cycle, and the position of the occupancy stream in the staged --out store (the rows not yet appended travel in
the checkpoint). Resuming prepares the config again (network, routes, parameters), puts those back, and brings
the network to the fault plan's current state, so the run goes on exactly where it stopped.

The file is two pickles (protocol 5): a header of plain data (format, fastnet version, the state's layout, the
resolved config, a checksum of the built network), read and checked before anything is built, then the body,
followed by a trailer with the body's length and CRC-32, checked before the body is unpickled (a damaged body
could otherwise unpickle into a state that crashes the kernels). It is written to a temporary file in the same
directory, fsynced, and renamed over the last one: a run killed at any moment (even by SIGKILL) leaves either
the previous checkpoint or the new one. A checkpoint is a pickle: resume only your own.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pickle
import signal
import struct
import threading
import time
import uuid
import zlib
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from .checks import check_parent_dir, wall_seconds
from .errors import ConfigError
from .mpi.schema import resolve_mpi, resolve_workload
from .version import __version__

CHECKPOINT_MAGIC = "fastnet-checkpoint"
FORMAT = 2  # the file's layout (2: the body's trailer); the state's own layout is checked field by field (state_layout)
TRAILER = struct.Struct("<8sQI")  # TRAILER_TAG, the body's bytes, their CRC-32
TRAILER_TAG = b"fnbody\0\0"
DEFAULT_EVERY = "10 min"  # sim.checkpoint_every = "auto" with a checkpoint file
# keys that change no result: a run may be resumed with other values
IGNORED_KEYS = ("sim.checkpoint_every", "sim.memory_check")
def interval(value: Any) -> tuple[int, float]:
    """(simulated cycles, wall seconds) between checkpoints for sim.checkpoint_every (0: not by that measure)."""
    if value == "auto":
        return 0, wall_seconds(DEFAULT_EVERY)
    if isinstance(value, int):
        return value, 0.0
    return 0, wall_seconds(value)


class RunStopped(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped the run at a chunk boundary (after writing a checkpoint where one is configured),
    once its results were out (`finished`: the signal came after the loop), or at once (`second`: a second signal).
    A KeyboardInterrupt, so that code catching Ctrl-C catches it."""

    def __init__(self, signum: int, cycle: int | None, path: Path | None, finished: bool = False,
                 second: bool = False):
        self.signum, self.cycle, self.path, self.finished = signum, cycle, path, finished
        name = signal.Signals(signum).name
        if second:
            text = f"stopped at once by a second {name}: no checkpoint and no results were written"
        elif finished:
            text = (f"stopped by {name} after the simulation's loop had ended (its results were written first "
                    "where --out asked for them)")
        elif cycle is None:
            text = f"stopped by {name} before the simulation's loop"
        elif path is not None:
            text = f"stopped by {name} at cycle {cycle:,}; checkpoint written to {path}"
        else:
            text = (f"stopped by {name} at cycle {cycle:,}; no checkpoint was written (fastnet run --checkpoint "
                    "PATH writes one)")
        super().__init__(text)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def state_layout() -> dict[str, Any]:
    """What a checkpoint's body must match to be read back: the fields of the state tuples and every record's
    column count (N_*). A checkpoint of a fastnet whose layout differs is refused, even at the same version."""
    from .kernels import state as K
    from .mpi import state as M
    from .workloads import state as W

    columns = {f"{m.__name__}.{k}": v for m in (K, W, M) for k, v in vars(m).items()
               if k.startswith("N_") and isinstance(v, int)}
    return {"State": list(K.State._fields), "Params": list(K.Params._fields), "Workload": list(W.Workload._fields),
            "Mpi": list(M.Mpi._fields), "columns": dict(sorted(columns.items()))}


def network_checksum(s: Any) -> int:
    """CRC-32 of the network and routes a prepared run holds (before any failure event): a resumed run must build
    the same ones (an edge list or a trace edited since would not)."""
    crc = 0
    for name, tup in (("topo", s.net.topo), ("routes", s.routes)):
        for field, value in zip(tup._fields, tup):
            crc = zlib.crc32(f"{name}.{field}".encode(), crc)
            if isinstance(value, np.ndarray):
                crc = zlib.crc32(f"{value.dtype}{value.shape}".encode(), crc)
                crc = zlib.crc32(np.ascontiguousarray(value).view(np.uint8).reshape(-1), crc)
            else:
                crc = zlib.crc32(repr(value).encode(), crc)
    return crc


def _flat(cfg: dict[str, Any]) -> dict[str, Any]:
    return {f"{section}.{k}": v for section, table in cfg.items() if isinstance(table, dict)
            for k, v in table.items()} | {s: t for s, t in cfg.items() if not isinstance(t, dict)}


# sections whose absence from a resolved config means their defaults (workloads/build.py, mpi/build.py)
DEFAULTED_SECTIONS = {"workload": resolve_workload, "mpi": resolve_mpi}


def _defaults_filled(cfg: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    return cfg | {name: resolve({}) for name, resolve in DEFAULTED_SECTIONS.items()
                  if name in other and name not in cfg}


def config_difference(saved: dict[str, Any], now: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """(key, value in the checkpoint, value now) of the first key that differs, keys that change no result
    aside; None if they agree. A key missing on one side has the value `None` there, but a section of
    DEFAULTED_SECTIONS left out has its defaults."""
    a, b = _flat(_defaults_filled(saved, now)), _flat(_defaults_filled(now, saved))
    for key in sorted(set(a) | set(b)):
        if key not in IGNORED_KEYS and a.get(key) != b.get(key):
            return key, a.get(key), b.get(key)
    return None


def read_header(path: str | Path) -> dict[str, Any]:
    """The header of checkpoint `path`; ConfigError(--resume) when it is not one, or not of this fastnet."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            header = pickle.load(f)
    except FileNotFoundError:
        raise ConfigError("--resume", f"no such checkpoint: {path}") from None
    except OSError as e:
        raise ConfigError("--resume", f"cannot read {path}: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - any unpickling failure: not a checkpoint (or a truncated one)
        raise ConfigError("--resume", f"{path} is not a fastnet checkpoint ({type(e).__name__})") from None
    if not isinstance(header, dict) or header.get("magic") != CHECKPOINT_MAGIC:
        raise ConfigError("--resume", f"{path} is not a fastnet checkpoint")
    if header.get("fastnet_version") == __version__ and header.get("format") != FORMAT:
        raise ConfigError("--resume", f"{path} is in checkpoint format {header.get('format')}, which this fastnet "
                          f"{__version__} no longer reads (format {FORMAT}): start the run again")
    if header.get("format") != FORMAT or header.get("fastnet_version") != __version__:
        raise ConfigError("--resume", f"{path} was written by fastnet {header.get('fastnet_version')} (checkpoint "
                          f"format {header.get('format')}); this is fastnet {__version__} (format {FORMAT}): resume "
                          "it with that version, or start the run again")
    layout = state_layout()
    if header.get("layout") != layout:
        saved = header.get("layout") or {}
        what = next((k for k in layout if saved.get(k) != layout[k]), "layout")
        if what == "columns":
            cols = saved.get("columns", {})
            what = next((k for k in sorted(set(cols) | set(layout["columns"]))
                         if cols.get(k) != layout["columns"].get(k)), what)
        raise ConfigError("--resume", f"{path} was written by a fastnet {__version__} whose simulation state is laid "
                          f"out differently ({what} differs): start the run again")
    return header


def check_config(path: str | Path, header: dict[str, Any], cfg: dict[str, Any]) -> None:
    """ConfigError naming the first key in which the resolved `cfg` differs from the checkpoint's."""
    diff = config_difference(header["config"], cfg)
    if diff is not None:
        key, then, now = diff
        raise ConfigError(key, f"is {then!r} in the checkpoint {path} and {now!r} here: resume with the config the "
                          f"run started with (fastnet run --resume {path} alone takes the checkpoint's)")


def restore(s: Any, path: str | Path, header: dict[str, Any]) -> tuple[dict[str, Any] | None, int]:
    """Put checkpoint `path` (whose header was read and checked) back into `s`, the run prepare() made of its
    config: (the occupancy stream's position or None, the network checksum)."""
    path = Path(path)
    checksum = network_checksum(s)
    if checksum != header["network"]:
        raise ConfigError("--resume", f"the network this config builds differs from the one checkpoint {path} ran "
                          "on (was an edge list or a trace file changed?): start the run again")
    try:
        with path.open("rb") as f:
            pickle.load(f)
            _check_body(f, path)
            body = pickle.load(f)
    except ConfigError:
        raise
    except Exception as e:  # noqa: BLE001 - a truncated or damaged body
        raise ConfigError("--resume", f"{path} is damaged ({type(e).__name__}: {e})") from None
    s.state, s.workload, s.traffic = body["state"], body["workload"], body["traffic"]
    s.cycle, s.simulate_seconds = body["cycle"], body["simulate_seconds"]
    if body["faults"] is not None:
        s.faults = body["faults"]
        s.faults.restore(s)
    return body["occupancy"], checksum


class _Crc:
    """A file written through it: counts the bytes and their CRC-32 (streamed: no copy of the body)."""

    def __init__(self, f: Any):
        self.f, self.crc, self.n = f, 0, 0

    def write(self, data: Any) -> int:
        self.crc = zlib.crc32(data, self.crc)
        self.n += memoryview(data).nbytes
        return self.f.write(data)


def _check_body(f: Any, path: Path) -> None:
    """ConfigError(--resume) unless the body from f's position has the length and CRC-32 its trailer gives; leaves
    f at the body's start."""
    start = f.tell()
    end = f.seek(0, os.SEEK_END)
    if end - start < TRAILER.size:
        raise ConfigError("--resume", f"{path} is damaged (it ends before its body's trailer)")
    f.seek(end - TRAILER.size)
    tag, size, crc = TRAILER.unpack(f.read(TRAILER.size))
    if tag != TRAILER_TAG or size != end - TRAILER.size - start:
        raise ConfigError("--resume", f"{path} is damaged (its body's trailer is missing or its length is wrong)")
    f.seek(start)
    got, left = 0, size
    while left:
        chunk = f.read(min(left, 1 << 24))
        if not chunk:
            break
        got = zlib.crc32(chunk, got)
        left -= len(chunk)
    if left or got != crc:
        raise ConfigError("--resume", f"{path} is damaged (its body's CRC-32 differs from the one written with it)")
    f.seek(start)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be opened
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomically(path: Path, header: Any, body: Any) -> int:
    """Pickle `header`, then `body` and its trailer, into `path`: a temporary file in the same directory, fsynced,
    then renamed over `path`. Returns the bytes written."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("wb") as f:
            pickle.dump(header, f, protocol=5)
            counted = _Crc(f)
            pickle.dump(body, counted, protocol=5)
            f.write(TRAILER.pack(TRAILER_TAG, counted.n, counted.crc))
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return size


class Checkpointer:
    """When a run writes checkpoints to `path` (None: never), and the stop its signals ask for.

    `simulate` calls `start` before its loop and `boundary` at the end of every chunk; `next_cycle` bounds each
    chunk, so that checkpoints counted in cycles fall on multiples of the interval."""

    def __init__(self, path: str | Path | None, cfg: dict[str, Any], *, fresh: bool = True):
        self.path = Path(path) if path is not None else None
        self.config = cfg
        value = cfg["sim"]["checkpoint_every"]
        if self.path is None and value != "auto":
            raise ConfigError("sim.checkpoint_every", "writes checkpoints to a file: give fastnet run --checkpoint "
                              "PATH (fastnet.run(config, checkpoint=PATH)), or leave it \"auto\"")
        self.cycles, self.seconds = interval(value) if self.path is not None else (0, 0.0)
        if self.path is not None:
            check_parent_dir(self.path, "--checkpoint")
            if fresh and self.path.exists():
                raise ConfigError("--checkpoint", f"{self.path} exists: continue that run with --resume {self.path}, "
                                  "or remove it to start again")
        self.network: int | None = None  # network_checksum, computed once per process
        self.signum: int | None = None  # the stop a signal asked for
        self.deferring = False  # from simulate's loop on: a first signal stops the run at the next chunk boundary,
        # or, once the loop has ended, when the results are out (finished); a second one at once
        self.next_cycle = 2**62
        self.last_wall = 0.0
        self.loop_started = 0.0
        self.writes: list[tuple[int, float, int]] = []  # (cycle, seconds, bytes) of each checkpoint written

    # -- simulate's side -------------------------------------------------------------------------------------------
    def start(self, s: Any) -> None:
        if self.path is not None and self.network is None:
            self.network = network_checksum(s)
        self.next_cycle = (s.cycle // self.cycles + 1) * self.cycles if self.cycles else 2**62
        self.last_wall = self.loop_started = time.monotonic()
        self.deferring = True  # (a signal before this raised RunStopped at once)

    def boundary(self, s: Any, occupancy: Any) -> None:
        """At a chunk boundary: write a checkpoint if one is due (or a stop was asked for), then stop if asked."""
        due = ((self.cycles and s.cycle >= self.next_cycle)
               or (self.seconds and time.monotonic() - self.last_wall >= self.seconds))
        if self.path is not None and (due or self.signum is not None):
            self.save(s, occupancy)
        if self.signum is not None:
            self.deferring = False
            raise RunStopped(self.signum, s.cycle, self.path)

    def save(self, s: Any, occupancy: Any) -> None:
        t0 = time.perf_counter()
        occ = None
        if occupancy is not None:
            occ = {"store": str(occupancy.store), "written": occupancy.written, "next_cycle": occupancy.next_cycle,
                   "rows": occupancy.buf[: occupancy.n].copy(), "cycles": list(occupancy.cycles)}
        header = {"magic": CHECKPOINT_MAGIC, "format": FORMAT, "fastnet_version": __version__, "layout": state_layout(),
                  "config": self.config, "cycle": int(s.cycle), "network": self.network, "written": time.time()}
        body = {"state": s.state, "workload": s.workload, "traffic": s.traffic, "faults": s.faults,
                "cycle": int(s.cycle), "occupancy": occ,
                "simulate_seconds": s.simulate_seconds + time.monotonic() - self.loop_started}
        size = write_atomically(self.path, header, body)
        self.writes.append((int(s.cycle), time.perf_counter() - t0, size))
        self.last_wall = time.monotonic()
        if self.cycles:
            self.next_cycle = (s.cycle // self.cycles + 1) * self.cycles

    def on_disk(self) -> bool:
        """Whether a checkpoint of this run is on disk (written now or the one it was resumed from)."""
        return self.path is not None and self.path.exists()

    def finished(self) -> None:
        """The run finished and its results are out: its checkpoint is stale, remove it (and the temporary file a
        kill in the middle of a write left beside it)."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            for torn in self.path.parent.glob(f".{glob.escape(self.path.name)}.*.tmp"):
                torn.unlink(missing_ok=True)
        if self.signum is not None:  # it came after the loop's last chunk boundary: the results went out first
            self.deferring = False
            raise RunStopped(self.signum, None, None, finished=True)

    # -- signals ---------------------------------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.deferring and self.signum is None:  # the first, in the loop: stop at the next chunk boundary
            self.signum = signum
            return
        raise RunStopped(signum, None, self.path, second=self.signum is not None)  # before the loop, or a second

    @contextlib.contextmanager
    def signals(self) -> Iterator[Checkpointer]:
        """SIGINT and SIGTERM stop the run cleanly while inside (main thread only: elsewhere, as before)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        old = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            self.deferring = False
            for sig, handler in old.items():
                signal.signal(sig, handler)
