"""The gpu-cluster policy pack: the only place the PolicyPack is built (building it starts the
analyzer's gRPC server and blocks, so tests import gpu_cluster_policies instead)."""

import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(PROJECT)]  # the project's policy and cluster packages

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policy.gpu_cluster_policies import policies  # noqa: E402

PolicyPack(name="gpu-cluster", enforcement_level=EnforcementLevel.MANDATORY, policies=policies())
