"""Exports for schedulers, installers and buyers, read off the one validated topology graph.

Each module is a set of pure functions of (spec, topology) that return text or plain data:
`slurm` (topology.conf), `kubernetes` (node labels, Kueue objects), `cabling` (one row per
cable), `bom` (bill of materials with cost and power ranges), `nccl` (NCCL / EFA env per pool).
`write_all` writes them to a folder.
"""
