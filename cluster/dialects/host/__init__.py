"""The host side of every on-prem pool: its QoS and rail-routing script, its NCCL settings and the
script that finds NCCL's socket interface (`render.py`, templates in `templates/host/`)."""
