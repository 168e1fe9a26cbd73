package org.gantry.interop.grpc;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageBuilder;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.ProducerBuilder;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.java.impl.producer.SendReceiptImpl;

/** The gRPC client's Producer: started on a list of topics, sending normal and FIFO messages one by one. */
final class GrpcProducers {
    private GrpcProducers() {
    }

    /** producer_start {name, endpoints, topics?, tls?, accessKey?, secretKey?, maxAttempts?} -> the name. */
    static Object start(Args args) throws Exception {
        String name = args.str("name");
        ProducerBuilder builder = GrpcClients.PROVIDER.newProducerBuilder()
            .setClientConfiguration(GrpcClients.configuration(args))
            .setTopics(args.strings("topics").toArray(new String[0]));
        if (args.has("maxAttempts")) {
            builder.setMaxAttempts(args.integer("maxAttempts", 3));
        }
        Producer producer = builder.build();
        GrpcClients.add(name, producer);
        return name;
    }

    /**
     * send {name, messages: [{topic, body, tag?, keys? [..], messageGroup?, properties? {..}, deliveryTimestamp?}]}
     * -> one receipt per message, in order: {messageId, queueId, brokerName, offset}. The first refusal throws.
     */
    static Object send(Args args) throws Exception {
        Producer producer = GrpcClients.get(args.str("name"), Producer.class);
        List<Map<String, Object>> receipts = new ArrayList<>();
        for (Args spec : args.list("messages")) {
            SendReceipt receipt = producer.send(message(spec));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("messageId", receipt.getMessageId().toString());
            if (receipt instanceof SendReceiptImpl) {
                SendReceiptImpl impl = (SendReceiptImpl) receipt;
                out.put("queueId", impl.getMessageQueue().getQueueId());
                out.put("brokerName", impl.getMessageQueue().getBroker().getName());
                out.put("offset", impl.getOffset());
            }
            receipts.add(out);
        }
        return receipts;
    }

    private static Message message(Args spec) {
        MessageBuilder builder = GrpcClients.PROVIDER.newMessageBuilder()
            .setTopic(spec.str("topic"))
            .setBody(spec.str("body").getBytes(StandardCharsets.UTF_8));
        if (spec.has("tag")) {
            builder.setTag(spec.str("tag"));
        }
        List<String> keys = spec.strings("keys");
        if (!keys.isEmpty()) {
            builder.setKeys(keys.toArray(new String[0]));
        }
        if (spec.has("messageGroup")) {
            builder.setMessageGroup(spec.str("messageGroup"));
        }
        if (spec.has("deliveryTimestamp")) {
            builder.setDeliveryTimestamp(spec.number("deliveryTimestamp", 0));
        }
        for (Map.Entry<String, String> property : spec.map("properties").entrySet()) {
            builder.addProperty(property.getKey(), property.getValue());
        }
        return builder.build();
    }
}
