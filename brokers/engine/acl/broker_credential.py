"""BrokerCredential: the account a broker signs its own requests with (to name servers and its master).

A broker is a client too: it registers with the name servers (103, 104, 10002, 322), and a slave
syncs from its master (21, 43, 45, 201) and hands offsets back (10005). With the ACL on, these
need an admin account. The broker signs with, in this order:

1. ``--acl-access-key`` / ``--acl-secret-key`` when given (a broker without an ACL file of its own,
   or one that must not use the file's first admin);
2. else the first ``admin: true`` account of its own ACL file, read from the config in force (the
   reloader is asked to look at the file first, at most once a second), so a changed secret in the
   file is used from the next request on (the brokers of one cluster share the file, as
   ``run_cluster --acl-file`` arranges);
3. else nothing: requests go unsigned (a name server without ACL takes them).

RocketMQ 4.x brokers sign nothing, since its name servers check nothing; Gantry's name server
checks route writes, so its brokers must sign. They sign as Gantry's clients do, with a timestamp
from the broker's clock and a nonce (``client_hook.py``), so a captured registration cannot be replayed.
"""

from __future__ import annotations

from brokers.engine.acl.access_validator import HasAclConfig
from brokers.engine.acl.client_hook import AclClientHook
from brokers.engine.acl.plain_acl_config import PlainAccessAccount, PlainAclConfig
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.remoting.command import RemotingCommand


def first_admin_account(config: PlainAclConfig) -> PlainAccessAccount | None:
    """The first account with ``admin: true``, in file order."""
    return next((account for account in config.accounts.values() if account.admin), None)


class BrokerCredential:
    """A RequestSigner: fixed keys, else the ACL file's first admin account (see the module docstring)."""

    def __init__(
        self,
        *,
        access_key: str | None = None,
        secret_key: str | None = None,
        acl_source: HasAclConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        if bool(access_key) != bool(secret_key):
            raise ValueError("give both the access key and the secret key, or neither")
        self._clock = clock
        self._fixed = (
            AclClientHook(access_key, secret_key, ons_channel=None, clock=clock) if access_key and secret_key else None
        )
        self._source = acl_source

    @property
    def access_key(self) -> str | None:
        """The access key requests are signed with now (None: unsigned)."""
        hook = self._hook()
        return None if hook is None else hook.access_key

    def _hook(self) -> AclClientHook | None:
        if self._fixed is not None:
            return self._fixed
        if self._source is None:
            return None
        maybe_reload = getattr(self._source, "maybe_reload", None)  # a PlainAclReloader: follow the file
        if maybe_reload is not None:
            maybe_reload()
        account = first_admin_account(self._source.config)
        return (
            None
            if account is None
            else AclClientHook(account.access_key, account.secret_key, ons_channel=None, clock=self._clock)
        )

    def sign_request(self, command: RemotingCommand) -> RemotingCommand:
        hook = self._hook()
        return command if hook is None else hook.sign_request(command)
