"""POP: RocketMQ 5's message-level consumption on a Gantry broker (POP_MESSAGE, ACK_MESSAGE,
CHANGE_MESSAGE_INVISIBLETIME; the processor is ``processors/pop.py``).

Semantics. A popped message is invisible to its group for ``invisibleTime`` ms; unless acked it is
delivered again after that, from the same queue offset, with reconsume times + 1 (the 5.x delivery
attempt is reconsume times + 1). CHANGE_MESSAGE_INVISIBLETIME restarts the invisibility from now
(a new popTime, so the old handle stops working). A delivery that expires with reconsume times at
the group's ``retryMaxTimes`` (so after ``retryMaxTimes + 1`` deliveries) goes to
``%DLQ%<group>`` and counts as acked. An orderly pop (``order=true``, FIFO groups,
``consumeMessageOrderly``) gives nothing more from a queue with a delivery still invisible, and on
expiry gives the same messages again, in order.

State (``state.py``). Per (group, topic, queue): the cursor (the next offset the group never popped)
and the deliveries in flight (offset -> batch start, popTime, invisibleTime, reconsume times, commit
log offset, orderly). Below the cursor and not in flight means done, so the group's committed offset
of the queue (ConsumerOffsetManager: lag, GET_CONSUME_STATS) is kept at the lowest offset in flight,
else the cursor. A group's first pop of a queue starts at its committed offset, else per initMode. A
committed offset moved by anything else (an operator's reset) moves the cursor there at the next pop
and forgets the queue's deliveries in flight.

Long polling: a pop that finds nothing parks under its (topic, group) until its pollTime ends; a new
message, an expiry or an orderly ack wakes the oldest parked pop of each group, and a pop that takes a
full batch wakes the next one.

Journal (``journal.py``): ``<store_dir>/pop/journal``, CRC-checked JSON lines, replayed at start (a
torn tail cut off), compacted to a snapshot past ``pop_journal_compact_bytes``. Under SYNC_FLUSH an
answer is written after its record's fsync; under ASYNC_FLUSH the record reaches the OS before the
answer and the disk within ``pop_journal_flush_interval_ms``. So after a SIGKILL every message
popped and not acked is delivered again, and an acked one only when its ack was not yet durable
(never under SYNC_FLUSH; a SIGKILL loses nothing the OS has, a power cut may lose the last interval).

Limits: ``pop_max_inflight_per_group`` deliveries in flight per group (POLLING_FULL with a remark,
expired ones are still redelivered), maxMsgNums 1..32, invisibleTime within
``pop_min_invisible_ms``..``pop_max_invisible_ms``, ``pop_max_polling`` parked pops, 1,024 offsets per
BATCH_ACK_MESSAGE.

Not done: POP state is not replicated to slaves (a slave refuses the three codes; after a failover
the new master starts the group from its committed offsets, so deliveries in flight come again);
POP_ROLLBACK is not served (BATCH_ACK_MESSAGE is, ``batch_ack.py``); redelivery reads the original queue, never
``%RETRY%`` topics, so handles carry retry flag ``0`` only.
"""
