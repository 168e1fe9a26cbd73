package org.gantry.interop;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/** DefaultLitePullConsumer: subscribe (the group's rebalance) or assign (every queue of the topic), then poll and commit. */
final class LitePullConsumers {
    private LitePullConsumers() {
    }

    /** One running lite pull consumer. */
    static final class Lite implements AutoCloseable {
        final DefaultLitePullConsumer consumer;

        Lite(DefaultLitePullConsumer consumer) {
            this.consumer = consumer;
        }

        @Override
        public void close() {
            consumer.shutdown();
        }
    }

    /**
     * lite_start {name, group, namesrv, topic, expression? | sql?, assign?, autoCommit?, accessKey?, secretKey?}
     * -> the client id.
     */
    static Object start(Args args) throws Exception {
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer(args.str("group"), Clients.aclHook(args));
        Clients.configure(consumer, args);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setAutoCommit(args.bool("autoCommit", true));
        consumer.setPollTimeoutMillis(args.number("pollTimeoutMs", 1000));
        String topic = args.str("topic");
        boolean assign = args.bool("assign", false);
        if (!assign) {
            if (args.has("sql")) {
                consumer.subscribe(topic, MessageSelector.bySql(args.str("sql")));
            } else {
                consumer.subscribe(topic, args.str("expression", "*"));
            }
        }
        try {
            consumer.start();
        } catch (Exception e) {
            consumer.shutdown();
            throw e;
        }
        Clients.add(args.str("name"), new Lite(consumer));
        if (assign) {
            Collection<MessageQueue> queues = consumer.fetchMessageQueues(topic);
            consumer.assign(queues);
        }
        return consumer.buildMQClientId();
    }

    /** poll {name, count, timeoutMs}: poll until ``count`` messages arrived or the time is up; those messages. */
    static Object poll(Args args) {
        Lite lite = Clients.get(args.str("name"), Lite.class);
        int count = args.integer("count", 1);
        long deadline = System.currentTimeMillis() + args.number("timeoutMs", 10_000);
        List<Map<String, Object>> out = new ArrayList<>();
        while (out.size() < count && System.currentTimeMillis() < deadline) {
            for (MessageExt msg : lite.consumer.poll(Math.max(1, Math.min(1000, deadline - System.currentTimeMillis())))) {
                out.add(Messages.received(msg, null, args.str("name")));
            }
        }
        return out;
    }

    /** commit {name}: commitSync of what was polled; the committed offset of each queue it holds. */
    static Object commit(Args args) throws Exception {
        Lite lite = Clients.get(args.str("name"), Lite.class);
        lite.consumer.commitSync();
        List<Map<String, Object>> out = new ArrayList<>();
        for (MessageQueue mq : lite.consumer.assignment()) {
            Map<String, Object> queue = Messages.queue(mq);
            queue.put("committed", lite.consumer.committed(mq));
            out.add(queue);
        }
        return out;
    }
}
