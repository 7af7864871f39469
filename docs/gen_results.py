"""docs/results.md from fastnet/results.py VARIABLES: every variable a run's dataset may hold.

    python docs/gen_results.py
"""

from __future__ import annotations

from pathlib import Path

from fastnet.results import variables_markdown

if __name__ == "__main__":
    path = Path(__file__).with_name("results.md")
    path.write_text(variables_markdown())
    print(f"wrote {path}")
