"""KvConfigManager: the name server's namespaced key/value settings (PUT/GET/DELETE_KV_CONFIG).

The namespace ``ORDER_TOPIC_CONFIG`` holds order-topic layouts (``brokerName:queueNum;...``)
that routes carry as ``orderTopicConf`` when order messages are enabled.  Kept in memory, and
in ``kvConfig.json`` (``{"configTable":{"<ns>":{"k":"v"}}}``, RocketMQ's file) when a path is
given; the file is replaced atomically (write a temporary file, fsync, rename).
"""

from __future__ import annotations

import json
import os
import threading

from brokers.engine.common import json_compat
from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private, write_file_atomically

ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"


class KvConfigManager:
    def __init__(self, path: str | None = None, io: FileIO = OS_FILE_IO) -> None:
        self.path = path
        self.io = io
        self._lock = threading.Lock()
        self._table: dict[str, dict[str, str]] = {}

    def load(self) -> None:
        """Read the file if there is one; a missing file is an empty table."""
        if not self.path or not os.path.exists(self.path):
            return
        with open(self.path, "rb") as fh:
            data = json_compat.loads(fh.read() or b"{}")
        table = data.get("configTable") or {} if isinstance(data, dict) else {}
        with self._lock:
            self._table = {str(ns): {str(k): str(v) for k, v in (kv or {}).items()} for ns, kv in table.items()}

    def put_kv_config(self, namespace: str, key: str, value: str) -> None:
        with self._lock:
            self._table.setdefault(namespace, {})[key] = value
            self._persist()

    def delete_kv_config(self, namespace: str, key: str) -> None:
        with self._lock:
            kv = self._table.get(namespace)
            if kv is not None and kv.pop(key, None) is not None:
                if not kv:
                    del self._table[namespace]
                self._persist()

    def get_kv_config(self, namespace: str, key: str) -> str | None:
        with self._lock:
            return self._table.get(namespace, {}).get(key)

    def get_kv_list_by_namespace(self, namespace: str) -> dict[str, str]:
        with self._lock:
            return dict(self._table.get(namespace, {}))

    def _persist(self) -> None:
        if not self.path:
            return
        directory = os.path.dirname(os.path.abspath(self.path))
        makedirs_private(directory)
        text = json.dumps({"configTable": self._table}, indent="\t", sort_keys=True)
        write_file_atomically(self.io, self.path, text.encode("utf-8"), 0o600)
