package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.Attachment;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** An in-memory {@link Store} with the disk store's matching rules (upstream's fake_store.go). */
final class FakeStore implements Store {
    final Map<IpAddr, String> reservations = new LinkedHashMap<>();
    final Map<String, IpAddr> lastReserved = new HashMap<>();
    int reserveCalls;
    int listings;

    FakeStore reserved(String ip, String content) {
        reservations.put(IpAddr.parse(ip), content);
        return this;
    }

    FakeStore last(String rangeId, String ip) {
        lastReserved.put(rangeId, IpAddr.parse(ip));
        return this;
    }

    @Override
    public void lock() {}

    @Override
    public void unlock() {}

    @Override
    public void close() {}

    @Override
    public boolean reserve(String id, String ifname, IpAddr ip, String rangeId) {
        reserveCalls++;
        if (reservations.containsKey(ip)) return false;
        reservations.put(ip, ReservationFormat.content(id, ifname));
        lastReserved.put(rangeId, ip);
        return true;
    }

    @Override
    public Optional<IpAddr> lastReservedIp(String rangeId) {
        return Optional.ofNullable(lastReserved.get(rangeId));
    }

    @Override
    public List<IpAddr> getById(String id, String ifname) {
        return findById(id, ifname);
    }

    @Override
    public List<IpAddr> findById(String id, String ifname) {
        List<IpAddr> out = new ArrayList<>();
        reservations.forEach((ip, c) -> {
            if (c.equals(ReservationFormat.content(id, ifname)) || c.equals(ReservationFormat.legacyContent(id))) {
                out.add(ip);
            }
        });
        return out;
    }

    @Override
    public List<IpAddr> releaseById(String id, String ifname) {
        List<IpAddr> ips = findById(id, ifname);
        ips.forEach(reservations::remove);
        return ips;
    }

    @Override
    public boolean releaseByIp(IpAddr ip) {
        return reservations.remove(ip) != null;
    }

    @Override
    public List<IpAddr> releaseAllExcept(Set<Attachment> valid) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Set<IpAddr> reservedIps() {
        listings++;
        return new LinkedHashSet<>(reservations.keySet());
    }
}
