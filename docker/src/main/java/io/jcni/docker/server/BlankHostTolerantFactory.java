package io.jcni.docker.server;

import org.eclipse.jetty.http.HostPortHttpField;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * Jetty's HTTP/1.1 connection, except that an empty {@code Host:} header is read as
 * {@code Host: localhost}.
 *
 * <p>Why: dockerd's plugin client (Go's net/http over a unix socket) sends {@code Host: } with
 * nothing after it, and Jetty 12 answers that with "400 Blank Host" before any handler runs; no
 * compliance mode turns the check off. A request on a unix socket has no host to speak of, so
 * naming one changes nothing else. This touches one protected hook of Jetty's connection class
 * (org.eclipse.jetty.server.internal); PluginSocketServerTest sends dockerd's exact request bytes,
 * so a Jetty upgrade that moves the hook fails the build rather than the driver.
 */
final class BlankHostTolerantFactory extends HttpConnectionFactory {
    private static final HttpField LOCALHOST = new HostPortHttpField("localhost");

    BlankHostTolerantFactory(HttpConfiguration config) {
        super(config);
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        HttpConnection c = new HttpConnection(getHttpConfiguration(), connector, endPoint) {
            @Override
            protected RequestHandler newRequestHandler() {
                return new RequestHandler() {
                    @Override
                    public void parsedHeader(HttpField field) {
                        boolean blankHost = field.getHeader() == HttpHeader.HOST && (field.getValue() == null || field.getValue().isBlank());
                        super.parsedHeader(blankHost ? LOCALHOST : field);
                    }
                };
            }
        };
        c.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
        return configure(c, connector, endPoint);
    }
}
