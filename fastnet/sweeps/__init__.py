"""Parameter sweeps: a spec (spec.py) expands into points. See docs/sweep.md."""

from .spec import Spec, load_spec

__all__ = ["load_spec", "Spec"]
