"""fastnet's torus routings against BookSim2 (shared/reference/booksim/torus8x8_dor.csv).

Router parameters as BookSim2's run: 8x8 torus, dimension-order routing with two dateline VCs, 8-flit buffers,
1-flit packets, channel latency 2 (injection 1: a flit from a source takes 2 cycles to its router, BookSim2's
sources writing after the network has read its inputs, and 1 back), uniform traffic that may pick the source
itself (`traffic.to_self`, as BookSim2's), credit delay 0, speedup 1, BookSim2's default iSLIP switch and
VC allocators with one iteration, and BookSim2's 4-stage pipeline (routing, VC allocation, switch allocation, switch
traversal: delay 4; a packet is routed and allocated only at the head of its VC, head_delay 3; a VC is
reallocated 2 cycles after a tail).
Then `adaptive` (minimal adaptive on a third VC with the dateline DOR escape channels) against `dor` on
transpose and tornado.
"""

import csv

from common import REFERENCE, markdown_table, run_points, write_csv, write_section

ROUTER = {"buffer_phits": 8, "delay": 4, "speedup": 1.0, "credit_delay": 0, "alloc_iters": 1, "allocator": "islip",
          "crossbar": "flit", "vc_choice": "islip"}  # as BookSim2 (flit: the same as "packet" at speedup 1)
LINKS = {"latency": 2, "latency_injection": 2, "latency_ejection": 1}
SIM = {"warmup": 3000, "measure": 10000, "drain": 3000}


def config(pattern: str, routing: str, load: float) -> dict:
    return {"topology": {"kind": "torus", "dims": [8, 8]}, "links": LINKS,
            "router": {**ROUTER, "vcs": 2 if routing == "dor" else 3}, "routing": {"algorithm": routing},
            "traffic": {"pattern": pattern, "load": load, "packet_phits": 1, "to_self": pattern == "uniform"},
            "sim": SIM}


def saturation(points: list[tuple[float, float | None]]) -> float:
    """Largest accepted throughput among loads still carried (accepted >= 95 % of offered)."""
    carried = [acc for load, acc in points if acc is not None and acc >= 0.95 * load]
    return max(carried) if carried else float("nan")


def main() -> None:
    with (REFERENCE / "booksim" / "torus8x8_dor.csv").open() as f:
        ref = list(csv.DictReader(f))
    sections = []
    rows_all = []
    summary = []
    for pattern in ("uniform", "bitcomp"):
        book = [r for r in ref if r["traffic"] == pattern]
        loads = [float(r["offered"]) for r in book]
        rows = run_points([({"pattern": pattern, "routing": "dor", "load": x}, config(pattern, "dor", x))
                           for x in loads])
        rows_all += rows
        table = []
        for b, r in zip(book, rows):
            acc = b["accepted_flits_per_node_cycle"]
            table.append([b["offered"], float(b["packet_latency_mean"]), acc or "unstable",
                          r["latency"], r["accepted"], "unstable" if r["unstable"] else ""])
        sections.append(f"**{pattern}, dor**\n\n" + markdown_table(
            ["offered", "BookSim2 latency", "BookSim2 accepted", "fastnet latency", "fastnet accepted",
             "fastnet flag"], table))
        ours = saturation([(r["load"], r["accepted"]) for r in rows])
        theirs = saturation([(float(b["offered"]), float(b["accepted_flits_per_node_cycle"]) if
                              b["accepted_flits_per_node_cycle"] else None) for b in book])
        first_unstable = min((float(b["offered"]) for b in book if b["unstable"] == "1"), default=float("nan"))
        reported = [(float(b["offered"]), float(b["accepted_flits_per_node_cycle"])) for b in book
                    if b["accepted_flits_per_node_cycle"]]
        if any(acc < 0.95 * load for load, acc in reported):  # its accepted throughput levelled off: measured
            ref_sat, how = max(acc for _, acc in reported), "highest accepted (levels off)"
        else:  # it went unstable before levelling off: saturation in [last carried, first unstable load)
            ref_sat, how = (theirs + first_unstable) / 2, "midpoint of the two"
        summary.append([pattern, theirs, first_unstable, ref_sat, how, ours,
                        f"{100 * (ours - ref_sat) / ref_sat:+.1f} %"])
    text = ("Saturation throughput = the largest accepted throughput at a load the network still carries "
            "(accepted >= 95 % of offered). BookSim2 prints no accepted figure for loads it judges unstable: "
            "where its accepted throughput levelled off before that, its saturation is measured; otherwise it "
            "lies between its last carried throughput and its first unstable load.\n\n"
            + markdown_table(["pattern", "BookSim2 last carried", "BookSim2 first unstable load",
                              "BookSim2 saturation", "how", "fastnet saturation", "difference"], summary))
    adaptive = []
    for pattern in ("transpose", "tornado"):
        res = {}
        for routing in ("dor", "adaptive"):
            rows = run_points([({"pattern": pattern, "routing": routing, "load": x}, config(pattern, routing, x))
                               for x in (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)])
            rows_all += rows
            res[routing] = max(r["accepted"] for r in rows)
        adaptive.append([pattern, res["dor"], res["adaptive"], res["adaptive"] / res["dor"]])
    write_csv("booksim_torus", rows_all)
    body = (text + "\n\n" + "\n\n".join(sections) + "\n\n**adaptive against dor** (highest accepted throughput "
            "over loads 0.05-0.5)\n\n" + markdown_table(["pattern", "dor", "adaptive", "ratio"], adaptive))
    write_section("booksim_torus", body)


if __name__ == "__main__":
    main()
