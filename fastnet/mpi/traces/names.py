"""Which MPI functions move no data: shared by every reader, so that formats agree on what a `noop` is.

A reader maps the calls it understands (send, recv, collectives, ...) itself; for the rest it asks `is_noop`:
True gives `Call(kind="noop", name=...)`, False gives `Call(kind="unknown", name=...)` (RMA, I/O, v-collectives,
scans, spawn, ...), which lowering refuses or skips and counts.
"""

from __future__ import annotations

# Setup, queries and local bookkeeping. Communicator constructors are collective in MPI but move no
# payload; the readers replay them only to learn communicator membership.
NOOP_NAMES = frozenset({
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Initialized", "MPI_Finalized", "MPI_Abort",
    "MPI_Wtime", "MPI_Wtick", "MPI_Pcontrol", "MPI_Query_thread", "MPI_Is_thread_main",
    "MPI_Get_count", "MPI_Get_elements", "MPI_Get_elements_x", "MPI_Get_version", "MPI_Get_library_version",
    "MPI_Get_processor_name", "MPI_Get_address", "MPI_Address", "MPI_Alloc_mem", "MPI_Free_mem",
    "MPI_Buffer_attach", "MPI_Buffer_detach", "MPI_Pack", "MPI_Unpack", "MPI_Pack_size", "MPI_Pack_external",
    "MPI_Unpack_external", "MPI_Pack_external_size",
    "MPI_Comm_rank", "MPI_Comm_size", "MPI_Comm_group", "MPI_Comm_create", "MPI_Comm_create_group",
    "MPI_Comm_split", "MPI_Comm_split_type", "MPI_Comm_dup", "MPI_Comm_dup_with_info", "MPI_Comm_free",
    "MPI_Comm_compare", "MPI_Comm_test_inter", "MPI_Comm_remote_size", "MPI_Comm_remote_group",
    "MPI_Comm_set_name", "MPI_Comm_get_name", "MPI_Comm_set_info", "MPI_Comm_get_info",
    "MPI_Comm_set_errhandler", "MPI_Comm_get_errhandler", "MPI_Comm_create_errhandler", "MPI_Comm_call_errhandler",
    "MPI_Comm_create_keyval", "MPI_Comm_free_keyval", "MPI_Comm_set_attr", "MPI_Comm_get_attr",
    "MPI_Comm_delete_attr",
    "MPI_Request_free", "MPI_Request_get_status", "MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init",
    "MPI_Rsend_init", "MPI_Recv_init", "MPI_Probe", "MPI_Iprobe", "MPI_Cancel", "MPI_Test_cancelled",
    "MPI_Dims_create", "MPI_Topo_test", "MPI_Cartdim_get", "MPI_Graphdims_get",
})
NOOP_PREFIXES = ("MPI_Type_", "MPI_Group_", "MPI_Info_", "MPI_Errhandler_", "MPI_Keyval_", "MPI_Attr_", "MPI_Op_",
                 "MPI_Cart_", "MPI_Graph_", "MPI_Status_", "MPI_Error_", "MPI_Add_error_")


def is_noop(name: str) -> bool:
    """True for an MPI function that moves no data (see the module docstring)."""
    return name in NOOP_NAMES or name.startswith(NOOP_PREFIXES)
