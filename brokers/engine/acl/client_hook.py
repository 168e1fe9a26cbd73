"""AclClientHook: signs outgoing requests the way RocketMQ's ACL clients do (AclClientRPCHook).

Before a request is sent: put ``AccessKey`` (and ``SecurityToken`` when given, and ``OnsChannel`` like
the C++ and ONS clients) into its ext fields, then sign all ext fields and the body and add
``Signature``. Sign last — after every header field is final — and again for each resend.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from brokers.engine.acl.signature import ACCESS_KEY, ONS_CHANNEL, SECURITY_TOKEN, SIGNATURE, SigningKey, signing_key
from brokers.engine.remoting.command import RemotingCommand

DEFAULT_ONS_CHANNEL = "ALIYUN"  # what RocketMQ's C++ client sends by default; any value verifies


@dataclass(frozen=True, slots=True)
class AclClientHook:
    access_key: str
    secret_key: str = field(repr=False)
    ons_channel: str | None = DEFAULT_ONS_CHANNEL  # None: leave it out, as the Java AclClientRPCHook does
    security_token: str | None = field(default=None, repr=False)
    _key: SigningKey = field(init=False, repr=False, compare=False)  # the secret's HMAC key schedule, made once

    def __post_init__(self) -> None:
        object.__setattr__(self, "_key", signing_key(self.secret_key))

    def sign_request(self, command: RemotingCommand) -> RemotingCommand:
        """Add the credentials and the signature to ``command`` (in place); return it."""
        fields = command.ext_fields
        fields.pop(SIGNATURE, None)
        fields[ACCESS_KEY] = self.access_key
        if self.ons_channel is not None:
            fields[ONS_CHANNEL] = self.ons_channel
        if self.security_token is not None:
            fields[SECURITY_TOKEN] = self.security_token
        fields[SIGNATURE] = self._key.signature(fields, command.body)
        return command
