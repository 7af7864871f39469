"""Writing result datasets to zarr without ever leaving a half-written store behind."""

from __future__ import annotations

import shutil
import uuid
import warnings
from pathlib import Path

import xarray as xr

from .errors import ConfigError


def write_dataset(ds: xr.Dataset, path: str | Path) -> Path:
    """Write `ds` to a zarr store at `path`, replacing an existing store only once the new one is complete."""
    path = Path(path)
    if path.exists() and not (path / "zarr.json").exists() and not (path / ".zgroup").exists():
        raise ConfigError("--out", f"{path} exists and is not a zarr store; choose another path")
    if not path.parent.exists():
        raise ConfigError("--out", f"directory {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with warnings.catch_warnings():  # consolidated metadata is a zarr-python extension of format 3
            warnings.filterwarnings("ignore", message="Consolidated metadata", category=UserWarning)
            ds.to_zarr(tmp, mode="w", zarr_format=3, consolidated=True)
        if path.exists():
            old = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.old")
            path.rename(old)
            tmp.rename(path)
            shutil.rmtree(old)
        else:
            tmp.rename(path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return path
