package org.gantry.interop.grpc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.java.message.MessageViewImpl;

/** A received MessageView as JSON: what the tests compare with what was sent. */
final class Views {
    private Views() {
    }

    static Map<String, Object> of(MessageView view) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("messageId", view.getMessageId().toString());
        out.put("topic", view.getTopic());
        ByteBuffer body = view.getBody();
        byte[] bytes = new byte[body.remaining()];
        body.get(bytes);
        out.put("body", new String(bytes, StandardCharsets.UTF_8));
        out.put("tag", view.getTag().orElse(null));
        out.put("keys", new ArrayList<>(view.getKeys()));
        out.put("messageGroup", view.getMessageGroup().orElse(null));
        out.put("properties", new TreeMap<>(view.getProperties()));
        out.put("deliveryAttempt", view.getDeliveryAttempt());
        out.put("bornHost", view.getBornHost());
        out.put("bornTimestamp", view.getBornTimestamp());
        if (view instanceof MessageViewImpl) {
            MessageViewImpl impl = (MessageViewImpl) view;
            out.put("receiptHandle", impl.getReceiptHandle());
            out.put("queueId", impl.getMessageQueue().getQueueId());
            out.put("brokerName", impl.getMessageQueue().getBroker().getName());
            out.put("offset", impl.getOffset());
        }
        return out;
    }
}
