"""What each record of a binary DUMPI trace holds: the MPI functions in DUMPI's id order and their arguments in
the order sst-dumpi's writer puts them in the file (transcribed from sst-dumpi @ a4c8bf5: the function ids from
dumpi/common/funclabels.h, each layout from the `dumpi_read_*` function of dumpi/common/dumpiio.c; dumpi2ascii
prints the same argument names). Checked once against dumpi2ascii built from that commit: a record of each
function written from this table printed the argument values written.

A layout is a string of `name:code` fields, read in order. Codes (all integers big-endian):

| code | in the file | DUMPI's argument types |
|---|---|---|
| `i` | int32 | int, source, dest, tag, request, error code |
| `q` | int64 | file offsets and sizes, function addresses |
| `h` | uint16 | handles: datatype, comm, group, info, win, file, errhandler, keyval |
| `b` | uint8 | op, comparison, topology, thread level, combiner, type class, order, file mode, whence, ... |
| `s` | statuses (below) | MPI_Status, an array of them |
| `I` | int32 count, then that many int32 | arrays of ints and requests |
| `H` | int32 count, then that many uint16 | arrays of datatypes, infos |
| `B` | int32 count, then that many uint8 | distributions |
| `J` | int32 count, then that many `I` | Group_range_incl's rank triplets |
| `c` | int32 length, then the bytes | a string |
| `C` | int32 count, then that many `c` | an array of strings |
| `K` | int32 count, then that many `C` | Comm_spawn_multiple's argvs |
| `V` | as many `c` as the preceding `argc` | MPI_Init's argv |

Statuses are in the file only when the record's mask has a status bit: int32 count, then per status int32 bytes,
int32 source, uint8 cancelled, uint8 error and (DUMPI 0.6.3 and later) int32 tag.

Suffixes: `?` marks a field present only at the root (the record's `commrank`, or `oldcommrank` in Comm_spawn*,
equals its `root`); `>=X.Y.Z` / `<X.Y.Z` a field present only in files of DUMPI version X.Y.Z and later /
before it (the header's version). A layout of None is a function DUMPI writes no record for (MPI_Pcontrol writes
function enter / exit records instead).
"""

from __future__ import annotations

from typing import NamedTuple

ALL_FUNCTIONS = 290  # the id after the last MPI function (sst-dumpi's reader stops at it after MPI_Finalize)
FUNCTION_ENTER, FUNCTION_EXIT = 291, 292  # profiled user functions and MPI_Pcontrol annotations
END_OF_STREAM = 293  # the id that ends the call stream
FUNCTION_CALL = "fn:q"  # the layout of FUNCTION_ENTER and FUNCTION_EXIT records

# (name, layout) by function id; MPIO_* are DUMPI's waits and tests on MPI-IO requests.
FUNCTIONS: tuple[tuple[str, str | None], ...] = (
    # 0
    ("MPI_Send", "count:i datatype:h dest:i tag:i comm:h"),
    ("MPI_Recv", "count:i datatype:h source:i tag:i comm:h status:s"),
    ("MPI_Get_count", "status:s datatype:h count:i"),
    ("MPI_Bsend", "count:i datatype:h dest:i tag:i comm:h"),
    ("MPI_Ssend", "count:i datatype:h dest:i tag:i comm:h"),
    ("MPI_Rsend", "count:i datatype:h dest:i tag:i comm:h"),
    ("MPI_Buffer_attach", "size:i"),
    ("MPI_Buffer_detach", "size:i"),
    ("MPI_Isend", "count:i datatype:h dest:i tag:i comm:h request:i"),
    ("MPI_Ibsend", "count:i datatype:h dest:i tag:i comm:h request:i"),
    # 10
    ("MPI_Issend", "count:i datatype:h dest:i tag:i comm:h request:i"),
    ("MPI_Irsend", "count:i datatype:h dest:i tag:i comm:h request:i"),
    ("MPI_Irecv", "count:i datatype:h source:i tag:i comm:h request:i"),
    ("MPI_Wait", "request:i status:s"),
    ("MPI_Test", "request:i flag:i status:s"),
    ("MPI_Request_free", "request:i"),
    ("MPI_Waitany", "count:i requests:I index:i status:s"),
    ("MPI_Testany", "count:i requests:I index:i flag:i status:s"),
    ("MPI_Waitall", "count:i requests:I statuses:s"),
    ("MPI_Testall", "count:i requests:I flag:i statuses:s"),
    # 20
    ("MPI_Waitsome", "count:i requests:I outcount:i indices:I statuses:s"),
    ("MPI_Testsome", "count:i requests:I outcount:i indices:I statuses:s"),
    ("MPI_Iprobe", "source:i tag:i comm:h flag:i status:s"),
    ("MPI_Probe", "source:i tag:i comm:h status:s"),
    ("MPI_Cancel", "request:i"),
    ("MPI_Test_cancelled", "status:s cancelled:i"),
    ("MPI_Send_init", "count:i datatype:h dest:i tag:i comm:h request:i"),
    ("MPI_Bsend_init", "count:i datatype:h dest:i tag:i comm:h request:i"),
    ("MPI_Ssend_init", "count:i datatype:h dest:i tag:i comm:h request:i"),
    ("MPI_Rsend_init", "count:i datatype:h dest:i tag:i comm:h request:i"),
    # 30
    ("MPI_Recv_init", "count:i datatype:h source:i tag:i comm:h request:i"),
    ("MPI_Start", "request:i"),
    ("MPI_Startall", "count:i requests:I"),
    ("MPI_Sendrecv", "sendcount:i sendtype:h dest:i sendtag:i recvcount:i recvtype:h source:i recvtag:i comm:h "
     "status:s"),
    ("MPI_Sendrecv_replace", "count:i datatype:h dest:i sendtag:i source:i recvtag:i comm:h status:s"),
    ("MPI_Type_contiguous", "count:i oldtype:h newtype:h"),
    ("MPI_Type_vector", "count:i blocklength:i stride:i oldtype:h newtype:h"),
    ("MPI_Type_hvector", "count:i blocklength:i stride:i oldtype:h newtype:h"),
    ("MPI_Type_indexed", "count:i lengths:I indices:I oldtype:h newtype:h"),
    ("MPI_Type_hindexed", "count:i lengths:I indices:I oldtype:h newtype:h"),
    # 40
    ("MPI_Type_struct", "count:i lengths:I indices:I>=0.6.9 indices:i<0.6.9 oldtypes:H newtype:h"),
    ("MPI_Address", "address:i"),
    ("MPI_Type_extent", "datatype:h extent:i"),
    ("MPI_Type_size", "datatype:h size:i"),
    ("MPI_Type_lb", "datatype:h lb:i"),
    ("MPI_Type_ub", "datatype:h ub:i"),
    ("MPI_Type_commit", "datatype:h"),
    ("MPI_Type_free", "datatype:h"),
    ("MPI_Get_elements", "status:s datatype:h elements:i"),
    ("MPI_Pack", "incount:i datatype:h outcount:i position.in:i position.out:i comm:h"),
    # 50
    ("MPI_Unpack", "incount:i position.in:i position.out:i outcount:i datatype:h comm:h"),
    ("MPI_Pack_size", "incount:i datatype:h comm:h size:i"),
    ("MPI_Barrier", "comm:h"),
    ("MPI_Bcast", "count:i datatype:h root:i comm:h"),
    ("MPI_Gather", "commrank:i sendcount:i sendtype:h root:i comm:h recvcount:i? recvtype:h?"),
    ("MPI_Gatherv", "commrank:i commsize:i sendcount:i sendtype:h root:i comm:h recvcounts:I? displs:I? recvtype:h"),
    ("MPI_Scatter", "commrank:i recvcount:i recvtype:h root:i comm:h sendcount:i? sendtype:h?"),
    ("MPI_Scatterv", "commrank:i commsize:i sendtype:h recvcount:i recvtype:h root:i comm:h sendcounts:I? "
     "displs:I?"),
    ("MPI_Allgather", "sendcount:i sendtype:h recvcount:i recvtype:h comm:h"),
    ("MPI_Allgatherv", "commsize:i sendcount:i sendtype:h recvcounts:I displs:I recvtype:h comm:h"),
    # 60
    ("MPI_Alltoall", "sendcount:i sendtype:h recvcount:i recvtype:h comm:h"),
    ("MPI_Alltoallv", "commsize:i sendcounts:I senddispls:I sendtype:h recvcounts:I recvdispls:I recvtype:h comm:h"),
    ("MPI_Reduce", "count:i datatype:h op:b root:i comm:h"),
    ("MPI_Op_create", "commute:i op:b"),
    ("MPI_Op_free", "op:b"),
    ("MPI_Allreduce", "count:i datatype:h op:b comm:h"),
    ("MPI_Reduce_scatter", "commsize:i recvcounts:I datatype:h op:b comm:h"),
    ("MPI_Scan", "count:i datatype:h op:b comm:h"),
    ("MPI_Group_size", "group:h size:i"),
    ("MPI_Group_rank", "group:h rank:i"),
    # 70
    ("MPI_Group_translate_ranks", "group1:h count:i ranks1:I group2:h ranks2:I"),
    ("MPI_Group_compare", "group1:h group2:h result:b"),
    ("MPI_Comm_group", "comm:h group:h"),
    ("MPI_Group_union", "group1:h group2:h newgroup:h"),
    ("MPI_Group_intersection", "group1:h group2:h newgroup:h"),
    ("MPI_Group_difference", "group1:h group2:h newgroup:h"),
    ("MPI_Group_incl", "group:h count:i ranks:I newgroup:h"),
    ("MPI_Group_excl", "group:h count:i ranks:I newgroup:h"),
    ("MPI_Group_range_incl", "group:h count:i ranges:J newgroup:h"),
    ("MPI_Group_range_excl", "group:h count:i ranges:J newgroup:h"),
    # 80
    ("MPI_Group_free", "group:h"),
    ("MPI_Comm_size", "comm:h size:i"),
    ("MPI_Comm_rank", "comm:h rank:i"),
    ("MPI_Comm_compare", "comm1:h comm2:h result:b"),
    ("MPI_Comm_dup", "oldcomm:h newcomm:h"),
    ("MPI_Comm_create", "oldcomm:h group:h newcomm:h"),
    ("MPI_Comm_split", "oldcomm:h color:i key:i newcomm:h"),
    ("MPI_Comm_free", "comm:h"),
    ("MPI_Comm_test_inter", "comm:h inter:i"),
    ("MPI_Comm_remote_size", "comm:h size:i"),
    # 90
    ("MPI_Comm_remote_group", "comm:h group:h"),
    ("MPI_Intercomm_create", "localcomm:h localleader:i remotecomm:h remoteleader:i tag:i newcomm:h"),
    ("MPI_Intercomm_merge", "comm:h high:i newcomm:h"),
    ("MPI_Keyval_create", "key:h"),
    ("MPI_Keyval_free", "key:h"),
    ("MPI_Attr_put", "comm:h key:i"),
    ("MPI_Attr_get", "comm:h key:i flag:i"),
    ("MPI_Attr_delete", "comm:h key:i"),
    ("MPI_Topo_test", "comm:h topo:b"),
    ("MPI_Cart_create", "oldcomm:h ndim:i dims:I periods:I reorder:i newcomm:h"),
    # 100
    ("MPI_Dims_create", "nodes:i ndim:i dims.in:I dims.out:I"),
    ("MPI_Graph_create", "numedges:i oldcomm:h nodes:i index:I edges:I reorder:i newcomm:h"),
    ("MPI_Graphdims_get", "comm:h nodes:i edges:i"),
    ("MPI_Graph_get", "totedges:i totnodes:i comm:h maxindex:i maxedges:i index:I edges:I"),
    ("MPI_Cartdim_get", "comm:h ndim:i"),
    ("MPI_Cart_get", "ndim:i comm:h maxdims:i dims:I periods:I coords:I>=0.6.8 coords:i<0.6.8"),
    ("MPI_Cart_rank", "ndim:i comm:h coords:I rank:i"),
    ("MPI_Cart_coords", "ndim:i comm:h rank:i maxdims:i coords:I"),
    ("MPI_Graph_neighbors_count", "comm:h rank:i nneigh:i"),
    ("MPI_Graph_neighbors", "nneigh:i comm:h rank:i maxneighbors:i neighbors:I"),
    # 110
    ("MPI_Cart_shift", "comm:h direction:i displ:i source:i dest:i"),
    ("MPI_Cart_sub", "ndim:i oldcomm:h remain_dims:I newcomm:h"),
    ("MPI_Cart_map", "comm:h ndim:i dims:I period:I newrank:i"),
    ("MPI_Graph_map", "numedges:i comm:h nodes:i index:I edges:I newrank:i"),
    ("MPI_Get_processor_name", "name:c resultlen:i"),
    ("MPI_Get_version", "version:i subversion:i"),
    ("MPI_Errhandler_create", "errhandler:h"),
    ("MPI_Errhandler_set", "comm:h errhandler:h"),
    ("MPI_Errhandler_get", "comm:h errhandler:h"),
    ("MPI_Errhandler_free", "errhandler:h"),
    # 120
    ("MPI_Error_string", "errorcode:i errorstring:c resultlen:i"),
    ("MPI_Error_class", "errorcode:i errorclass:i"),
    ("MPI_Wtime", ""),
    ("MPI_Wtick", ""),
    ("MPI_Init", "argc:i argc_again:i<0.6.2 argv:V"),
    ("MPI_Finalize", ""),
    ("MPI_Initialized", "result:i"),
    ("MPI_Abort", "comm:h errorcode:i"),
    ("MPI_Pcontrol", None),
    ("MPI_Close_port", "portname:c"),
    # 130
    ("MPI_Comm_accept", "portname:c info:h root:i oldcomm:h newcomm:h"),
    ("MPI_Comm_connect", "portname:c info:h root:i oldcomm:h newcomm:h"),
    ("MPI_Comm_disconnect", "comm:h"),
    ("MPI_Comm_get_parent", "parent:h"),
    ("MPI_Comm_join", "fd:i comm:h"),
    ("MPI_Comm_spawn", "oldcommrank:i root:i oldcomm:h newcomm:h command:c? argv:C? maxprocs:i? info:h? "
     "errcodes:I?"),
    ("MPI_Comm_spawn_multiple", "totprocs:i oldcommrank:i root:i oldcomm:h newcomm:h count:i? commands:C? argvs:K? "
     "maxprocs:I? info:H? errcodes:I?"),
    ("MPI_Lookup_name", "servicename:c info:h portname:c"),
    ("MPI_Open_port", "info:h portname:c"),
    ("MPI_Publish_name", "servicename:c info:h portname:c"),
    # 140
    ("MPI_Unpublish_name", "servicename:c info:h portname:c"),
    ("MPI_Accumulate", "origincount:i origintype:h targetrank:i targetdisp:i targetcount:i targettype:h op:b win:h"),
    ("MPI_Get", "origincount:i origintype:h targetrank:i targetdisp:i targetcount:i targettype:h win:h"),
    ("MPI_Put", "origincount:i origintype:h targetrank:i targetdisp:i targetcount:i targettype:h win:h"),
    ("MPI_Win_complete", "win:h"),
    ("MPI_Win_create", "size:i dispunit:i info:h comm:h win:h"),
    ("MPI_Win_fence", "assertion:b win:h"),
    ("MPI_Win_free", "win:h"),
    ("MPI_Win_get_group", "win:h group:h"),
    ("MPI_Win_lock", "locktype:b winrank:i assertion:b win:h"),
    # 150
    ("MPI_Win_post", "group:h assertion:b win:h"),
    ("MPI_Win_start", "group:h assertion:b win:h"),
    ("MPI_Win_test", "win:h flag:i"),
    ("MPI_Win_unlock", "winrank:i win:h"),
    ("MPI_Win_wait", "win:h"),
    ("MPI_Alltoallw", "commsize:i sendcounts:I senddispls:I sendtypes:H recvcounts:I recvdispls:I recvtypes:H "
     "comm:h"),
    ("MPI_Exscan", "count:i datatype:h op:b comm:h"),
    ("MPI_Add_error_class", "errorclass:i"),
    ("MPI_Add_error_code", "errorclass:i errorcode:i"),
    ("MPI_Add_error_string", "errorcode:i errorstring:c"),
    # 160
    ("MPI_Comm_call_errhandler", "comm:h errorcode:i"),
    ("MPI_Comm_create_keyval", "keyval:h"),
    ("MPI_Comm_delete_attr", "comm:h keyval:h"),
    ("MPI_Comm_free_keyval", "keyval:h"),
    ("MPI_Comm_get_attr", "comm:h keyval:h flag:i"),
    ("MPI_Comm_get_name", "comm:h name:c resultlen:i"),
    ("MPI_Comm_set_attr", "comm:h keyval:h"),
    ("MPI_Comm_set_name", "comm:h name:c"),
    ("MPI_File_call_errhandler", "file:h errorcode:i"),
    ("MPI_Grequest_complete", "request:i"),
    # 170
    ("MPI_Grequest_start", "request:i"),
    ("MPI_Init_thread", "argc:i argv:V required:b provided:b"),
    ("MPI_Is_thread_main", "flag:i"),
    ("MPI_Query_thread", "supported:b"),
    ("MPI_Status_set_cancelled", "status:s flag:i"),
    ("MPI_Status_set_elements", "status:s datatype:h count:i"),
    ("MPI_Type_create_keyval", "keyval:h"),
    ("MPI_Type_delete_attr", "datatype:h keyval:h"),
    ("MPI_Type_dup", "oldtype:h newtype:h"),
    ("MPI_Type_free_keyval", "keyval:h"),
    # 180
    ("MPI_Type_get_attr", "datatype:h keyval:h flag:i"),
    ("MPI_Type_get_contents", "numdatatypes:i numaddresses:i numintegers:i datatype:h maxintegers:i maxaddresses:i "
     "maxdatatypes:i arrintegers:I arraddresses:I arrdatatypes:H"),
    ("MPI_Type_get_envelope", "datatype:h numintegers:i numaddresses:i numdatatypes:i combiner:b"),
    ("MPI_Type_get_name", "datatype:h name:c resultlen:i"),
    ("MPI_Type_set_attr", "datatype:h keyval:h"),
    ("MPI_Type_set_name", "datatype:h name:c"),
    ("MPI_Type_match_size", "typeclass:b size:i datatype:h"),
    ("MPI_Win_call_errhandler", "win:h errorcode:i"),
    ("MPI_Win_create_keyval", "keyval:h"),
    ("MPI_Win_delete_attr", "win:h keyval:h"),
    # 190
    ("MPI_Win_free_keyval", "keyval:h"),
    ("MPI_Win_get_attr", "win:h keyval:h flag:i"),
    ("MPI_Win_get_name", "win:h name:c resultlen:i"),
    ("MPI_Win_set_attr", "win:h keyval:h"),
    ("MPI_Win_set_name", "win:h name:c"),
    ("MPI_Alloc_mem", "size:i info:h"),
    ("MPI_Comm_create_errhandler", "errhandler:h"),
    ("MPI_Comm_get_errhandler", "comm:h errhandler:h"),
    ("MPI_Comm_set_errhandler", "comm:h errhandler:h"),
    ("MPI_File_create_errhandler", "errhandler:h"),
    # 200
    ("MPI_File_get_errhandler", "file:h errhandler:h"),
    ("MPI_File_set_errhandler", "file:h errhandler:h"),
    ("MPI_Finalized", "flag:i"),
    ("MPI_Free_mem", ""),
    ("MPI_Get_address", "address:i"),
    ("MPI_Info_create", "info:h"),
    ("MPI_Info_delete", "info:h key:c"),
    ("MPI_Info_dup", "oldinfo:h newinfo:h"),
    ("MPI_Info_free", "info:h"),
    ("MPI_Info_get", "info:h key:c valuelength:i value:c flag:i"),
    # 210
    ("MPI_Info_get_nkeys", "info:h nkeys:i"),
    ("MPI_Info_get_nthkey", "info:h n:i key:c"),
    ("MPI_Info_get_valuelen", "info:h key:c valuelen:i flag:i"),
    ("MPI_Info_set", "info:h key:c value:c"),
    ("MPI_Pack_external", "datarep:c incount:i intype:h outcount:i position.in:i position.out:i"),
    ("MPI_Pack_external_size", "datarep:c incount:i datatype:h size:i"),
    ("MPI_Request_get_status", "request:i flag:i status:s"),
    ("MPI_Type_create_darray", "size:i rank:i ndims:i gsizes:I distribs:B dargs:I psizes:I order:b oldtype:h "
     "newtype:h"),
    ("MPI_Type_create_hindexed", "count:i blocklengths:I displacements:I oldtype:h newtype:h"),
    ("MPI_Type_create_hvector", "count:i blocklength:i stride:i oldtype:h newtype:h"),
    # 220
    ("MPI_Type_create_indexed_block", "count:i blocklength:i displacments:I oldtype:h newtype:h"),
    ("MPI_Type_create_resized", "oldtype:h lb:i extent:i newtype:h"),
    ("MPI_Type_create_struct", "count:i blocklengths:I displacements:I oldtypes:H newtype:h"),
    ("MPI_Type_create_subarray", "ndims:i sizes:I subsizes:I starts:I order:b oldtype:h newtype:h"),
    ("MPI_Type_get_extent", "datatype:h lb:i extent:i"),
    ("MPI_Type_get_true_extent", "datatype:h lb:i extent:i"),
    ("MPI_Unpack_external", "datarep:c insize:i position.in:i position.out:i outcount:i datatype:h"),
    ("MPI_Win_create_errhandler", "errhandler:h"),
    ("MPI_Win_get_errhandler", "win:h errhandler:h"),
    ("MPI_Win_set_errhandler", "win:h errhandler:h"),
    # 230
    ("MPI_File_open", "comm:h filename:c amode:b info:h file:h"),
    ("MPI_File_close", "file:h"),
    ("MPI_File_delete", "filename:c info:h"),
    ("MPI_File_set_size", "file:h size:q"),
    ("MPI_File_preallocate", "file:h size:q"),
    ("MPI_File_get_size", "file:h size:q"),
    ("MPI_File_get_group", "file:h group:h"),
    ("MPI_File_get_amode", "file:h amode:b"),
    ("MPI_File_set_info", "file:h info:h"),
    ("MPI_File_get_info", "file:h info:h"),
    # 240
    ("MPI_File_set_view", "file:h offset:q hosttype:h filetype:h datarep:c info:h"),
    ("MPI_File_get_view", "file:h offset:q hosttype:h filetype:h datarep:c"),
    ("MPI_File_read_at", "file:h offset:q count:i datatype:h status:s"),
    ("MPI_File_read_at_all", "file:h offset:q count:i datatype:h status:s"),
    ("MPI_File_write_at", "file:h offset:q count:i datatype:h status:s"),
    ("MPI_File_write_at_all", "file:h offset:q count:i datatype:h status:s"),
    ("MPI_File_iread_at", "file:h offset:q count:i datatype:h request:i"),
    ("MPI_File_iwrite_at", "file:h offset:q count:i datatype:h request:i"),
    ("MPI_File_read", "file:h count:i datatype:h status:s"),
    ("MPI_File_read_all", "file:h count:i datatype:h status:s"),
    # 250
    ("MPI_File_write", "file:h count:i datatype:h status:s"),
    ("MPI_File_write_all", "file:h count:i datatype:h status:s"),
    ("MPI_File_iread", "file:h count:i datatype:h request:i"),
    ("MPI_File_iwrite", "file:h count:i datatype:h request:i"),
    ("MPI_File_seek", "file:h offset:q whence:b"),
    ("MPI_File_get_position", "file:h offset:q"),
    ("MPI_File_get_byte_offset", "file:h offset:q bytes:q"),
    ("MPI_File_read_shared", "file:h count:i datatype:h status:s"),
    ("MPI_File_write_shared", "file:h count:i datatype:h status:s"),
    ("MPI_File_iread_shared", "file:h count:i datatype:h request:i"),
    # 260
    ("MPI_File_iwrite_shared", "file:h count:i datatype:h request:i"),
    ("MPI_File_read_ordered", "file:h count:i datatype:h status:s"),
    ("MPI_File_write_ordered", "file:h count:i datatype:h status:s"),
    ("MPI_File_seek_shared", "file:h offset:q whence:b"),
    ("MPI_File_get_position_shared", "file:h offset:q"),
    ("MPI_File_read_at_all_begin", "file:h offset:q count:i datatype:h"),
    ("MPI_File_read_at_all_end", "file:h status:s"),
    ("MPI_File_write_at_all_begin", "file:h offset:q count:i datatype:h"),
    ("MPI_File_write_at_all_end", "file:h status:s"),
    ("MPI_File_read_all_begin", "file:h count:i datatype:h"),
    # 270
    ("MPI_File_read_all_end", "file:h status:s"),
    ("MPI_File_write_all_begin", "file:h count:i datatype:h"),
    ("MPI_File_write_all_end", "file:h status:s"),
    ("MPI_File_read_ordered_begin", "file:h count:i datatype:h"),
    ("MPI_File_read_ordered_end", "file:h status:s"),
    ("MPI_File_write_ordered_begin", "file:h count:i datatype:h"),
    ("MPI_File_write_ordered_end", "file:h status:s"),
    ("MPI_File_get_type_extent", "file:h datatype:h extent:i"),
    ("MPI_Register_datarep", "name:c"),
    ("MPI_File_set_atomicity", "file:h flag:i"),
    # 280
    ("MPI_File_get_atomicity", "file:h flag:i"),
    ("MPI_File_sync", "file:h"),
    ("MPIO_Test", "request:i flag:i status:s"),
    ("MPIO_Wait", "request:i status:s"),
    ("MPIO_Testall", "count:i requests:I flag:i statuses:s"),
    ("MPIO_Waitall", "count:i requests:I statuses:s"),
    ("MPIO_Testany", "count:i requests:I flag:i index:i statuses:s"),
    ("MPIO_Waitany", "count:i requests:I index:i statuses:s"),
    ("MPIO_Waitsome", "count:i requests:I outcount:i indices:I statuses:s"),
    ("MPIO_Testsome", "count:i requests:I outcount:i indices:I statuses:s"),
)


class Field(NamedTuple):
    name: str
    code: str  # one of the codes in the module docstring
    at_root: bool = False  # present only when the record's commrank (oldcommrank) is its root
    since: tuple[int, int, int] | None = None  # present only from this DUMPI version on
    before: tuple[int, int, int] | None = None  # present only before this DUMPI version

    def present(self, version: tuple[int, int, int]) -> bool:
        """Whether a file of this DUMPI version has the field (the root condition is the reader's)."""
        return (self.since is None or version >= self.since) and (self.before is None or version < self.before)


def parse_layout(layout: str) -> tuple[Field, ...]:
    fields = []
    for word in layout.split():
        name, spec = word.split(":")
        since = before = None
        if ">=" in spec:
            spec, version = spec.split(">=")
            since = _version(version)
        elif "<" in spec:
            spec, version = spec.split("<")
            before = _version(version)
        at_root = spec.endswith("?")
        fields.append(Field(name, spec.rstrip("?"), at_root, since, before))
    return tuple(fields)


def _version(text: str) -> tuple[int, int, int]:
    major, minor, patch = (int(x) for x in text.split("."))
    return major, minor, patch


NAMES: tuple[str, ...] = tuple(name for name, _ in FUNCTIONS)  # function id -> name
LAYOUTS: dict[int, tuple[Field, ...]] = {fid: parse_layout(layout) for fid, (_, layout) in enumerate(FUNCTIONS)
                                         if layout is not None}
LAYOUTS[FUNCTION_ENTER] = LAYOUTS[FUNCTION_EXIT] = parse_layout(FUNCTION_CALL)
IDS: dict[str, int] = {name: fid for fid, name in enumerate(NAMES)}
assert len(FUNCTIONS) == ALL_FUNCTIONS
