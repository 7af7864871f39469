"""docs/registries.md from the registries (fastnet/inspect.py registries_markdown): every name a config can choose.

    python docs/gen_registries.py
"""

from __future__ import annotations

from pathlib import Path

from fastnet.inspect import registries_markdown

if __name__ == "__main__":
    path = Path(__file__).with_name("registries.md")
    path.write_text(registries_markdown())
    print(f"wrote {path}")
