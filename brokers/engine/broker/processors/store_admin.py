"""Store maintenance requests (RocketMQ's AdminBrokerProcessor cases for them).

DELETE_EXPIRED_COMMITLOG (329), no header fields: mqadmin ``deleteExpiredCommitLog``. RocketMQ
calls ``executeDeleteFilesManually`` (expired segments go on the next 20 clean passes, whatever
the hour) and answers SUCCESS; here one pass also runs now, on a worker thread (never the event
loop), so the answer says what it did.

CLEAN_EXPIRED_CONSUMEQUEUE (306), no header fields: mqadmin ``cleanExpiredCQ``. Consume queue
and index files whose records are gone from the commit log are deleted now and every queue's min
offset moved past them (see ``store/retention.py`` for how this differs from RocketMQ).

Both answer SUCCESS with a null remark, as RocketMQ does, and a JSON body Java tools ignore::

    {"deletedCommitLogFiles": 2, "deletedConsumeQueueFiles": 5, "deletedIndexFiles": 1,
     "commitLogMinOffsetBefore": 0, "commitLogMinOffsetAfter": 2147483648, "diskRatio": 0.41, "errors": []}
"""

from __future__ import annotations

import asyncio
import logging

from brokers.engine.broker.processors.admin import _json_body
from brokers.engine.broker.processors.base import Processor, ProcessorRegistry, guarded
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

log = logging.getLogger("brokers.engine.broker")


class StoreAdminProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.DELETE_EXPIRED_COMMITLOG, self.delete_expired_commit_log)
        server.register_processor(RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, self.clean_expired_consume_queue)

    @guarded
    async def delete_expired_commit_log(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        log.warning("invoke deleteExpiredCommitLog start (from %s)", ctx.remote_addr)
        report = await asyncio.to_thread(self.broker.store.retention.execute_delete_files_manually)
        log.warning("invoke deleteExpiredCommitLog end: %s", report.to_json())
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(report.to_json()))

    @guarded
    async def clean_expired_consume_queue(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        log.warning("invoke cleanExpiredConsumeQueue start (from %s)", ctx.remote_addr)
        report = await asyncio.to_thread(self.broker.store.retention.clean_expired_consume_queue)
        log.warning("invoke cleanExpiredConsumeQueue end: %s", report.to_json())
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(report.to_json()))
