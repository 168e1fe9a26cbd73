package org.gantry.interop.grpc;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.client.java.misc.MetadataUtils;

/**
 * A JSON-lines command server around Apache RocketMQ's gRPC Java client (rocketmq-client-java), driven by
 * the interop suite (tests/interop) the same way as interop/driver drives the remoting clients: each line
 * on stdin is one command {"id": n, "op": "...", ...}; each answer is one line on stdout
 * {"id": n, "ok": true, "result": ...} or {"id": n, "ok": false, "error": "...", "type": "..."}.
 *
 * <p>Clients are named by the test ("name") and live until "shutdown" or "exit": producers
 * (GrpcProducers), simple consumers (SimpleConsumers) and push consumers (GrpcPushConsumers). The
 * client's own logging goes to stderr and its log file, never to stdout.
 */
public final class GrpcDriver {
    private static final Gson GSON = new com.google.gson.GsonBuilder().serializeNulls().create();  // a message without a tag says "tag": null

    private GrpcDriver() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);  // the client's console appender stays off the answer stream
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject command = GSON.fromJson(line, JsonObject.class);
            JsonObject answer = new JsonObject();
            answer.add("id", command.get("id"));
            try {
                answer.add("result", GSON.toJsonTree(run(command)));
                answer.addProperty("ok", true);
            } catch (Throwable e) {
                Throwable shown = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
                answer.addProperty("ok", false);
                answer.addProperty("type", shown.getClass().getName());
                answer.addProperty("error", describe(shown));
            }
            out.println(GSON.toJson(answer));
            if ("exit".equals(command.get("op").getAsString())) {
                break;
            }
        }
        System.exit(0);
    }

    /** The exception's message (the client's carries the gRPC status or the response code), then each cause's. */
    private static String describe(Throwable e) {
        StringBuilder text = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            text.append(" | caused by ").append(cause.getClass().getName()).append(": ").append(cause.getMessage());
        }
        return text.toString();
    }

    private static Object run(JsonObject command) throws Exception {
        String op = command.get("op").getAsString();
        Args args = new Args(command);
        switch (op) {
            case "version":
                return MetadataUtils.getVersion();
            case "exit":
                GrpcClients.shutdownAll();
                return "bye";
            case "producer_start":
                return GrpcProducers.start(args);
            case "send":
                return GrpcProducers.send(args);
            case "simple_start":
                return SimpleConsumers.start(args);
            case "simple_receive":
                return SimpleConsumers.receive(args);
            case "simple_ack":
                return SimpleConsumers.ack(args);
            case "simple_change_invisible":
                return SimpleConsumers.changeInvisible(args);
            case "push_start":
                return GrpcPushConsumers.start(args);
            case "received":
                return GrpcPushConsumers.received(args);
            case "shutdown":
                return GrpcClients.shutdown(args);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }
}
