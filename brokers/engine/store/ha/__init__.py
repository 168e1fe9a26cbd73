"""Master/slave replication of the commit log (RocketMQ's HA service).

``ha_config.py`` the settings, ``ha_protocol.py`` the wire framing, ``replica_appender.py`` the
slave's write path, ``group_transfer.py`` the synchronous double write's wait list,
``ha_service.py`` the master's side, ``ha_client.py`` the slave's side, and
``ha_message_store.py`` the :class:`MessageStore` that puts them around the local store.
"""
