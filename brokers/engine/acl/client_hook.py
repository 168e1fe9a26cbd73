"""AclClientHook: signs outgoing requests the way RocketMQ's ACL clients do (AclClientRPCHook), plus a timestamp and nonce.

Before a request is sent: put ``AccessKey`` (and ``SecurityToken`` when given, and ``OnsChannel`` like
the C++ and ONS clients) into its ext fields, then sign all ext fields and the body and add
``Signature``. Sign last — after every header field is final — and again for each resend.

With ``replay_protection`` (the default) two more ext fields go in before signing: ``GantryTimestamp``
(the clock's ms) and ``GantryNonce`` (128 random bits, new at each signing, so a resend is a new
request). They are signed like every ext field, so changing or removing either breaks the signature;
Gantry's servers refuse a request whose timestamp is off their clock by more than the window or whose
nonce they saw (``replay_cache.py``). Apache's brokers sign every ext field too and ignore fields they
do not know, so the same requests verify there. ``replay_protection=False`` signs exactly as
RocketMQ 4.x's Java client does (what a test of a 4.x client needs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from brokers.engine.acl.signature import (
    ACCESS_KEY,
    GANTRY_NONCE,
    GANTRY_TIMESTAMP,
    ONS_CHANNEL,
    SECURITY_TOKEN,
    SIGNATURE,
    SigningKey,
    signing_key,
)
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.remoting.command import RemotingCommand

DEFAULT_ONS_CHANNEL = "ALIYUN"  # what RocketMQ's C++ client sends by default; any value verifies
NONCE_BYTES = 16  # 128 bits: no two signings collide in practice, nor can a nonce be guessed


@dataclass(frozen=True, slots=True)
class AclClientHook:
    access_key: str
    secret_key: str = field(repr=False)
    ons_channel: str | None = DEFAULT_ONS_CHANNEL  # None: leave it out, as the Java AclClientRPCHook does
    security_token: str | None = field(default=None, repr=False)
    replay_protection: bool = True  # sign GantryTimestamp and GantryNonce too
    clock: Clock = field(default=SYSTEM_CLOCK, repr=False, compare=False)
    _key: SigningKey = field(init=False, repr=False, compare=False)  # the secret's HMAC key schedule, made once

    def __post_init__(self) -> None:
        object.__setattr__(self, "_key", signing_key(self.secret_key))

    def sign_request(self, command: RemotingCommand) -> RemotingCommand:
        """Add the credentials, a fresh timestamp and nonce, and the signature to ``command`` (in place); return it."""
        fields = command.ext_fields
        fields.pop(SIGNATURE, None)
        fields[ACCESS_KEY] = self.access_key
        if self.ons_channel is not None:
            fields[ONS_CHANNEL] = self.ons_channel
        if self.security_token is not None:
            fields[SECURITY_TOKEN] = self.security_token
        if self.replay_protection:
            fields[GANTRY_TIMESTAMP] = str(self.clock.now_ms())
            fields[GANTRY_NONCE] = os.urandom(NONCE_BYTES).hex()
        else:
            fields.pop(GANTRY_TIMESTAMP, None)
            fields.pop(GANTRY_NONCE, None)
        fields[SIGNATURE] = self._key.signature(fields, command.body)
        return command
