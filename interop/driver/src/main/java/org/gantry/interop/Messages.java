package org.gantry.interop;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/** Messages to and from the JSON the tests speak: bodies are UTF-8 text. */
final class Messages {
    private Messages() {
    }

    /** {"topic", "body", "tags"?, "keys"?, "props"?: {...}, "delayLevel"?} as a Message. */
    static Message of(Args spec) {
        Message msg = new Message(spec.str("topic"), spec.str("body").getBytes(StandardCharsets.UTF_8));
        if (spec.has("tags")) {
            msg.setTags(spec.str("tags"));
        }
        if (spec.has("keys")) {
            msg.setKeys(spec.str("keys"));
        }
        for (Map.Entry<String, String> prop : spec.map("props").entrySet()) {
            msg.putUserProperty(prop.getKey(), prop.getValue());
        }
        if (spec.has("delayLevel")) {
            msg.setDelayTimeLevel(spec.integer("delayLevel", 0));
        }
        return msg;
    }

    static Map<String, Object> queue(MessageQueue mq) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", mq.getTopic());
        out.put("brokerName", mq.getBrokerName());
        out.put("queueId", mq.getQueueId());
        return out;
    }

    /** A received message: what a test checks (the properties are all of them, the system ones too). */
    static Map<String, Object> received(MessageExt msg, MessageQueue mq, String consumer) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("consumer", consumer);
        out.put("topic", msg.getTopic());
        out.put("body", new String(msg.getBody(), StandardCharsets.UTF_8));
        out.put("tags", msg.getTags());
        out.put("keys", msg.getKeys());
        out.put("props", msg.getProperties());
        out.put("msgId", msg.getMsgId());
        out.put("brokerName", mq != null ? mq.getBrokerName() : msg.getBrokerName());
        out.put("queueId", msg.getQueueId());
        out.put("queueOffset", msg.getQueueOffset());
        out.put("reconsumeTimes", msg.getReconsumeTimes());
        out.put("storeHost", String.valueOf(msg.getStoreHost()));
        out.put("bornTimestamp", msg.getBornTimestamp());
        out.put("storeTimestamp", msg.getStoreTimestamp());
        out.put("thread", Thread.currentThread().getName());
        return out;
    }
}
