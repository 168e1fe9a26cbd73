"""Closing the gateway's shared admin clients: the one part of :mod:`.client` the apps may call.

The clients themselves stay private to the gateway (apps call its functions, never the raw client);
a name-server set that is edited or removed has its client closed here, and the next call builds one
from what the set is now.
"""

from __future__ import annotations

from brokers.gateway.client import forget_admin_client, reset_admin_client

__all__ = ["forget_admin_client", "reset_admin_client"]
