"""Gantry's pure messaging tier (no framework imports): common, remoting, acl, namesrv, broker, store, client.

``__version__`` is Gantry's version, the one place it is kept: the ``gantry-client`` distribution
(pyproject.toml) takes its version from here.
"""

from __future__ import annotations

__version__ = "0.1.0"
