"""Each benchmark case in a process of its own (`python SCRIPT --child NAME`): its peak RSS is its own, and its
kernels come from numba's cache as a user's second run would."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


class ChildFailed(RuntimeError):
    """The case's process failed; the message is the last line it wrote to stderr."""


def in_child(script: str, name: str) -> dict:
    """The JSON object the case's process printed last."""
    out = subprocess.run([sys.executable, script, "--child", name], capture_output=True, text=True)
    if out.returncode:
        lines = out.stderr.strip().splitlines()
        raise ChildFailed(f"{name}: {lines[-1] if lines else f'exit code {out.returncode}'}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def case_args(cases, child) -> argparse.Namespace | None:
    """The command line of a benchmark whose cases run with in_child: `--cases a,b` (default: all) and
    `--no-readme`. In a case's own process (`--child NAME`) it prints child(NAME) as JSON and returns None."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--cases", default=",".join(cases))
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return None
    return args
