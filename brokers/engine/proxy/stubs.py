"""The ``apache.rocketmq.v2`` definitions, from the generated modules Apache's official Python client
ships (``rocketmq.grpc_protocol``), loaded without running that client's package ``__init__``.

Importing ``rocketmq`` runs the client's logging setup: it creates ``~/logs/rocketmq_python`` (an
import error where the home directory is not writable, as for a service account) and calls
``logging.config.dictConfig``, which closes every handler the process has. A broker must not pay
for that, so when ``rocketmq`` is not imported yet, this registers it as a plain package of the
same directory; the client's own ``__init__`` runs on the first attribute the package is asked for
(``from rocketmq import Producer``), so a process that also uses the client still gets it whole.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any


def _register_bare_package() -> None:
    if "rocketmq" in sys.modules:
        return
    spec = importlib.util.find_spec("rocketmq")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the rocketmq-python-client package (Apache's 5.x Python client) is not installed")
    package = types.ModuleType("rocketmq")
    package.__path__ = list(spec.submodule_search_locations)
    package.__file__ = spec.origin
    package.__spec__ = spec
    package.__package__ = "rocketmq"

    origin = spec.origin  # the package's __init__.py (a package found with search locations has one)

    def __getattr__(name: str) -> Any:  # the client's own __init__, the first time anything else is asked for
        if name.startswith("__"):
            raise AttributeError(name)
        del package.__getattr__
        with open(str(origin), encoding="utf-8") as source:
            exec(compile(source.read(), str(origin), "exec"), package.__dict__)  # noqa: S102 (the installed package's own code)
        return getattr(package, name)

    package.__getattr__ = __getattr__  # type: ignore[method-assign]  # a module's own __getattr__ (PEP 562)
    sys.modules["rocketmq"] = package


_register_bare_package()

from rocketmq.grpc_protocol import definition_pb2, service_pb2, service_pb2_grpc  # noqa: E402

__all__ = ["definition_pb2", "service_pb2", "service_pb2_grpc"]
