package org.gantry.interop.grpc;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Typed reads of one command's JSON arguments, with defaults for the optional ones. */
final class Args {
    private final JsonObject json;

    Args(JsonObject json) {
        this.json = json;
    }

    boolean has(String key) {
        return json.has(key) && !json.get(key).isJsonNull();
    }

    String str(String key) {
        if (!has(key)) {
            throw new IllegalArgumentException("missing argument " + key);
        }
        return json.get(key).getAsString();
    }

    String str(String key, String otherwise) {
        return has(key) ? json.get(key).getAsString() : otherwise;
    }

    int integer(String key, int otherwise) {
        return has(key) ? json.get(key).getAsInt() : otherwise;
    }

    long number(String key, long otherwise) {
        return has(key) ? json.get(key).getAsLong() : otherwise;
    }

    boolean bool(String key, boolean otherwise) {
        return has(key) ? json.get(key).getAsBoolean() : otherwise;
    }

    List<Args> list(String key) {
        List<Args> out = new ArrayList<>();
        if (has(key)) {
            for (JsonElement item : json.getAsJsonArray(key)) {
                out.add(new Args(item.getAsJsonObject()));
            }
        }
        return out;
    }

    List<String> strings(String key) {
        List<String> out = new ArrayList<>();
        if (has(key)) {
            JsonArray array = json.getAsJsonArray(key);
            for (JsonElement item : array) {
                out.add(item.getAsString());
            }
        }
        return out;
    }

    Map<String, String> map(String key) {
        Map<String, String> out = new LinkedHashMap<>();
        if (has(key)) {
            for (Map.Entry<String, JsonElement> entry : json.getAsJsonObject(key).entrySet()) {
                out.put(entry.getKey(), entry.getValue().getAsString());
            }
        }
        return out;
    }
}
