"""Where the tasks (ranks) of a closed-loop workload run: `[workload] mapping` and `ranks_per_node`.

A node offers `ranks_per_node` slots. `linear` fills the slots in node order (rank i on node i // ranks_per_node);
`random` takes a seeded random permutation of the slots (`mapping_seed`, default `sim.seed`); `round_robin_routers`
and `round_robin_groups` deal consecutive ranks to different routers, or to different groups
(`Topology.router_group`: dragonfly groups, Slim Fly subgraph groups, fat-tree levels' pods), a router's or a
group's slots in node order; a file gives one node per rank (a node at most `ranks_per_node` times).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..build.network import Network
from ..errors import ConfigError


def _round_robin(owner: np.ndarray, k: int) -> np.ndarray:
    """Slots (as nodes) in round-robin order over owners: the first slot of every owner, then the second, ..."""
    N = len(owner)
    by_owner = np.argsort(owner, kind="stable")
    first = np.searchsorted(owner[by_owner], owner[by_owner], side="left")
    pos = np.empty(N, dtype=np.int64)
    pos[by_owner] = np.arange(N) - first  # a node's place among its owner's nodes
    slot_node = np.repeat(np.arange(N, dtype=np.int64), k)
    slot_pos = pos[slot_node] * k + np.tile(np.arange(k, dtype=np.int64), N)
    return slot_node[np.lexsort((owner[slot_node], slot_pos))]


def place(w: dict[str, Any], n_ranks: int, net: Network, seed: int, where: np.ndarray | None = None) -> np.ndarray:
    """int64[n_ranks]: the node of each rank, among the nodes `where` (default: all, in order)."""
    where = np.arange(net.n_nodes, dtype=np.int64) if where is None else np.asarray(where, dtype=np.int64)
    k, N, mapping = w["ranks_per_node"], len(where), w["mapping"]
    if n_ranks > N * k:
        raise ConfigError("workload.tasks", f"the program has {n_ranks} ranks, more than the {N} nodes x "
                          f"workload.ranks_per_node = {k} it may use")
    if mapping == "linear":
        return where[np.arange(n_ranks) // k]
    if mapping == "random":
        mseed = seed if w["mapping_seed"] == "auto" else w["mapping_seed"]
        return where[np.random.default_rng([mseed, 0x3A9]).permutation(N * k)[:n_ranks] // k]
    if mapping == "round_robin_routers":
        return where[_round_robin(net.node_router[where].astype(np.int64), k)[:n_ranks]]
    if mapping == "round_robin_groups":
        return where[_round_robin(net.topo.router_group[net.node_router[where]].astype(np.int64), k)[:n_ranks]]
    path = Path(mapping)
    try:
        nodes = np.array([int(x) for x in path.read_text().replace(",", " ").split()], dtype=np.int64)
    except (OSError, ValueError) as e:
        raise ConfigError("workload.mapping", f"cannot read one node number per rank from {path}: {e}") from None
    nodes = nodes[:n_ranks]
    if len(nodes) < n_ranks or not np.isin(nodes, where).all() or np.bincount(nodes).max() > k:
        raise ConfigError("workload.mapping", f"{path} must give {n_ranks} nodes of the {N} it may use, each at "
                          f"most workload.ranks_per_node = {k} times")
    return nodes
