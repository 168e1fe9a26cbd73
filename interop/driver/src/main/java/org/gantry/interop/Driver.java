package org.gantry.interop;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.common.MQVersion;

/**
 * A JSON-lines command server around Apache RocketMQ's Java client, driven by the interop suite
 * (tests/interop). Each line on stdin is one command {"id": n, "op": "...", ...}; each answer is one
 * line on stdout {"id": n, "ok": true, "result": ...} or {"id": n, "ok": false, "error": "...",
 * "type": "..."}. The client's own logging goes to stderr, never to stdout.
 *
 * <p>Clients are named by the test ("name") and live until "shutdown" or "exit": producers
 * (Producers), push consumers (PushConsumers) and lite pull consumers (LitePullConsumers). The same
 * source compiles against the 4.9 and the 5.x client: it uses only API both have.
 */
public final class Driver {
    private static final Gson GSON = new Gson();

    private Driver() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);  // anything the client prints stays off the answer stream
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
                answer.addProperty("ok", false);
                answer.addProperty("type", e.getClass().getName());
                answer.addProperty("error", describe(e));
            }
            out.println(GSON.toJson(answer));
            if ("exit".equals(command.get("op").getAsString())) {
                break;
            }
        }
        System.exit(0);
    }

    /** The exception's message, then each cause's type and message: the client wraps the broker's refusal. */
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
                return MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION);
            case "exit":
                Clients.shutdownAll();
                return "bye";
            case "producer_start":
                return Producers.start(args);
            case "send":
                return Producers.send(args);
            case "push_start":
                return PushConsumers.start(args);
            case "received":
                return PushConsumers.received(args);
            case "queues":
                return PushConsumers.queues(args);
            case "lite_start":
                return LitePullConsumers.start(args);
            case "poll":
                return LitePullConsumers.poll(args);
            case "commit":
                return LitePullConsumers.commit(args);
            case "shutdown":
                return Clients.shutdown(args);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }
}
