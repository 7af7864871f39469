"""The cycle loop (loop.py) and its generate stage (generate.py): the router pipeline of fastnet/kernels/ run
once a cycle with the traffic or workload that feeds it."""
