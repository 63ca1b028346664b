"""SSH public keys as the providers take them: `cloud.ssh_public_key` checked before deploying.

A public key line is `type base64 [comment]` (OpenSSH authorized_keys, sshd(8)); its base64 is
an SSH wire blob whose first field repeats the type (RFC 4253 section 6.6). GCP's `ssh-keys`
metadata takes `user:type base64 [comment]`; Azure's `linuxConfiguration.ssh.publicKeys[].keyData`
takes the key alone, RSA of at least 2048 bits or Ed25519 (learn.microsoft.com "Detailed steps:
Create and manage SSH keys for authentication to a Linux VM in Azure", Supported SSH key formats;
the pinned pulumi-azure-native SshPublicKey.key_data: "at least 2048-bit and in ssh-rsa format").
"""

from __future__ import annotations

import base64
import binascii
import re
import struct

# What `ssh-keygen -t` writes today; DSA is gone from OpenSSH 9.8.
KEY_TYPES = frozenset({
    "ssh-rsa", "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
})
AZURE_KEY_TYPES = ("ssh-rsa", "ssh-ed25519")
AZURE_MIN_RSA_BITS = 2048
USER = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$")  # a Linux user name (useradd's portable set)


def _fields(blob: bytes) -> list[bytes]:
    """The length-prefixed strings of an SSH wire blob; ValueError when it does not parse."""
    fields = []
    offset = 0
    while offset < len(blob):
        if offset + 4 > len(blob):
            raise ValueError("truncated length")
        (length,) = struct.unpack(">I", blob[offset:offset + 4])
        offset += 4
        if offset + length > len(blob):
            raise ValueError("truncated field")
        fields.append(blob[offset:offset + length])
        offset += length
    return fields


def _mpint_bits(value: bytes) -> int:
    return int.from_bytes(value, "big").bit_length()


def split_user(key: str) -> tuple[str | None, str]:
    """`user:type base64 ...` -> (user, the key); a key without a user prefix -> (None, key)."""
    first, _, rest = key.partition(" ")
    if ":" in first:
        user, _, key_type = first.partition(":")
        return user, f"{key_type} {rest}" if rest else key_type
    return None, key


def key_problem(key: str) -> str | None:
    """Why `key` (no user prefix) is not an OpenSSH public key line, or None."""
    words = key.split(" ")
    if len(words) < 2:
        return "a public key line has at least a type and the base64 key"
    key_type, data = words[0], words[1]
    if key_type not in KEY_TYPES:
        return f"key type {key_type!r} is not one OpenSSH writes ({', '.join(sorted(KEY_TYPES))})"
    try:
        blob = base64.b64decode(data, validate=True)
        fields = _fields(blob)
    except (binascii.Error, ValueError):
        return "the key's base64 does not decode to an SSH public key"
    if not fields or fields[0].decode("ascii", "replace") != key_type:
        return f"the key's data is not a {key_type} key (its encoded type differs)"
    if key_type == "ssh-ed25519" and (len(fields) != 2 or len(fields[1]) != 32):
        return "an ssh-ed25519 key holds one 32-byte point"
    if key_type == "ssh-rsa" and len(fields) != 3:
        return "an ssh-rsa key holds an exponent and a modulus"
    return None


def provider_key_problem(target: str, text: str) -> str | None:
    """Why `cloud.ssh_public_key` cannot log in on `target`, or None."""
    user, key = split_user(text)
    if user is not None:
        if target == "azure":
            return (f"Azure's keyData takes the key alone; the {user!r}: prefix (GCP's ssh-keys form) makes it "
                    "invalid (the scale set's user is azureuser)")
        if not USER.match(user):
            return f"{user!r} is not a Linux user name (lowercase letters, digits, '_', '.', '-')"
    problem = key_problem(key)
    if problem is not None:
        return problem
    if target == "azure":
        key_type, data = key.split(" ")[:2]
        if key_type not in AZURE_KEY_TYPES:
            return f"Azure takes RSA (at least {AZURE_MIN_RSA_BITS} bits) or Ed25519 keys, not {key_type}"
        if key_type == "ssh-rsa":
            bits = _mpint_bits(_fields(base64.b64decode(data))[2])
            if bits < AZURE_MIN_RSA_BITS:
                return f"Azure takes RSA keys of at least {AZURE_MIN_RSA_BITS} bits; this one has {bits}"
    return None
