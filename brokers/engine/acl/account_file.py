"""ensure_plain_acl_file: the ACL file ``make run`` starts the cluster with, generated on first start.

On first start there is no file: one is written with two accounts and random secrets,

- ``gantry-admin`` (``admin: true``, no topic or group entries: every resource and the admin codes)
  for the console, Celery and the brokers' own requests;
- ``gantry-demo`` (PUB|SUB on every topic, SUB on every group) for the demo workload,

the directory made 0700 and the file 0600 before a secret is written (created with ``O_EXCL``, so
an existing file is never overwritten). Later starts read the file as it is: edit it to add
accounts (servers re-read it when it changes). :class:`AclAccounts` says which keys to sign with.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field

from brokers.engine.acl.plain_acl_config import AclConfigError, PlainAccessAccount, load_plain_acl_file

ADMIN_ACCESS_KEY = "gantry-admin"
DEMO_ACCESS_KEY = "gantry-demo"
SECRET_BYTES = 24  # 192 bits, written as 48 hex digits (no character the YAML reader must quote)


@dataclass(frozen=True, slots=True)
class AclAccounts:
    """Where the file is, and the admin and demo credentials found in it (the demo's None when absent)."""

    path: str
    created: bool
    admin_access_key: str
    admin_secret_key: str = field(repr=False)
    demo_access_key: str | None
    demo_secret_key: str | None = field(repr=False)


def _generated_text() -> str:
    return f"""\
# Gantry's ACL, RocketMQ 4.x plain_acl.yml format. Written by `make run` on first start with random
# secrets; the servers re-read it when it changes. Keep it private (0600): it holds the secrets.
# RocketMQ 4.x signatures can be replayed by whoever captures a request: off loopback, turn TLS on
#   python manage.py run_cluster --acl-file THIS_FILE --tls-mode enforcing --tls-cert server.pem --tls-key server.key --tls-ca ca.pem
# (docs/security.md, "TLS"). Gantry's own clients sign a timestamp and nonce as well; an account
# used only by them may refuse 4.x signatures with `gantryRequireReplayProtection: true`.
globalWhiteRemoteAddresses: []
accounts:
  # the console, Celery, mqadmin and the brokers sign with this one (MQ_ACCESS_KEY / MQ_SECRET_KEY)
  - accessKey: {ADMIN_ACCESS_KEY}
    secretKey: {secrets.token_hex(SECRET_BYTES)}
    whiteRemoteAddress:
    admin: true
  # the demo workload's producer and consumers
  - accessKey: {DEMO_ACCESS_KEY}
    secretKey: {secrets.token_hex(SECRET_BYTES)}
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
"""


def ensure_plain_acl_file(path: str) -> AclAccounts:
    """Create ``path`` with an admin and a demo account unless it exists; read its accounts back.

    AclConfigError when the existing file is not a valid ACL file.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    os.chmod(directory, 0o700)
    created = False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        created = True
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(_generated_text())
    config = load_plain_acl_file(path)
    admin = next((a for a in config.accounts.values() if a.admin), None)
    demo = config.account(DEMO_ACCESS_KEY)
    if admin is None:
        raise AclConfigError(f"{path}: no account has admin: true, so the console and the brokers cannot sign")
    return AclAccounts(path, created, admin.access_key, admin.secret_key, *_keys(demo))


def _keys(account: PlainAccessAccount | None) -> tuple[str | None, str | None]:
    return (None, None) if account is None else (account.access_key, account.secret_key)
