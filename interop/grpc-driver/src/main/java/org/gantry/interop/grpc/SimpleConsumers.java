package org.gantry.interop.grpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.java.message.MessageViewImpl;

/**
 * The gRPC client's SimpleConsumer: the test receives, acks and changes the invisible duration itself.
 * Each received message is kept by its receipt handle, the name the test uses for it in simple_ack and
 * simple_change_invisible (the client acks a MessageView, not a handle).
 */
final class SimpleConsumers {
    private SimpleConsumers() {
    }

    /** One running simple consumer and the messages it received and has not acked, by receipt handle. */
    static final class Simple implements AutoCloseable {
        final SimpleConsumer consumer;
        final Map<String, MessageView> unacked = new ConcurrentHashMap<>();

        Simple(SimpleConsumer consumer) {
            this.consumer = consumer;
        }

        MessageView take(String receiptHandle) {
            MessageView view = unacked.remove(receiptHandle);
            if (view == null) {
                throw new IllegalArgumentException("no unacked message with receiptHandle " + receiptHandle);
            }
            return view;
        }

        @Override
        public void close() throws Exception {
            consumer.close();
        }
    }

    /** simple_start {name, endpoints, group, topic, filter? | sql?, awaitMs? (default 2000), tls?, accessKey?, secretKey?}. */
    static Object start(Args args) throws Exception {
        String name = args.str("name");
        SimpleConsumer consumer = GrpcClients.PROVIDER.newSimpleConsumerBuilder()
            .setClientConfiguration(GrpcClients.configuration(args))
            .setConsumerGroup(args.str("group"))
            .setSubscriptionExpressions(GrpcClients.subscription(args))
            .setAwaitDuration(Duration.ofMillis(args.number("awaitMs", 2000)))
            .build();
        GrpcClients.add(name, new Simple(consumer));
        return name;
    }

    /** simple_receive {name, max? (default 16), invisibleMs? (default 30000)} -> the messages, each with its receiptHandle. */
    static Object receive(Args args) throws Exception {
        Simple simple = GrpcClients.get(args.str("name"), Simple.class);
        List<MessageView> views = simple.consumer.receive(args.integer("max", 16), Duration.ofMillis(args.number("invisibleMs", 30000)));
        List<Map<String, Object>> out = new ArrayList<>();
        for (MessageView view : views) {
            Map<String, Object> message = Views.of(view);
            simple.unacked.put((String) message.get("receiptHandle"), view);
            out.add(message);
        }
        return out;
    }

    /** simple_ack {name, receiptHandle} -> true; the client's exception when the endpoint refuses. */
    static Object ack(Args args) throws Exception {
        Simple simple = GrpcClients.get(args.str("name"), Simple.class);
        String handle = args.str("receiptHandle");
        MessageView view = simple.take(handle);
        try {
            simple.consumer.ack(view);
        } catch (Exception e) {
            simple.unacked.put(handle, view);
            throw e;
        }
        return true;
    }

    /** simple_change_invisible {name, receiptHandle, invisibleMs} -> the new receipt handle the endpoint gave. */
    static Object changeInvisible(Args args) throws Exception {
        Simple simple = GrpcClients.get(args.str("name"), Simple.class);
        String handle = args.str("receiptHandle");
        MessageView view = simple.take(handle);
        try {
            simple.consumer.changeInvisibleDuration(view, Duration.ofMillis(args.number("invisibleMs", 30000)));
        } catch (Exception e) {
            simple.unacked.put(handle, view);
            throw e;
        }
        String renewed = ((MessageViewImpl) view).getReceiptHandle();  // the client keeps the answer's handle
        simple.unacked.put(renewed, view);
        return renewed;
    }
}
