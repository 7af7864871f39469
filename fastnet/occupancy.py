"""Per-port buffer occupancy over time, streamed to zarr as a run goes (`sim.occupancy_interval`).

Every `interval` cycles `simulate()` ends a kernel chunk and hands the state to `OccupancyRecorder.sample`, which
copies each port's PT_HELD (phits reserved in the port's input VCs: packets buffered there plus those on the
link to it, what the upstream router's credits see) into a bounded buffer of rows; a full buffer is appended to
the array `port_occupancy(occupancy_time, port)` of the run's staged store (store.py). Memory stays at about
BUFFER_BYTES whatever the run's length, so a 14-million-port network can record 40,000 cycles.

A row is a sample, not an average: the occupancy at the end of cycle t - 1, labelled t. The kernels' per-VC
integral (Params.occupancy) would give interval averages, but it covers only the measurement window and costs 16
bytes per VC (450 MB at 14 M ports x 2 VCs) and work on every credit; sampling costs nothing between samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError

BUFFER_BYTES = 32 * 2**20  # rows held before an append (at least one row)
ZARR_CHUNK_BYTES = 4 * 2**20  # target size of a zarr chunk
MAX_ROWS = 256  # most rows buffered (and per chunk), however few the ports
TIME_DIM, VARIABLE = "occupancy_time", "port_occupancy"


def smallest_uint(largest: int) -> np.dtype:
    """The smallest unsigned dtype holding 0..largest (sgkit's smallest_numpy_int_dtype, unsigned)."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if largest <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.uint64)


def layout(n_ports: int, itemsize: int) -> tuple[int, int]:
    """(rows per buffer and per chunk, ports per chunk): a whole number of chunk rows is written per append, so
    zarr never reads a chunk back to complete it."""
    rows = max(1, min(MAX_ROWS, BUFFER_BYTES // (n_ports * itemsize)))
    ports = max(1, min(n_ports, ZARR_CHUNK_BYTES // (rows * itemsize)))
    return rows, ports


class OccupancyRecorder:
    """Appends rows of per-port occupancy to `port_occupancy` in the zarr group at `store` (created if needed)."""

    def __init__(self, store: str | Path, interval: int, port_capacity: np.ndarray, start: int = 0,
                 streamed: dict[str, Any] | None = None):
        """`streamed`: where a resumed run's stream stood at its checkpoint (checkpoint.py): the arrays already
        in `store` are cut back to the rows written then, and the rows it had buffered are buffered again."""
        import zarr

        from .results import VARIABLES

        self.store = Path(store)
        self.interval = interval
        self.next_cycle = (start // interval + 1) * interval
        n_ports = len(port_capacity)
        self.dtype = smallest_uint(int(port_capacity.max(initial=0)))
        rows, ports = layout(n_ports, self.dtype.itemsize)
        self.buf = np.empty((rows, n_ports), dtype=self.dtype)
        self.cycles: list[int] = []
        self.n = 0  # rows buffered
        self.written = 0  # rows on disk
        if streamed is not None:
            self._reopen(streamed)
            return
        dims, units, doc = VARIABLES[VARIABLE]
        group = zarr.open_group(str(store), mode="a", zarr_format=3)
        self.array = group.create_array(
            VARIABLE, shape=(0, n_ports), chunks=(rows, ports), dtype=self.dtype, fill_value=0,
            dimension_names=dims, attributes={"units": units, "description": doc, "interval": interval},
        )
        dims, units, doc = VARIABLES[TIME_DIM]
        self.time = group.create_array(TIME_DIM, shape=(0,), chunks=(max(rows, 1024),), dtype=np.int64,
                                       fill_value=0, dimension_names=dims,
                                       attributes={"units": units, "description": doc})

    def _reopen(self, streamed: dict[str, Any]) -> None:
        import zarr

        if not (self.store / "zarr.json").exists():
            raise ConfigError("--resume", f"the occupancy streamed before the checkpoint was in {self.store}, which "
                              "is gone: start the run again")
        group = zarr.open_group(str(self.store), mode="r+", zarr_format=3)
        self.array, self.time = group[VARIABLE], group[TIME_DIM]
        self.written = streamed["written"]
        self.array.resize((self.written, self.array.shape[1]))  # rows appended after the checkpoint go
        self.time.resize((self.written,))
        rows = streamed["rows"]
        self.buf[: len(rows)] = rows
        self.n, self.cycles, self.next_cycle = len(rows), list(streamed["cycles"]), streamed["next_cycle"]

    def sample(self, t: int, held: np.ndarray) -> None:
        """Record `held` (int64[P], phits reserved per port) as the row of cycle t (== self.next_cycle)."""
        self.buf[self.n] = held  # casts into the compact dtype without an int64 copy of the column
        self.cycles.append(t)
        self.n += 1
        self.next_cycle = t + self.interval
        if self.n == len(self.buf):
            self.flush()

    def flush(self) -> None:
        if not self.n:
            return
        end = self.written + self.n
        self.array.resize((end, self.array.shape[1]))
        self.array[self.written:end] = self.buf[: self.n]
        self.time.resize((end,))
        self.time[self.written:end] = np.asarray(self.cycles, dtype=np.int64)
        self.written, self.n, self.cycles = end, 0, []

    def close(self) -> None:
        self.flush()


def recorder_for(s: Any, store: str | Path | None, streamed: dict[str, Any] | None = None
                 ) -> OccupancyRecorder | None:
    """The recorder a prepared run asks for (None when sim.occupancy_interval is 0); ConfigError without a store.
    `streamed`: a resumed run's stream position (OccupancyRecorder)."""
    interval = s.cfg["sim"]["occupancy_interval"]
    if not interval:
        return None
    if store is None:
        raise ConfigError("sim.occupancy_interval", "streams to a zarr store: give fastnet run --out PATH "
                          "(fastnet.run(config, out=PATH)), or set it to 0")
    from .kernels.state import VC_CAP

    capacity = s.state.vc[:, VC_CAP].reshape(s.net.n_ports, s.params.vcs).sum(axis=1)
    return OccupancyRecorder(store, interval, capacity, start=s.cycle, streamed=streamed)
