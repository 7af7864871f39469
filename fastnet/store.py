"""Writing result datasets to zarr without ever leaving a half-written store behind.

A run's store is built under a hidden temporary name next to `--out` (`StagedStore`): variables streamed during
the run (fastnet/occupancy.py) go there first, the results dataset is added at the end, and only then does the
store replace `--out`. A failed run leaves `--out` as it was.
"""

from __future__ import annotations

import json
import shutil
import uuid
import warnings
from pathlib import Path
from types import TracebackType

import numpy as np
import xarray as xr

from .checks import check_parent_dir
from .errors import ConfigError

SWEEP_TITLE = "fastnet sweep"  # the title attribute of a sweep's store (fastnet/sweeps/store.py)


def zarr_strings(values: np.ndarray) -> np.ndarray:
    """Fixed-width unicode as variable-length UTF-8 strings: the former has no zarr v3 specification yet (zarr warns
    that other libraries may not read the store), the latter has."""
    return values.astype(np.dtypes.StringDType()) if values.dtype.kind == "U" else values


def _with_zarr_strings(ds: xr.Dataset) -> xr.Dataset:
    fixed = [name for name, var in ds.variables.items() if var.dtype.kind == "U"]
    if not fixed:
        return ds
    ds = ds.copy()
    for name in fixed:
        var = ds.variables[name]
        value = (var.dims, zarr_strings(var.values), var.attrs)
        ds = ds.assign_coords({name: value}) if name in ds.coords else ds.assign({name: value})
    return ds


def check_out_path(path: Path) -> None:
    """ConfigError(--out) if `path` cannot become a zarr store: before a run, not after it. A run's store replaces
    a run's; a sweep's store (all its points) is not replaced by one run's."""
    if path.exists() and not (path / "zarr.json").exists() and not (path / ".zgroup").exists():
        raise ConfigError("--out", f"{path} exists and is not a zarr store; choose another path")
    if (path / "zarr.json").exists():
        try:
            title = json.loads((path / "zarr.json").read_text()).get("attributes", {}).get("title")
        except (OSError, ValueError):
            title = None
        if title == SWEEP_TITLE:
            raise ConfigError("--out", f"{path} holds a sweep's results, which a single run would replace; choose "
                              "another path")
    check_parent_dir(path, "--out")


class StagedStore:
    """A zarr store written at `tmp` (created on first use) and moved to `path` by `commit`; leaving the `with`
    block without a commit removes it."""

    def __init__(self, path: str | Path, tmp: str | Path | None = None):
        self.path = Path(path)
        check_out_path(self.path)
        self.tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:8]}.tmp")
        if tmp is not None:  # a resumed run's: it holds what was streamed before the checkpoint
            self.tmp = Path(tmp)
            if self.tmp.parent.resolve() != self.path.parent.resolve():
                raise ConfigError("--out", f"the run streamed into {self.tmp} before its checkpoint: give an --out "
                                  f"in {self.tmp.parent}, where it can be moved when the run finishes")
        self.committed = False
        self.keep = False  # leave the staged store when the block is left without a commit (a checkpoint needs it)

    def commit(self, ds: xr.Dataset) -> Path:
        """Add `ds` to what was streamed into the store (or write it alone), then put the store in place."""
        import zarr

        with warnings.catch_warnings():  # consolidated metadata is a zarr-python extension of format 3
            warnings.filterwarnings("ignore", message="Consolidated metadata", category=UserWarning)
            # mode "a" keeps the streamed arrays already in the group and adds the dataset's variables
            ds = _with_zarr_strings(ds)
            ds.to_zarr(self.tmp, mode="a" if self.tmp.exists() else "w", zarr_format=3, consolidated=False)
            zarr.consolidate_metadata(str(self.tmp))  # one metadata document covering both
        if self.path.exists():
            old = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:8]}.old")
            self.path.rename(old)
            self.tmp.rename(self.path)
            shutil.rmtree(old)
        else:
            self.tmp.rename(self.path)
        self.committed = True
        return self.path

    def discard(self) -> None:
        if self.tmp.exists():
            shutil.rmtree(self.tmp)

    def __enter__(self) -> StagedStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if not self.committed and not self.keep:
            self.discard()


def write_dataset(ds: xr.Dataset, path: str | Path) -> Path:
    """Write `ds` to a zarr store at `path`, replacing an existing store only once the new one is complete."""
    with StagedStore(path) as stage:
        return stage.commit(ds)
