"""acl_signer: the ``access_key`` / ``secret_key`` every Gantry client takes, as a request signer.

Every client (Producer, PushConsumer, PullConsumer, MQAdminClient, BlockingMQAdminClient,
SimpleProducer, PullClient and their asyncio forms) takes both keys or neither; the signer goes to
the remoting client under the client's driver, which signs every request it writes (name server
and broker calls, resends, oneway heartbeats) the way RocketMQ's ``AclClientRPCHook`` does.
Empty strings count as absent, so settings that default to ``""`` turn signing off.
"""

from __future__ import annotations

from brokers.engine.acl.client_hook import AclClientHook


def acl_signer(access_key: str | None, secret_key: str | None) -> AclClientHook | None:
    """A signer for these keys, None when neither is given; ValueError when only one is."""
    if not access_key and not secret_key:
        return None
    if not access_key or not secret_key:
        raise ValueError("give both access_key and secret_key (or neither)")
    return AclClientHook(access_key, secret_key)
