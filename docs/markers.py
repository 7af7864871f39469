"""Rewrite one generated section of a markdown file: the text between <!-- name:start --> and <!-- name:end -->
(the doc generators under docs/ and docs/validation/ all write their tables this way)."""

from __future__ import annotations

from pathlib import Path


def replace_section(doc: Path, marker: str, body: str) -> None:
    """Put `body` between the markers; a section not in the file yet is appended with its markers."""
    text = doc.read_text() if doc.exists() else ""
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    if start in text:
        i, j = text.index(start) + len(start), text.index(end)
        text = text[:i] + "\n" + body + "\n" + text[j:]
    else:
        text = text.rstrip() + f"\n\n{start}\n{body}\n{end}\n"
    doc.write_text(text)
