"""kernels/_jit.py's change to numba's indexing: a fastnet kernel's index is taken as it is (no wraparound from the
end), every other function keeps numba's."""

from __future__ import annotations

import types

import numba
import numpy as np
import pytest

import fastnet.kernels._jit  # noqa: F401  (installs the indexing)


def _element(a, i):
    return a[i]


def _compiled_in(module: str):
    """_element as if defined in `module`, compiled with bounds checks (which see the index after wraparound)."""
    f = types.FunctionType(_element.__code__, {}, "_element")
    f.__module__, f.__qualname__ = module, "_element"
    return numba.njit(boundscheck=True, cache=False)(f)


def test_a_fastnet_kernel_takes_an_index_as_it_is():
    a = np.arange(4)
    assert _compiled_in("fastnet.probe")(a, 2) == 2
    with pytest.raises(IndexError):  # -1 is not the last element here: it lies before the array
        _compiled_in("fastnet.probe")(a, -1)


def test_other_code_keeps_numbas_indexing_from_the_end():
    assert _compiled_in("tests.probe")(np.arange(4), -1) == 3
