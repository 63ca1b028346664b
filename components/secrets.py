"""Device credentials: only from Pulumi secret config or the environment, only as secrets.

Nothing gpu-cluster renders needs a credential: switch configs and host scripts carry no user,
password or token (tests/test_secrets.py proves it with a sentinel), so a rendered file can be
committed, diffed and shown in `pulumi preview`. The switch / BMC logins are needed by whatever
pushes those files to the devices (ZTP, Ansible); the program hands them over as one secret
stack output, `device_credentials`, which `pulumi stack output --show-secrets` decrypts.

Sources, in order: `pulumi config set --secret gpu-cluster:<key>`, then the environment
variable. A key set in plain config is refused: it would sit unencrypted in the stack file (`validate`
refuses it too: cluster/credentials.py).
"""

from __future__ import annotations

import os

import pulumi
from pulumi.runtime import config as runtime_config

from cluster.credentials import CREDENTIALS, PROJECT


class PlaintextCredential(ValueError):
    """A credential key set in plain (unencrypted) stack config."""


def device_credentials(config: pulumi.Config) -> pulumi.Output[dict[str, str]] | None:
    """The credentials that are set, as one secret output ({key: value}); None when none is.

    Raises PlaintextCredential (naming the key and the fix, never the value) for a key set in
    plain config."""
    found: dict[str, pulumi.Output[str]] = {}
    for key, variable in sorted(CREDENTIALS.items()):
        full = f"{PROJECT}:{key}"
        if runtime_config.get_config(full) is not None:
            if not runtime_config.is_config_secret(full):
                raise PlaintextCredential(
                    f"{full} is set in plain text (it would sit unencrypted in the stack file); remove it with "
                    f"`pulumi config rm {full}` and set it with `pulumi config set --secret {full}`, or export "
                    f"{variable}")
            found[key] = config.require_secret(key)
        elif os.environ.get(variable):
            found[key] = pulumi.Output.secret(os.environ[variable])
    if not found:
        return None
    return pulumi.Output.secret(pulumi.Output.all(**found))
