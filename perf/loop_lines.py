"""Where the cycle loop's time goes, by stage and by line of source: `perf` samples of one run, placed in the
loop's machine code and resolved through its DWARF line tables into the chain of functions inlined there.

    python perf/loop_lines.py CONFIG.toml [--top 30]      # any config `fastnet run` takes (a trace, a machine, ...)

Needs Linux `perf` (samples the CPU clock: a virtual machine without hardware counters will do) and binutils'
`addr2line`. The run is compiled afresh with line tables (`NUMBA_DEBUGINFO=1`, an empty `NUMBA_CACHE_DIR`), and
the loop's object code is read from numba's library: the very bytes the JIT loaded, so each sample's offset in
the loop is an offset in that object. That build runs slower than the normal one (it calls a few of numba's
builtins out of line), so read shares, not times. Prints the shares of the loop's samples by stage (each function
with what it inlines), by function alone, and the hottest lines (perf/README.md, "What the loop knows at its
top").
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(config: str, out: Path) -> None:
    """Under `perf record`: prepare the run, compile its loop with line tables, write the loop's object code and
    its address and size in this process, then simulate."""
    sys.path.insert(0, str(ROOT))
    import fastnet.sim as S
    from fastnet.config import load_config

    s = S.prepare(load_config(config))
    loop = S.compile_kernels(s)
    cres = loop.overloads[loop.signatures[0]]
    name = cres.fndesc.llvm_func_name
    obj = cres.library._get_compiled_object()
    (out / "loop.o").write_bytes(obj)
    nm = subprocess.run(["nm", "-S", str(out / "loop.o")], capture_output=True, text=True, check=True).stdout
    size = next(int(f[1], 16) for f in (line.split() for line in nm.splitlines()) if len(f) == 4 and f[3] == name)
    (out / "loop.json").write_text(json.dumps({"addr": cres.library.get_pointer_to_function(name), "size": size,
                                               "name": name}))
    S.simulate(s)


def short(symbol: str) -> str:
    """A mangled numba name's last component (run_chunk, head_request, ...)."""
    m = re.match(r"_ZN((?:\d+\w+?)+?)B\d", symbol)
    parts, s = [], m.group(1) if m else ""
    while s and s[0].isdigit():
        n = int(re.match(r"\d+", s).group(0))
        s = s[len(str(n)):]
        parts.append(s[:n])
        s = s[n:]
    return parts[-1] if parts else symbol[:40]


def report(out: Path, top: int) -> None:
    info = json.loads((out / "loop.json").read_text())
    lo, hi = info["addr"], info["addr"] + info["size"]
    script = subprocess.run(["perf", "script", "-F", "ip", "-i", str(out / "perf.data")], capture_output=True,
                            text=True).stdout
    ips = [int(x, 16) for x in script.split()]
    offsets = collections.Counter(ip - lo for ip in ips if lo <= ip < hi)
    total = sum(offsets.values())
    print(f"{total:,} of {len(ips):,} samples in the loop")
    obj = out / "loop.o"
    section = next(line.split()[1] for line in subprocess.run(["objdump", "-h", str(obj)], capture_output=True,
                                                                text=True).stdout.splitlines()
                   if len(line.split()) > 1 and line.split()[1] in (".ltext", ".text") and
                   int(line.split()[2], 16) > 0)
    lines = subprocess.run(["addr2line", "-e", str(obj), "-j", section, "-i", "-f", "-a"],
                           input="\n".join(hex(o) for o in offsets), capture_output=True, text=True).stdout
    stage, alone, line = collections.Counter(), collections.Counter(), collections.Counter()
    frames: list[tuple[str, str]] = []
    at = None

    def count():
        if at is not None and frames:
            c = offsets[at]
            for f in {fn for fn, _ in frames}:
                stage[f] += c
            alone[frames[0][0]] += c
            line[frames[0][1]] += c

    pending = None
    for text in lines.splitlines():
        if text.startswith("0x"):
            count()
            at, frames, pending = int(text, 16), [], None
        elif pending is None:
            pending = short(text)
        else:
            frames.append((pending, text.replace(str(ROOT) + "/", "")))
            pending = None
    count()
    for title, table in (("stage (with what it inlines)", stage), ("function alone", alone), ("line", line)):
        print(f"\n{title}")
        for key, c in table.most_common(top):
            print(f"{100 * c / total:6.1f} %  {key}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.config, args.child)
        return
    with tempfile.TemporaryDirectory(prefix="fastnet-loop-lines-") as tmp:
        out = Path(tmp)
        env = {**os.environ, "NUMBA_DEBUGINFO": "1", "NUMBA_CACHE_DIR": str(out / "cache"),
               "FASTNET_NUMBA_CACHE": "1"}
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-o", str(out / "perf.data"),
                        sys.executable, __file__, args.config, "--child", str(out)], env=env, check=True)
        report(out, args.top)


if __name__ == "__main__":
    main()
