package io.jcni.linux.nft;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.NetlinkSocket;
import io.jcni.linux.nft.NftBatch.Family;

/**
 * nf_tables over netlink (NETLINK_NETFILTER), in the namespace the socket was opened in: what
 * jcni does per attachment (set and map elements) without starting {@code nft}. Get one from
 * {@link Nft#tables()}, which opens it in the client's namespace.
 */
public final class NfTables implements AutoCloseable {
    private final NetlinkSocket nl;
    /** For a socket shared per namespace ({@link Nft#tables}): drops it from the cache; null for an owned one. */
    private final java.util.function.Consumer<NfTables> forget;

    NfTables(NetlinkSocket nl, java.util.function.Consumer<NfTables> forget) {
        this.nl = nl;
        this.forget = forget;
    }

    /**
     * Applies {@code batch} as one transaction (all or nothing) and reads every ACK.
     *
     * @throws NftException naming the first change the kernel refused and why (ENOENT: the table,
     *         set or element is not there; EEXIST, or EBUSY before Linux 6.x: a map key holds another value; EPERM: needs
     *         CAP_NET_ADMIN in the namespace)
     */
    public void apply(NftBatch batch) {
        if (batch.isEmpty()) return;
        try {
            nl.batch(NftBatch.NFNL_SUBSYS_NFTABLES, batch.messages(), batch.operations());
        } catch (ErrnoException e) {
            broken(e);
            throw new NftException(e);
        }
    }

    /** Whether the element with {@code key} is in {@code set} ({@code nft get element}, without nft). */
    public boolean hasElement(Family family, String table, String set, byte[] key) {
        try {
            nl.request(NftBatch.getElement(family, table, set, key), "get element " + family.nftName() + " " + table + " " + set);
            return true;
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return false;
            broken(e);
            throw new NftException(e);
        }
    }

    /**
     * Whether {@code chain} of {@code table} exists: one request and its answer, the chain alone
     * (the kernel does not load the table's rules for it, unlike {@code nft list}).
     */
    public boolean hasChain(Family family, String table, String chain) {
        try {
            nl.request(NftBatch.getChain(family, table, chain), "get chain " + family.nftName() + " " + table + " " + chain);
            return true;
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return false;
            broken(e);
            throw new NftException(e);
        }
    }

    /** How many rules {@code chain} of {@code table} holds; 0 when the table or chain is not there. */
    public int ruleCount(Family family, String table, String chain) {
        try {
            return nl.dump(NftBatch.getRules(family, table, chain), "list chain " + family.nftName() + " " + table + " " + chain).size();
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return 0;
            broken(e);
            throw new NftException(e);
        }
    }

    /**
     * A failure of the exchange itself (no answer in time, a malformed one): a later request could
     * meet the lost answers, so a shared socket is replaced. A kernel's refusal keeps it.
     */
    private void broken(ErrnoException e) {
        if (forget == null || !(e.is(Errno.EAGAIN) || e.is(Errno.EIO) || e.is(Errno.EINTR) || e.is(Errno.ENOBUFS))) return;
        forget.accept(this);
        nl.close();
    }

    /**
     * Closes a socket of its own, off this thread (the close waits for the kernel, see
     * {@link Nft#tables()}; every change was acknowledged before); a shared one stays open.
     */
    @Override
    public void close() {
        if (forget == null) Nft.closeLater(nl);
    }
}
