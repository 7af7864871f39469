"""Parameter sweeps: a spec (spec.py) expands into points, Dask runs them (runner.py), and each finished point is
written into its own region of one labelled zarr dataset (store.py). See docs/sweep.md."""

from .runner import Progress, sweep
from .spec import Spec, load_spec

__all__ = ["sweep", "load_spec", "Spec", "Progress"]
