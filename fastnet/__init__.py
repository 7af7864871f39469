"""fastnet: a cycle-level interconnection-network simulator with Numba kernels.

Library entry points: `fastnet.run(config) -> xarray.Dataset`, `fastnet.sweep(spec, out) -> xarray.Dataset` and
`fastnet.load_config(path)`.
"""

from __future__ import annotations

from .config import load_config
from .errors import ConfigError, ConservationError, DeadlockError, FastnetError
from .version import __version__

__all__ = ["run", "sweep", "load_config", "ConfigError", "DeadlockError", "ConservationError", "FastnetError", "__version__"]


def run(config=None, **kwargs):
    """Simulate one config (a dict of sections or a TOML path) and return an xarray.Dataset of results. A `graph`
    topology may give a networkx graph: `{"topology": {"kind": "graph", "graph": G}}` (docs/config.md)."""
    from .sim import run as _run

    return _run(config, **kwargs)


def sweep(spec, out=None, **kwargs):
    """Run a parameter sweep (a TOML spec path or dict, docs/sweep.md) on Dask and return its xarray.Dataset,
    stored in the zarr `out` (None: kept in memory). Keyword arguments: workers, scheduler, resume, retry_failed,
    progress (fastnet.sweeps.sweep)."""
    from .sweeps import sweep as _sweep  # imports dask: only when a sweep is asked for

    return _sweep(spec, out, **kwargs)
