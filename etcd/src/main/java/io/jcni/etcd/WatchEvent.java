package io.jcni.etcd;

import io.jcni.types.Json;
import java.util.Map;

/**
 * A change seen by a watch. For a delete, {@code kv} carries the key (its value is empty).
 *
 * @param revision the revision of the watch response that carried the event (resume after it)
 */
public record WatchEvent(boolean deleted, KeyValue kv, long revision) {
    static WatchEvent fromGateway(Map<String, Object> ev, long revision) {
        // proto3 JSON leaves out the zero value: no "type" means PUT.
        boolean deleted = "DELETE".equals(ev.get("type"));
        return new WatchEvent(deleted, KeyValue.fromGateway(Json.asObject(ev.get("kv"))), revision);
    }
}
