"""RocketMQ 4.x's plain ACL, as pure modules: the file, its reload, signatures, and who may do what.

- :mod:`.plain_acl_config`: ``plain_acl.yml`` as frozen dataclasses, read and validated
  (:mod:`.plain_acl_yaml` reads the YAML with PyYAML, :mod:`.remote_address` the address patterns,
  :mod:`.permission` the PUB/SUB/DENY bits);
- :mod:`.plain_acl_reloader`: the config in force, re-read when the file changes;
- :mod:`.signature`: what a request's ``Signature`` covers, HmacSHA1 + Base64, constant-time check;
- :mod:`.replay_cache`: Gantry's signed timestamp and nonce, refused when stale or seen before;
- :mod:`.request_rules`: what each request code needs (signature only, resources, or admin);
- :mod:`.access_validator`: ``AclValidator.validate(request, remote_addr)``, raising
  :class:`.acl_refused.AclRefused`;
- :mod:`.client_hook`: ``AclClientHook``, the client-side signer (with a timestamp and nonce by default).
"""

from __future__ import annotations

from brokers.engine.acl.access_validator import AclValidator
from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.client_hook import AclClientHook
from brokers.engine.acl.permission import Perm
from brokers.engine.acl.plain_acl_config import (
    AclConfigError,
    PlainAccessAccount,
    PlainAclConfig,
    load_plain_acl_file,
    parse_plain_acl_text,
)
from brokers.engine.acl.plain_acl_reloader import PlainAclReloader
from brokers.engine.acl.request_rules import REQUEST_RULES, Access, ResourceNeed, required_resources, rule_for
from brokers.engine.acl.signature import sign, verify

__all__ = [
    "REQUEST_RULES",
    "Access",
    "AclClientHook",
    "AclConfigError",
    "AclRefused",
    "AclValidator",
    "Perm",
    "PlainAccessAccount",
    "PlainAclConfig",
    "PlainAclReloader",
    "ResourceNeed",
    "load_plain_acl_file",
    "parse_plain_acl_text",
    "required_resources",
    "rule_for",
    "sign",
    "verify",
]
