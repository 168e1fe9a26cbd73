package org.gantry.interop;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * DefaultMQProducer, as an application uses it: sync, async (a callback), oneway, batch and ordered
 * sends (a MessageQueueSelector choosing the queue by the hash of a key), with trace on when asked.
 */
final class Producers {
    /** The application's usual ordered selector: the same key, the same queue. */
    static final MessageQueueSelector BY_KEY_HASH = (mqs, msg, key) -> mqs.get(Math.floorMod(key.hashCode(), mqs.size()));

    private Producers() {
    }

    /** producer_start {name, group, namesrv, trace?, accessKey?, secretKey?, sendTimeoutMs?, retries?} -> the client id. */
    static Object start(Args args) throws Exception {
        RPCHook hook = Clients.aclHook(args);
        boolean trace = args.bool("trace", false);
        DefaultMQProducer producer = new DefaultMQProducer(args.str("group"), hook, trace, null);
        Clients.configure(producer, args);
        producer.setSendMsgTimeout(args.integer("sendTimeoutMs", 5000));
        producer.setRetryTimesWhenSendFailed(args.integer("retries", 2));
        producer.setRetryTimesWhenSendAsyncFailed(args.integer("retries", 2));
        producer.start();
        Clients.add(args.str("name"), producer);
        return producer.buildMQClientId();
    }

    /**
     * send {name, mode: sync|async|oneway|batch, messages: [...], orderKey?: per message "orderKey"}
     * -> one result per message (none for oneway; one for the whole batch).
     */
    static Object send(Args args) throws Exception {
        DefaultMQProducer producer = Clients.get(args.str("name"), DefaultMQProducer.class);
        String mode = args.str("mode", "sync");
        List<Args> specs = args.list("messages");
        List<Object> results = new ArrayList<>();
        switch (mode) {
            case "sync":
                for (Args spec : specs) {
                    Message msg = Messages.of(spec);
                    SendResult result = spec.has("orderKey")
                        ? producer.send(msg, BY_KEY_HASH, spec.str("orderKey"))
                        : producer.send(msg);
                    results.add(result(result));
                }
                return results;
            case "async":
                return sendAsync(producer, specs, args.number("timeoutMs", 30_000));
            case "oneway":
                for (Args spec : specs) {
                    Message msg = Messages.of(spec);
                    if (spec.has("orderKey")) {
                        producer.sendOneway(msg, BY_KEY_HASH, spec.str("orderKey"));
                    } else {
                        producer.sendOneway(msg);
                    }
                }
                return results;
            case "batch":
                List<Message> batch = new ArrayList<>();
                for (Args spec : specs) {
                    batch.add(Messages.of(spec));
                }
                results.add(result(producer.send(batch)));
                return results;
            default:
                throw new IllegalArgumentException("unknown send mode " + mode);
        }
    }

    private static Object sendAsync(DefaultMQProducer producer, List<Args> specs, long timeoutMs) throws Exception {
        CountDownLatch done = new CountDownLatch(specs.size());
        Object[] results = new Object[specs.size()];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < specs.size(); i++) {
            final int index = i;
            SendCallback callback = new SendCallback() {
                @Override
                public void onSuccess(SendResult sendResult) {
                    results[index] = result(sendResult);
                    done.countDown();
                }

                @Override
                public void onException(Throwable e) {
                    failure.compareAndSet(null, e);
                    done.countDown();
                }
            };
            Args spec = specs.get(i);
            if (spec.has("orderKey")) {
                producer.send(Messages.of(spec), BY_KEY_HASH, spec.str("orderKey"), callback);
            } else {
                producer.send(Messages.of(spec), callback);
            }
        }
        if (!done.await(timeoutMs, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("async sends not all answered within " + timeoutMs + " ms");
        }
        if (failure.get() instanceof Exception) {
            throw (Exception) failure.get();
        } else if (failure.get() != null) {
            throw new RuntimeException(failure.get());
        }
        return results;
    }

    static Map<String, Object> result(SendResult result) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", String.valueOf(result.getSendStatus()));
        out.put("msgId", result.getMsgId());
        out.put("offsetMsgId", result.getOffsetMsgId());
        out.put("queue", Messages.queue(result.getMessageQueue()));
        out.put("queueOffset", result.getQueueOffset());
        return out;
    }
}
