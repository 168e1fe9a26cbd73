"""Request processors of the broker: one module per family of request codes.

Each processor class takes a ``BrokerContext`` (``broker_context.py``: the controller is one, but
no processor imports it) and registers its handlers on the remoting server with
``register(server)``. Handlers answer every bad input with a non-zero code and a
remark that names what was wrong, and store nothing in that case.
"""
