"""Every row of the validation matrix (docs/validation.md, docs/validation/booksim_matrix.py) holds its tolerance
against BookSim2's measurements in docs/validation/booksim_matrix_ref.csv: zero-load latency within 2 cycles
or 5 %, saturation throughput within 5 % or inside BookSim2's bracket. Slow (a bisection of fastnet runs per
row): `pytest -m slow tests/test_validation_matrix.py`."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "validation"))
import booksim_matrix as matrix  # noqa: E402

REF, REF_HALF = matrix.read_points(matrix.REF_CSV)


# Rows outside the tolerance today (docs/validation.md says why); strict, so a fix shows up as a failure to
# remove the mark
KNOWN_OFF: dict[tuple[str, str], str] = {
    ("flatfly_k4n2c4_ugal_xyyx.cfg", "uniform"): "saturation +5.4 %: inside BookSim2's bracket widened by 3 %, not "
                                                  "within 5 %; the plain ugal row leans the same way (+3.4 %)",
}


def _case(row: str, cfg: str, pattern: str):
    why = KNOWN_OFF.get((cfg, pattern))
    marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
    return pytest.param(row, cfg, pattern, marks=marks, id=f"{cfg}-{pattern}")


@pytest.mark.slow
@pytest.mark.parametrize("row,cfg,pattern", [_case(*c) for c in matrix.cases()])
def test_matrix_row(row, cfg, pattern):
    theirs = matrix.summarize(REF[(cfg, pattern)])
    ours = matrix.summarize(matrix.bisect(lambda load: matrix.fastnet_point(cfg, pattern, load)))
    assert matrix.zero_load_ok(ours.zero_load, theirs.zero_load), (ours, theirs)
    assert matrix.saturation_ok(ours.saturation, theirs), (ours, theirs)


def test_matrix_rows_have_booksim_measurements():
    """Every row and pattern has BookSim2's bisection and half-saturation point, and the configs are here."""
    for _, cfg, pattern in matrix.cases():
        assert (matrix.MATRIX / cfg).is_file()
        assert (cfg, pattern) in REF and (cfg, pattern) in REF_HALF
        s = matrix.summarize(REF[(cfg, pattern)])
        assert s.last_carried < s.first_not_carried or math.isnan(s.first_not_carried)
