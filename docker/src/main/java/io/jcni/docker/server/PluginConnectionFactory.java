package io.jcni.docker.server;

import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HostPortHttpField;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Jetty's HTTP/1.1 connection with two changes for the plugin socket.
 *
 * <p><b>An empty {@code Host:} header is read as {@code Host: localhost}.</b> dockerd's plugin
 * client (Go's net/http over a unix socket) sends {@code Host: } with nothing after it, and Jetty 12
 * answers that with "400 Blank Host" before any handler runs; no compliance mode turns the check
 * off. A request on a unix socket has no host to speak of, so naming one changes nothing else.
 *
 * <p><b>A request must arrive whole within a deadline.</b> From the first bytes of a request to
 * the last byte of its body the client has {@code readDeadlineMillis}; then the connection is
 * closed. Jetty's idle timeout alone would let a client that sends one byte every few seconds hold
 * a connection forever. (The body is read without holding a thread while waiting: see
 * {@link PluginSocketServer}.) dockerd writes a request at once, so it never meets the deadline.
 *
 * <p>Both touch protected hooks of Jetty's connection class (org.eclipse.jetty.server.internal);
 * PluginSocketServerTest sends dockerd's exact request bytes and trickling clients, so a Jetty
 * upgrade that moves a hook fails the build rather than the driver.
 */
final class PluginConnectionFactory extends HttpConnectionFactory {
    private static final HttpField LOCALHOST = new HostPortHttpField("localhost");
    private final long readDeadlineMillis;

    PluginConnectionFactory(HttpConfiguration config, long readDeadlineMillis) {
        super(config);
        this.readDeadlineMillis = readDeadlineMillis;
    }

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        PluginConnection c = new PluginConnection(getHttpConfiguration(), connector, endPoint, connector.getScheduler(), readDeadlineMillis);
        c.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
        return configure(c, connector, endPoint);
    }

    /** One connection: its request-read deadline, armed when a request's bytes start to arrive. */
    static final class PluginConnection extends HttpConnection {
        private final Scheduler scheduler;
        private final long deadlineMillis;
        private Scheduler.Task deadline; // guarded by this; null while no request is being read
        private boolean handling; // guarded by this; the request is read and being answered

        PluginConnection(HttpConfiguration config, Connector connector, EndPoint endPoint, Scheduler scheduler, long deadlineMillis) {
            super(config, connector, endPoint);
            this.scheduler = scheduler;
            this.deadlineMillis = deadlineMillis;
        }

        @Override
        public void onFillable() {
            arm(); // bytes (or the end) arrived: a request is under way unless one is being answered
            super.onFillable();
        }

        private synchronized void arm() {
            if (deadline == null && !handling) deadline = scheduler.schedule(this::expire, deadlineMillis, TimeUnit.MILLISECONDS);
        }

        /** The request has arrived whole: answering it may take as long as its CNI operation takes. */
        synchronized void requestRead() {
            handling = true;
            if (deadline != null) deadline.cancel();
            deadline = null;
        }

        /** The answer is written: the next request's bytes arm the deadline again. */
        synchronized void answered() {
            handling = false;
        }

        private void expire() {
            synchronized (this) {
                if (handling || deadline == null) return;
                deadline = null;
            }
            getEndPoint().close();
        }

        @Override
        public void onClose(Throwable cause) {
            synchronized (this) {
                if (deadline != null) deadline.cancel();
                deadline = null;
            }
            super.onClose(cause);
        }

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
    }
}
