"""docs/registries.md from the registries (fastnet/inspect.py registries_markdown): every name a config can choose.

    python docs/gen_registries.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fastnet next to this script (a
# worktree's), not an installed one

from fastnet.inspect import registries_markdown  # noqa: E402

if __name__ == "__main__":
    path = Path(__file__).with_name("registries.md")
    path.write_text(registries_markdown())
    print(f"wrote {path}")
