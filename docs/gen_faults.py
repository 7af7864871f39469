"""The dragonfly table and figure of docs/faults.md: examples/dragonfly_faults.toml (the 1056-node dragonfly,
UGAL-L, uniform traffic, 0 / 1 / 5 / 10 % of the global links failed) run with `fastnet sweep`, drawn with
`fastnet plot`.

    python docs/gen_faults.py [workers]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fastnet next to this script (a worktree's), not an installed one
sys.path.insert(0, str(ROOT / "docs"))

from markers import replace_section  # noqa: E402

from fastnet.plot import plot  # noqa: E402
from fastnet.sweeps.runner import sweep  # noqa: E402

SPEC = ROOT / "examples" / "dragonfly_faults.toml"
STORE = Path("/tmp/fastnet-df-faults.zarr")
FINE_STORE = Path("/tmp/fastnet-df-faults-fine.zarr")


def fine_spec() -> dict:
    """The same network past saturation (offered 0.9), 0 to 10 % of the global links failed in steps of 1 %."""
    import tomllib

    base = tomllib.loads(SPEC.read_text())["base"]
    base["traffic"] = {"load": 0.9}
    return {"base": base, "sweep": {"faults.fraction": {"start": 0.0, "stop": 0.1, "step": 0.01}}}


def fine_table(ds) -> str:
    rows = ["| global links failed | " + " | ".join(f"{f:.0%}" for f in ds["faults.fraction"].values) + " |",
            "|---|" + "---:|" * ds.sizes["faults.fraction"],
            "| accepted (phits/node/cycle) | " + " | ".join(
                f"{v:.3f}" for v in ds.accepted_phits_per_node_cycle.values) + " |",
            "| packets dropped | " + " | ".join(str(int(v)) for v in ds.packets_dropped.values) + " |"]
    return "\n".join(rows)


def table(ds) -> str:
    fractions = ds["faults.fraction"].values.tolist()
    loads = ds["traffic.load"].values.tolist()
    head = "| offered load | " + " | ".join(f"{f:.0%} failed: accepted / latency" for f in fractions) + " |"
    rows = [head, "|---:|" + "---:|" * len(fractions)]
    for j, load in enumerate(loads):
        cells = []
        for i in range(len(fractions)):
            point = ds.isel({"faults.fraction": i, "traffic.load": j})
            mark = "*" if int(point.unstable) else ""
            cells.append(f"{float(point.accepted_phits_per_node_cycle):.3f} / "
                         f"{float(point.packet_latency_mean):,.0f}{mark}")
        rows.append(f"| {load:.1f} | " + " | ".join(cells) + " |")
    dropped = int(ds.packets_dropped.sum())
    down = [int(ds.isel({"faults.fraction": i, "traffic.load": 0}).port_failed_cycles.astype(bool).sum()) // 2
            for i in range(len(fractions))]
    return "\n".join(rows) + (
        f"\n\nGlobal links down (of 528): {', '.join(str(d) for d in down)}. Packets dropped over all 36 runs: "
        f"{dropped} (every group pair keeps a live path through some group, and UGAL-L sends the traffic of a "
        "pair whose link failed through one). `*`: unstable (past saturation: measured packets left after the "
        "10,000-cycle drain, or a backlog that grew over the window); none of these runs reported a deadlock.")


def midrun() -> str:
    """tests/test_faults.py's judged case with its numbers: an 8x8 torus, adaptive routing, offered load 0.7, link
    0-1 failing at cycle 5,000, the audit after every cycle."""
    from fastnet import sim as S
    from fastnet.faults.kernel import on_link
    from fastnet.kernels.audit import AU_DELIVERING, AU_IN_VCS, audit
    from fastnet.kernels.state import C_DELIVERED, C_DROP_LINK, C_DROPPED, C_INJECTED

    S.CHUNK = S.FIRST_CHUNK = 1  # a kernel call per cycle
    s = S.prepare({"topology": {"kind": "torus", "dims": [8, 8]}, "routing": {"algorithm": "adaptive"},
                   "traffic": {"load": 0.7}, "sim": {"warmup": 3000, "measure": 3000, "drain": 3000},
                   "faults": {"events": [[5000, "fail", 0, 1]]}})
    f = s.faults
    ports = f.ports_of(0, 1)
    seen: dict[str, int] = {}
    apply = f.apply

    def counting_apply(s_, t):
        seen.update(on_link=on_link(s.net.topo, s.params, s.state, ports, t), before=int(s.state.ctr[C_DELIVERED]))
        apply(s_, t)
        seen["at_once"] = int(s.state.ctr[C_DROPPED])

    f.apply = counting_apply
    bad, audited = [0], set()

    def check(t, end):
        a = audit(s.params, s.state)
        ctr = s.state.ctr
        bad[0] += int(ctr[C_INJECTED] != ctr[C_DELIVERED] + ctr[C_DROPPED] + a[AU_IN_VCS] + a[AU_DELIVERING])
        audited.add(t)

    S.simulate(s, progress=check)
    ctr = s.state.ctr
    return (f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_faults.py`: packets on link 0-1 at cycle "
            f"5,000: {seen['on_link']}; dropped at that cycle: {seen['at_once']}; dropped in all: "
            f"{int(ctr[C_DROPPED])} (all cause `link`: {int(ctr[C_DROP_LINK])}); cycles audited: {len(audited):,} "
            f"of {s.cycle:,}, audits where injected != delivered + dropped + in "
            f"flight: {bad[0]}; packets delivered after the failure: {int(ctr[C_DELIVERED]) - seen['before']:,}; "
            "the run drained its measured packets and ended normally.")


def main() -> None:
    t0 = time.perf_counter()
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else None
    ds = sweep(SPEC, STORE, workers=workers, resume=STORE.exists()).load()
    plot(ds, ROOT / "docs" / "img" / "faults_dragonfly.png", x="traffic.load", hue="faults.fraction",
         y=["accepted_phits_per_node_cycle", "packet_latency_mean"])
    body = (f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_faults.py` "
            f"({time.perf_counter() - t0:.0f} s, 2 cores): accepted throughput (phits/node/cycle) / mean packet "
            "latency (cycles).\n\n" + table(ds) + "\n\n![accepted throughput and latency against load, one line per "
            "failed fraction](img/faults_dragonfly.png)")
    replace_section(ROOT / "docs" / "faults.md", "dragonfly", body)
    t1 = time.perf_counter()
    fine = sweep(fine_spec(), FINE_STORE, workers=workers, resume=FINE_STORE.exists()).load()
    plot(fine, ROOT / "docs" / "img" / "faults_fraction.png", x="faults.fraction",
         y=["accepted_phits_per_node_cycle"])
    body = (f"Measured {time.strftime('%Y-%m-%d')} by `python docs/gen_faults.py` ({time.perf_counter() - t1:.0f} s): "
            "offered load 0.9 (past saturation), UGAL-L.\n\n" + fine_table(fine)
            + "\n\n![accepted throughput against the failed fraction](img/faults_fraction.png)")
    replace_section(ROOT / "docs" / "faults.md", "fraction", body)
    replace_section(ROOT / "docs" / "faults.md", "midrun", midrun())


if __name__ == "__main__":
    main()
