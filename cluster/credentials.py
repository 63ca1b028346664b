"""Device credentials gpu-cluster knows by name. They may only be Pulumi secrets
(`pulumi config set --secret gpu-cluster:<key>`, stored as `{secure: <ciphertext>}`) or
environment variables; nothing gpu-cluster renders or prints ever contains them."""

from __future__ import annotations

from collections.abc import Mapping

PROJECT = "gpu-cluster"
# config key (under gpu-cluster:) -> the environment variable that may carry it instead
CREDENTIALS: dict[str, str] = {
    "switch_password": "GPU_CLUSTER_SWITCH_PASSWORD",
    "bmc_password": "GPU_CLUSTER_BMC_PASSWORD",
    "api_token": "GPU_CLUSTER_API_TOKEN",
}


def _secure(value: object) -> bool:
    """How the Pulumi CLI stores a secret in a stack file: `{secure: <ciphertext>}`."""
    return isinstance(value, Mapping) and set(value) == {"secure"} and isinstance(value["secure"], str)


def plaintext_credentials(config: Mapping[str, object]) -> list[tuple[str, str]]:
    """(config key, environment variable) of every credential a stack file's `config:` holds in
    plain text. Never returns the value."""
    found = []
    for key, variable in sorted(CREDENTIALS.items()):
        full = f"{PROJECT}:{key}"
        if full in config and not _secure(config[full]):
            found.append((full, variable))
    return found
