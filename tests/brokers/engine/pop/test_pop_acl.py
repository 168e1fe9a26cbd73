"""POP, ACK and CHANGE need SUB on the topic and on the group, on a broker with an ACL file."""

from __future__ import annotations

import os

from brokers.engine.acl import AclClientHook
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.pop.conftest import run

ACL = """\
accounts:
  - accessKey: pop-admin
    secretKey: admin-secret-1
    admin: true
  - accessKey: pop-user1
    secretKey: popper-secret-1
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms: [PopAcl=SUB]
    groupPerms: [allowed=SUB]
"""


def test_pop_ack_change_need_sub_on_topic_and_group(pop_cluster, tmp_path):
    acl_file = tmp_path / "plain_acl.yml"
    acl_file.write_text(ACL)
    os.chmod(acl_file, 0o600)

    async def scenario():
        async with pop_cluster(acl_file=str(acl_file)) as c:
            admin = RemotingClient(signer=AclClientHook("pop-admin", "admin-secret-1"))
            user = RemotingClient(signer=AclClientHook("pop-user1", "popper-secret-1"))
            try:
                created = await admin.invoke(
                    c.addr(),
                    RemotingCommand.request(
                        RequestCode.UPDATE_AND_CREATE_TOPIC,
                        {
                            "topic": "PopAcl",
                            "defaultTopic": "TBW102",
                            "readQueueNums": 1,
                            "writeQueueNums": 1,
                            "perm": 6,
                            "topicFilterType": "SINGLE_TAG",
                            "topicSysFlag": 0,
                            "order": False,
                        },
                    ),
                    5,
                )
                assert created.code == 0, created
                base = {
                    "topic": "PopAcl",
                    "queueId": 0,
                    "maxMsgNums": 1,
                    "invisibleTime": 60000,
                    "pollTime": 0,
                    "bornTime": 0,
                    "initMode": 0,
                    "offset": 0,
                    "extraInfo": "0 1 60000 0 0 broker-a 0 0",
                }
                for code in (
                    RequestCode.POP_MESSAGE,
                    RequestCode.ACK_MESSAGE,
                    RequestCode.CHANGE_MESSAGE_INVISIBLETIME,
                ):
                    denied = await user.invoke(
                        c.addr(), RemotingCommand.request(code, {**base, "consumerGroup": "other"}), 5
                    )
                    assert denied.code == ResponseCode.NO_PERMISSION, (code, denied)
                    assert "group other" in denied.remark
                    allowed = await user.invoke(
                        c.addr(), RemotingCommand.request(code, {**base, "consumerGroup": "allowed"}), 5
                    )
                    assert allowed.code != ResponseCode.NO_PERMISSION, (code, allowed)
            finally:
                await admin.close()
                await user.close()

    run(scenario())
