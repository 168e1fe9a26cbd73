package org.gantry.interop;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * The clients a driver runs, by the name the test gave them, and what every client shares: the name
 * server address, an instance name, quick route and heartbeat periods, and the ACL hook when the test
 * passes an access key (Apache's AclClientRPCHook with SessionCredentials, the documented way to sign).
 */
final class Clients {
    private static final Map<String, Object> BY_NAME = new ConcurrentHashMap<>();

    private Clients() {
    }

    static void add(String name, Object client) {
        if (BY_NAME.putIfAbsent(name, client) != null) {
            throw new IllegalArgumentException("a client named " + name + " is running already");
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T get(String name, Class<T> type) {
        Object client = BY_NAME.get(name);
        if (client == null) {
            throw new IllegalArgumentException("no client named " + name);
        }
        if (!type.isInstance(client)) {
            throw new IllegalArgumentException(name + " is a " + client.getClass().getSimpleName() + ", not a " + type.getSimpleName());
        }
        return (T) client;
    }

    static Object shutdown(Args args) throws Exception {
        Object client = BY_NAME.remove(args.str("name"));
        if (client == null) {
            return false;
        }
        close(client);
        return true;
    }

    static void shutdownAll() {
        for (String name : BY_NAME.keySet()) {
            try {
                close(BY_NAME.remove(name));
            } catch (Exception e) {
                e.printStackTrace();
            }
        }
    }

    private static void close(Object client) throws Exception {
        if (client instanceof DefaultMQProducer) {
            ((DefaultMQProducer) client).shutdown();
        } else if (client instanceof AutoCloseable) {
            ((AutoCloseable) client).close();
        }
    }

    /** The ACL hook for {"accessKey": ..., "secretKey": ...}, or null when the command has no access key. */
    static RPCHook aclHook(Args args) {
        if (!args.has("accessKey")) {
            return null;
        }
        return new AclClientRPCHook(new SessionCredentials(args.str("accessKey"), args.str("secretKey")));
    }

    static void configure(ClientConfig config, Args args) {
        config.setNamesrvAddr(args.str("namesrv"));
        config.setInstanceName(args.str("instance", args.str("name")));
        config.setPollNameServerInterval(args.integer("pollNameServerIntervalMs", 1000));
        config.setHeartbeatBrokerInterval(args.integer("heartbeatIntervalMs", 1000));
        config.setPersistConsumerOffsetInterval(args.integer("persistOffsetIntervalMs", 1000));
    }
}
