"""The gpu-cluster policy pack: the only place the PolicyPack is built (building it starts the
analyzer's gRPC server and blocks, so tests import gpu_cluster_policies instead).

The pack is self-contained, so `pulumi policy publish` can archive this folder: its policies are
gpu_cluster_policies.py beside this file, and the validator they run is the installed gpu-cluster
package (requirements.txt). Run from a checkout (`pulumi preview --policy-pack policy`), the
checkout's own `cluster` package is used, so the pack checks what the program beside it deploys."""

import importlib
import sys
from pathlib import Path

PACK = Path(__file__).resolve().parent
CHECKOUT = PACK.parent if (PACK.parent / "cluster" / "__init__.py").is_file() else None
sys.path[:0] = [str(PACK), *([str(CHECKOUT)] if CHECKOUT else [])]  # gpu_cluster_policies; a checkout's cluster

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

policies = importlib.import_module("gpu_cluster_policies").policies
PolicyPack(name="gpu-cluster", enforcement_level=EnforcementLevel.MANDATORY, policies=policies())
