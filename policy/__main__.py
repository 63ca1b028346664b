"""The gpu-cluster policy pack: the only place the PolicyPack is built (building it starts the
analyzer's gRPC server and blocks, so tests import gpu_cluster_policies instead)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # gpu_cluster_policies, and the project's cluster package

from gpu_cluster_policies import policies  # noqa: E402
from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

PolicyPack(name="gpu-cluster", enforcement_level=EnforcementLevel.MANDATORY, policies=policies())
