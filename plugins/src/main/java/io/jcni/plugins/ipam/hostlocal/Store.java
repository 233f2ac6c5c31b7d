package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.Attachment;
import io.jcni.types.IpAddr;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where reservations live (upstream's {@code backend.Store}). Callers hold {@link #lock()} around
 * every read-modify-write sequence; the methods themselves do not lock.
 */
public interface Store extends Closeable {
    void lock() throws IOException;

    void unlock() throws IOException;

    /**
     * Claims {@code ip} for the attachment and remembers it as the last reservation of range set
     * {@code rangeId}. False, with nothing changed, when someone already holds the address.
     */
    boolean reserve(String containerId, String ifname, IpAddr ip, String rangeId) throws IOException;

    /** The address most recently reserved in range set {@code rangeId}, if known. */
    Optional<IpAddr> lastReservedIp(String rangeId) throws IOException;

    /**
     * The attachment's addresses, as far as can be told cheaply. This serves the duplicate-ADD
     * check, which must not cost a pass over every reservation. A store may miss reservations it
     * did not write itself (see {@link DiskStore}); {@link #findById} does not.
     */
    List<IpAddr> getById(String containerId, String ifname) throws IOException;

    /** All of the attachment's addresses, including ones written by other implementations. */
    List<IpAddr> findById(String containerId, String ifname) throws IOException;

    /**
     * Releases the attachment's addresses. Like upstream, reservations recorded with the
     * interface name are matched first; only when there are none are legacy reservations holding
     * just the container ID released.
     *
     * @return the released addresses
     */
    List<IpAddr> releaseById(String containerId, String ifname) throws IOException;

    /** Releases one address whoever holds it; false when it was not reserved. */
    boolean releaseByIp(IpAddr ip) throws IOException;

    /**
     * Releases every reservation not held by one of {@code valid} (CNI GC). A legacy reservation
     * holding only a container ID is kept when any valid attachment has that container ID.
     *
     * @return the released addresses
     */
    List<IpAddr> releaseAllExcept(Set<Attachment> valid) throws IOException;

    /** Every reserved address, from names alone (no reservation is read). */
    Set<IpAddr> reservedIps() throws IOException;
}
