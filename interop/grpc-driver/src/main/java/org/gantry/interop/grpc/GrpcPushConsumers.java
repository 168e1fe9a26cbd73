package org.gantry.interop.grpc;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.PushConsumerBuilder;

/**
 * The gRPC client's PushConsumer with a listener that records every delivery (with its delivery attempt)
 * and answers SUCCESS, or FAILURE for the bodies the test names (or for every message): the client then
 * retries as the endpoint's settings say, and the endpoint dead-letters after the group's max attempts.
 */
final class GrpcPushConsumers {
    private GrpcPushConsumers() {
    }

    /** One running push consumer and every delivery it got, in arrival order. */
    static final class Push implements AutoCloseable {
        volatile PushConsumer consumer;
        final Received received = new Received();

        @Override
        public void close() throws Exception {
            if (consumer != null) {
                consumer.close();
            }
        }
    }

    /**
     * push_start {name, endpoints, group, topic, filter? | sql?, behaviour? (SUCCESS or FAILURE for every
     * message, default SUCCESS), failBodies? (answered FAILURE), consumptionThreadCount?, tls?, accessKey?,
     * secretKey?} -> the name.
     */
    static Object start(Args args) throws Exception {
        String name = args.str("name");
        ConsumeResult behaviour = ConsumeResult.valueOf(args.str("behaviour", "SUCCESS"));
        Set<String> failBodies = new HashSet<>(args.strings("failBodies"));
        Push push = new Push();
        PushConsumerBuilder builder = GrpcClients.PROVIDER.newPushConsumerBuilder()
            .setClientConfiguration(GrpcClients.configuration(args))
            .setConsumerGroup(args.str("group"))
            .setSubscriptionExpressions(GrpcClients.subscription(args))
            .setMessageListener(view -> {
                Map<String, Object> delivery = Views.of(view);
                ConsumeResult result = failBodies.contains((String) delivery.get("body")) ? ConsumeResult.FAILURE : behaviour;
                delivery.put("result", result.name());
                delivery.put("consumer", name);
                push.received.add(delivery);
                return result;
            });
        if (args.has("consumptionThreadCount")) {
            builder.setConsumptionThreadCount(args.integer("consumptionThreadCount", 20));
        }
        push.consumer = builder.build();
        GrpcClients.add(name, push);
        return name;
    }

    /** received {name, count?, timeoutMs?}: every delivery so far, once there are ``count`` or the time is up. */
    static Object received(Args args) throws Exception {
        Push push = GrpcClients.get(args.str("name"), Push.class);
        return push.received.await(args.integer("count", 0), args.number("timeoutMs", 0));
    }
}
