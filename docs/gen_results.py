"""docs/results.md from fastnet/results.py VARIABLES: every variable a run's dataset may hold.

    python docs/gen_results.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fastnet next to this script (a
# worktree's), not an installed one

from fastnet.results import variables_markdown  # noqa: E402

if __name__ == "__main__":
    path = Path(__file__).with_name("results.md")
    path.write_text(variables_markdown())
    print(f"wrote {path}")
