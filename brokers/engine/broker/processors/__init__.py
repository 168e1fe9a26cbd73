"""Request processors of the broker: one module per family of request codes.

Each processor class takes the BrokerController and registers its handlers on the remoting
server with ``register(server)``. Handlers answer every bad input with a non-zero code and a
remark that names what was wrong, and store nothing in that case.
"""
