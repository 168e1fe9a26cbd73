"""Message filters by property: RocketMQ's SQL92 selector (``MessageSelector.bySql``), compiled once, evaluated per message.

``sql92_lexer`` cuts a selector into tokens, ``sql92_parser`` builds the expression tree (``sql92_ast``)
with RocketMQ's parse-time checks and Gantry's limits, ``sql92_eval`` turns the tree into one Python
function, ``java_values`` holds the Java comparison and conversion rules RocketMQ's evaluator applies,
and ``selector_cache`` compiles a subscription's expression once for every pull that uses it.
Standard library only: the broker imports it, nothing here imports the broker.
"""
