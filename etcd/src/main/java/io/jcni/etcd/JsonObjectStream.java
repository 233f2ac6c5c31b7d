package io.jcni.etcd;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Splits a stream of concatenated JSON objects (how the gateway streams watch responses, one per
 * chunk, with or without newlines between them) into one text per object, by brace depth outside strings.
 */
final class JsonObjectStream {
    private static final int MAX_OBJECT = EtcdClient.MAX_ANSWER;
    private final InputStream in;

    JsonObjectStream(InputStream in) {
        this.in = in;
    }

    /** The next object's text, or null at the end of the stream. */
    String next() throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(512);
        int depth = 0;
        boolean inString = false, escaped = false;
        int c;
        while ((c = in.read()) >= 0) {
            if (depth == 0 && c != '{') continue; // whitespace between objects
            buf.write(c);
            if (buf.size() > MAX_OBJECT) throw new IOException("watch message over " + MAX_OBJECT + " bytes");
            if (inString) {
                if (escaped) escaped = false;
                else if (c == '\\') escaped = true;
                else if (c == '"') inString = false;
            } else if (c == '"') {
                inString = true;
            } else if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return buf.toString(StandardCharsets.UTF_8);
            }
        }
        return null;
    }
}
