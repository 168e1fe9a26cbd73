package org.gantry.interop;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.impl.consumer.ProcessQueue;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * DefaultMQPushConsumer with a listener that records each message: concurrently (answering
 * RECONSUME_LATER for the bodies named in "failBodies") or orderly (MessageListenerOrderly).
 */
final class PushConsumers {
    private PushConsumers() {
    }

    /** One running push consumer and what it received. */
    static final class Push implements AutoCloseable {
        final DefaultMQPushConsumer consumer;
        final Received received = new Received();

        Push(DefaultMQPushConsumer consumer) {
            this.consumer = consumer;
        }

        @Override
        public void close() {
            consumer.shutdown();
        }
    }

    /**
     * push_start {name, group, namesrv, topic, expression? (tags, default *), sql?, broadcasting?, orderly?,
     * maxReconsumeTimes?, failBodies?, retryDelayLevel?, trace?, accessKey?, secretKey?, consumeFromWhere?}
     * -> the client id.
     */
    static Object start(Args args) throws Exception {
        String name = args.str("name");
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(args.str("group"), Clients.aclHook(args),
            new AllocateMessageQueueAveragely(), args.bool("trace", false), null);
        Clients.configure(consumer, args);
        consumer.setConsumeFromWhere(ConsumeFromWhere.valueOf(args.str("consumeFromWhere", "CONSUME_FROM_FIRST_OFFSET")));
        if (args.bool("broadcasting", false)) {
            broadcasting(consumer);
        }
        if (args.has("maxReconsumeTimes")) {
            consumer.setMaxReconsumeTimes(args.integer("maxReconsumeTimes", 16));
        }
        consumer.setPullBatchSize(args.integer("pullBatchSize", 32));
        if (args.has("sql")) {
            consumer.subscribe(args.str("topic"), MessageSelector.bySql(args.str("sql")));
        } else {
            consumer.subscribe(args.str("topic"), args.str("expression", "*"));
        }
        Push push = new Push(consumer);
        if (args.bool("orderly", false)) {
            consumer.registerMessageListener(new MessageListenerOrderly() {
                @Override
                public ConsumeOrderlyStatus consumeMessage(List<MessageExt> msgs, ConsumeOrderlyContext context) {
                    for (MessageExt msg : msgs) {
                        push.received.add(Messages.received(msg, context.getMessageQueue(), name));
                    }
                    return ConsumeOrderlyStatus.SUCCESS;
                }
            });
        } else {
            Set<String> failBodies = new HashSet<>(args.strings("failBodies"));
            int retryDelayLevel = args.integer("retryDelayLevel", 0);
            consumer.registerMessageListener(new MessageListenerConcurrently() {
                @Override
                public ConsumeConcurrentlyStatus consumeMessage(List<MessageExt> msgs, ConsumeConcurrentlyContext context) {
                    boolean fail = false;
                    for (MessageExt msg : msgs) {
                        push.received.add(Messages.received(msg, context.getMessageQueue(), name));
                        fail |= failBodies.contains(new String(msg.getBody(), java.nio.charset.StandardCharsets.UTF_8));
                    }
                    if (fail) {
                        context.setDelayLevelWhenNextConsume(retryDelayLevel);
                        return ConsumeConcurrentlyStatus.RECONSUME_LATER;
                    }
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                }
            });
        }
        try {
            consumer.start();
        } catch (Exception e) {
            consumer.shutdown();  // a refused start leaves no client behind heartbeating its subscription
            throw e;
        }
        Clients.add(name, push);
        return consumer.buildMQClientId();
    }

    /**
     * setMessageModel(BROADCASTING): MessageModel moved package between 4.9 (common.protocol.heartbeat) and
     * 5.x (remoting.protocol.heartbeat), so one source for both clients reaches it through the setter's type.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void broadcasting(DefaultMQPushConsumer consumer) throws Exception {
        Class modelType = consumer.getMessageModel().getClass();
        Object model = Enum.valueOf(modelType, "BROADCASTING");
        DefaultMQPushConsumer.class.getMethod("setMessageModel", modelType).invoke(consumer, model);
    }

    /** received {name, count?, timeoutMs?}: what the consumer got, once it has ``count`` or the time is up. */
    static Object received(Args args) throws Exception {
        Push push = Clients.get(args.str("name"), Push.class);
        return push.received.await(args.integer("count", 0), args.number("timeoutMs", 0));
    }

    /** queues {name}: the queues this consumer's rebalance holds (not dropped), with their lock state. */
    static Object queues(Args args) {
        Push push = Clients.get(args.str("name"), Push.class);
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map.Entry<MessageQueue, ProcessQueue> entry
            : push.consumer.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().entrySet()) {
            if (entry.getValue().isDropped()) {
                continue;
            }
            Map<String, Object> queue = Messages.queue(entry.getKey());
            queue.put("locked", entry.getValue().isLocked());
            out.add(queue);
        }
        return out;
    }
}
