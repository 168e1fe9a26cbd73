"""The /metadata/ page without a browser: a viewer may export but gets no import form; an upload that is not
JSON, too large, or of the wrong shape is refused under the file field and changes nothing; a stale apply
(the brokers changed since the dry run) is refused with 409."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from metadata.document import MAX_DOCUMENT_BYTES

pytestmark = pytest.mark.django_db


def upload(content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile("metadata.json", content, content_type="application/json")


def test_viewer_exports_but_may_not_import(viewer_client, console_cluster, topic) -> None:
    page = viewer_client.get("/metadata/")
    assert page.status_code == 200 and "Importing needs the operator role." in page.content.decode()
    download = viewer_client.get("/metadata/export", {"scope": f"cluster:{console_cluster.cluster}"})
    assert download.status_code == 200 and download["Content-Disposition"].startswith("attachment;")
    assert json.loads(download.content)["topicConfigTable"][topic]["readQueueNums"] == 4
    assert (
        viewer_client.post(
            "/metadata/dry-run", {"scope": f"cluster:{console_cluster.cluster}", "file": upload(b"{}")}
        ).status_code
        == 403
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not json at all", "not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"topicConfigTable": {"MetaPageT": {"perm": 12}}}', "topicConfigTable.MetaPageT.perm: unknown perm 12"),
        (b" " * (MAX_DOCUMENT_BYTES + 1), "the limit is"),
    ],
)
def test_bad_uploads_are_refused_under_the_file(operator_client, console_cluster, content, reason) -> None:
    answer = operator_client.post(
        "/metadata/dry-run", {"scope": f"cluster:{console_cluster.cluster}", "file": upload(content)}
    )
    assert answer.status_code in (400, 413)
    assert reason in answer.content.decode()


def test_stale_apply_is_refused(operator_client, console_cluster, console_admin, topic) -> None:
    from brokers.engine.common.topic_config import TopicConfig

    document = {"topicConfigTable": {topic: {"readQueueNums": 8, "writeQueueNums": 8}}}
    scope = f"cluster:{console_cluster.cluster}"
    dry = operator_client.post("/metadata/dry-run", {"scope": scope, "file": upload(json.dumps(document).encode())})
    plan_id = dry.context["plan"].plan_id
    console_admin.create_or_update_topic(
        console_cluster.broker_addr("broker-a"), TopicConfig(topic, 5, 5)
    )  # someone else, meanwhile
    stale = operator_client.post(
        "/metadata/apply", {"scope": scope, "document": json.dumps(document), "plan_id": plan_id}
    )
    assert stale.status_code == 409 and "run the dry run again" in stale.content.decode()
    assert console_admin.get_all_topic_config(console_cluster.broker_addr("broker-b"))[topic].read_queue_nums == 4
