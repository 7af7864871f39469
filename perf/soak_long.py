"""The soak: at least 1e9 packet-hops over mixed configs, failures included, every run audited (not in CI).

    python perf/soak_long.py [--hops 1e9] [--no-doc]

Runs the configs of MIX in turn, each with a new seed, until the packet-hops reach --hops. A packet-hop is one
switch traversal of one packet (phit_hops / packet_phits; every packet of a run has the same size). Each run is
audited every AUDIT_EVERY cycles (kernels/audit.py: every packet in one place, credits adding up, created =
delivered + dropped + in flight + queued) and at its end (sim.check_conservation); a lost or duplicated packet
raises ConservationError and a stall DeadlockError, and either stops the soak. The totals go to
docs/validation.md (section "soak_long").
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from fastnet.kernels.state import C_CREATED, C_DELIVERED, C_DROPPED, C_PHIT_HOPS  # noqa: E402
from fastnet.sim import check_conservation, prepare, simulate  # noqa: E402

AUDIT_EVERY = 2000  # cycles between mid-run audits

SIM = {"warmup": 5000, "measure": 20000, "drain": 20000}
MIX = {  # name -> config: networks of 500-3000 nodes near or past saturation, most of them with failures
    "dragonfly 1056, ugal_l, 5 % of global links down, one failing and recovering": {
        "topology": {"kind": "dragonfly"}, "routing": {"algorithm": "ugal_l"}, "traffic": {"load": 0.8},
        "faults": {"fraction": 0.05, "link_class": "global",
                   "events": [[8000, "fail", 1, 40], [16000, "recover", 1, 40]]}},
    "dragonfly 1056, val, uniform 0.5": {
        "topology": {"kind": "dragonfly"}, "routing": {"algorithm": "val"}, "traffic": {"load": 0.5}},
    "torus 32x32, adaptive, two links failing": {
        "topology": {"kind": "torus", "dims": [32, 32]}, "routing": {"algorithm": "adaptive"},
        "traffic": {"load": 0.3}, "faults": {"events": [[8000, "fail", 0, 1], [20000, "fail", 33, 65]]}},
    "torus 8x8x8, dor, one link down, shift 5": {
        "topology": {"kind": "torus", "dims": [8, 8, 8]}, "routing": {"algorithm": "dor"},
        "traffic": {"load": 0.3, "pattern": "shift", "shift": 5}, "faults": {"links": [[9, 10]]}},
    "slimfly q=13, ugal_l, 2 % of links down, router 3 failing at 10,000": {
        "topology": {"kind": "slimfly", "q": 13}, "routing": {"algorithm": "ugal_l"}, "traffic": {"load": 0.6},
        "faults": {"fraction": 0.02, "events": [[10000, "fail", 3]], "allow_disconnected": True}},
    "jellyfish 256 x radix 12, ksp, 3 % of links down": {
        "topology": {"kind": "jellyfish", "switches": 256, "radix": 12, "p": 4}, "routing": {"algorithm": "ksp"},
        "traffic": {"load": 0.5}, "faults": {"fraction": 0.03, "allow_disconnected": True}},
    "fat tree 8-ary 3-tree, updown adaptive, islip": {
        "topology": {"kind": "fattree", "k": 8, "n": 3},
        "routing": {"algorithm": "updown", "up_port": "adaptive"}, "router": {"allocator": "islip"},
        "traffic": {"load": 0.8}},
    "mesh 24x24, dor, permutation": {
        "topology": {"kind": "mesh", "dims": [24, 24]}, "routing": {"algorithm": "dor"},
        "traffic": {"load": 0.2, "pattern": "permutation"}},
}


def soak_one(cfg: dict, seed: int) -> dict:
    s = prepare({**cfg, "sim": {**SIM, "seed": seed}})
    audits = [0]

    def check(t: int, end: int) -> None:
        if t // AUDIT_EVERY != check.last // AUDIT_EVERY:
            check_conservation(s)  # the end-of-run audit, mid-run: raises ConservationError
            audits[0] += 1
        check.last = t

    check.last = 0
    simulate(s, progress=check)  # ends with check_conservation (audit + counters) or raises
    ctr = s.state.ctr
    return {"packet_hops": int(ctr[C_PHIT_HOPS]) // s.cfg["traffic"]["packet_phits"], "cycles": int(s.cycle),
            "created": int(ctr[C_CREATED]), "delivered": int(ctr[C_DELIVERED]), "dropped": int(ctr[C_DROPPED]),
            "audits": audits[0] + 1}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hops", type=float, default=1e9)
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    totals = {name: {"runs": 0, "packet_hops": 0, "cycles": 0, "created": 0, "delivered": 0, "dropped": 0,
                     "audits": 0} for name in MIX}
    hops = 0
    for seed, name in zip(itertools.count(1), itertools.cycle(MIX)):
        if hops >= args.hops:
            break
        r = soak_one(MIX[name], seed)
        row = totals[name]
        row["runs"] += 1
        for k, v in r.items():
            row[k] += v
        hops += r["packet_hops"]
        print(f"{time.perf_counter() - t0:7.0f} s  {hops / 1e9:.3f} G packet-hops  {name}: {r}", flush=True)
    wall = time.perf_counter() - t0
    rows = ["| config | runs | cycles | packet-hops | created | delivered | dropped by failures | audits |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in totals.items():
        rows.append(f"| {name} | {r['runs']} | {r['cycles']:,} | {r['packet_hops']:,} | {r['created']:,} "
                    f"| {r['delivered']:,} | {r['dropped']:,} | {r['audits']:,} |")
    t = {k: sum(r[k] for r in totals.values()) for k in ("runs", "cycles", "packet_hops", "audits")}
    body = (f"Measured {time.strftime('%Y-%m-%d')} by `python perf/soak_long.py` ({wall / 60:.0f} min on 2 cores): "
            f"{t['packet_hops']:,} packet-hops in {t['runs']} runs and {t['cycles']:,} cycles, {t['audits']:,} "
            "audits (every 2,000 cycles and at each run's end): 0 packets lost, 0 duplicated, 0 stalls (a "
            "deadlock or a lost packet stops the soak). Each run has its own seed; the packets still queued or in "
            "flight when a run ends after its drain are accounted for by its last audit.\n\n" + "\n".join(rows))
    print(body)
    if not args.no_doc:
        from markers import replace_section

        replace_section(ROOT / "docs" / "validation.md", "soak_long", body)


if __name__ == "__main__":
    main()
