package org.gantry.interop.grpc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What one consumer received, in arrival order; a test waits on it for a count with a deadline. */
final class Received {
    private final List<Map<String, Object>> messages = new ArrayList<>();

    synchronized void add(Map<String, Object> message) {
        messages.add(message);
        notifyAll();
    }

    /** Every message received so far, once at least ``count`` arrived or ``timeoutMs`` passed. */
    synchronized List<Map<String, Object>> await(int count, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (messages.size() < count) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                break;
            }
            wait(left);
        }
        return new ArrayList<>(messages);
    }
}
