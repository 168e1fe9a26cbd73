package org.gantry.interop.grpc;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientConfigurationBuilder;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.StaticSessionCredentialsProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;

/**
 * The gRPC clients a driver runs, by the name the test gave them, and what every client shares: the
 * ClientConfiguration (endpoints "host:port[;host:port]", TLS on or off, a request timeout, and the
 * access key and secret through StaticSessionCredentialsProvider when the command names an access key,
 * the client's documented way to sign) and the subscription's filter expression.
 */
final class GrpcClients {
    static final ClientServiceProvider PROVIDER = ClientServiceProvider.loadService();
    private static final Map<String, AutoCloseable> BY_NAME = new ConcurrentHashMap<>();

    private GrpcClients() {
    }

    static void add(String name, AutoCloseable client) throws Exception {
        if (BY_NAME.putIfAbsent(name, client) != null) {
            client.close();
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

    /**
     * shutdown {name, background? (default false)} -> whether such a client ran. A push consumer's close waits
     * for its receive long poll to end (up to the endpoint's long-polling timeout): "background" closes it
     * on a thread of its own and answers at once, which a test's teardown uses.
     */
    static Object shutdown(Args args) throws Exception {
        AutoCloseable client = BY_NAME.remove(args.str("name"));
        if (client == null) {
            return false;
        }
        if (args.bool("background", false)) {
            Thread closing = new Thread(() -> {
                try {
                    client.close();
                } catch (Exception e) {
                    e.printStackTrace();
                }
            }, "close-" + args.str("name"));
            closing.setDaemon(true);
            closing.start();
        } else {
            client.close();
        }
        return true;
    }

    static void shutdownAll() {
        for (String name : BY_NAME.keySet()) {
            try {
                BY_NAME.remove(name).close();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }
    }

    /** {endpoints, tls? (default false), accessKey?, secretKey?, requestTimeoutMs? (default 5000), namespace?}. */
    static ClientConfiguration configuration(Args args) {
        ClientConfigurationBuilder builder = ClientConfiguration.newBuilder()
            .setEndpoints(args.str("endpoints"))
            .enableSsl(args.bool("tls", false))
            .setRequestTimeout(Duration.ofMillis(args.number("requestTimeoutMs", 5000)));
        if (args.has("accessKey")) {
            builder.setCredentialProvider(new StaticSessionCredentialsProvider(args.str("accessKey"), args.str("secretKey")));
        }
        if (args.has("namespace")) {
            builder.setNamespace(args.str("namespace"));
        }
        return builder.build();
    }

    /** {topic, filter? (a tag expression, default *), sql? (an SQL92 expression instead)} as the client's map. */
    static Map<String, FilterExpression> subscription(Args args) {
        FilterExpression filter = args.has("sql")
            ? new FilterExpression(args.str("sql"), FilterExpressionType.SQL92)
            : new FilterExpression(args.str("filter", "*"), FilterExpressionType.TAG);
        return Map.of(args.str("topic"), filter);
    }
}
