package io.jcni.etcd;

import java.util.Map;

/** One etcd key as read: its value, the lease it is attached to (0: none) and its revisions. */
public record KeyValue(String key, String value, long lease, long createRevision, long modRevision) {
    static KeyValue fromGateway(Map<String, Object> kv) {
        return new KeyValue(GatewayCodec.unb64(kv.get("key")), GatewayCodec.unb64(kv.get("value")), GatewayCodec.num(kv.get("lease")),
                GatewayCodec.num(kv.get("create_revision")), GatewayCodec.num(kv.get("mod_revision")));
    }
}
