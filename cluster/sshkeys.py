"""SSH public keys as the providers take them: `cloud.ssh_public_key` checked before deploying.

A public key line is `type base64 [comment]` (OpenSSH authorized_keys, sshd(8)); its base64 is
an SSH wire blob whose first field repeats the type (RFC 4253 section 6.6). Some providers take a
`user:` prefix, some only some key types: each cloud's `LoginKey` says which, with its source
(cluster/clouds/<cloud>/).
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from dataclasses import dataclass

# What `ssh-keygen -t` writes today; DSA is gone from OpenSSH 9.8.
KEY_TYPES = frozenset({
    "ssh-rsa", "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
})
USER = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$")  # a Linux user name (useradd's portable set)


@dataclass(frozen=True)
class LoginKey:
    """cloud.ssh_public_key as one provider takes it (each cloud's CLOUD.login_key)."""

    hint: str = ""  # how to give a key that cannot log in ("": the one line of id_ed25519.pub, cluster.resolve)
    # why a `user:` prefix is refused, {user!r} the prefix and {user_form} the form that has one
    # (None: the provider takes one)
    no_user: str | None = None
    user_form: str = ""  # where the provider takes `user:type base64`: that form, as messages name it
    user_note: str = ""  # the same, as a hint adds it
    types: tuple[str, ...] = ()  # the key types it takes (): any OpenSSH writes
    types_words: str = ""  # those types, in words
    min_rsa_bits: int = 0
    required: str | None = None  # bare nodes: why they have no login without a key (None: the key is optional)
    required_hint: str = ""


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


def provider_key_problem(provider: str, login: LoginKey, text: str, user_form: str) -> str | None:
    """Why `cloud.ssh_public_key` cannot log in on `provider`, which takes keys as `login` says, or
    None; `user_form` is the form with a `user:` prefix, as a refusal of one names it."""
    user, key = split_user(text)
    if user is not None:
        if login.no_user is not None:
            return login.no_user.format(user=user, user_form=user_form)
        if not USER.match(user):
            return f"{user!r} is not a Linux user name (lowercase letters, digits, '_', '.', '-')"
    problem = key_problem(key)
    if problem is not None:
        return problem
    if login.types:
        key_type, data = key.split(" ")[:2]
        if key_type not in login.types:
            return f"{provider} takes {login.types_words}, not {key_type}"
        if key_type == "ssh-rsa":
            bits = _mpint_bits(_fields(base64.b64decode(data))[2])
            if bits < login.min_rsa_bits:
                return f"{provider} takes RSA keys of at least {login.min_rsa_bits} bits; this one has {bits}"
    return None
