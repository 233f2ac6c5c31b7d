package io.jcni.linux.nft;

import io.jcni.linux.NetlinkSocket;
import io.jcni.linux.NlMessage;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One nf_tables transaction of set and map element changes, as netlink messages: what
 * {@code nft -f} sends for {@code add element} / {@code delete element} lines, built without
 * nft. Pure: no socket; {@link NfTables#apply} sends it.
 *
 * <p>Keys and values are given as the kernel stores them: a concatenation's fields each padded to
 * 4 bytes ({@code inet_proto . inet_service} is {@code 06 00 00 00 1f 90 00 00}), addresses and
 * ports in network byte order, interface names NUL-padded to 16 bytes. The element's comment
 * travels in its user data as nft writes it (a TLV of type 0, NUL-terminated), so
 * {@code nft list} shows it.
 */
public final class NftBatch {
    /** nfnetlink subsystem id of nf_tables. */
    public static final int NFNL_SUBSYS_NFTABLES = 10;
    static final int NFT_MSG_GETCHAIN = 4;
    static final int NFTA_CHAIN_TABLE = 1;
    static final int NFTA_CHAIN_NAME = 3;
    static final int NFT_MSG_GETRULE = 7;
    static final int NFTA_RULE_TABLE = 1;
    static final int NFTA_RULE_CHAIN = 2;
    static final int NFT_MSG_NEWSETELEM = 12;
    static final int NFT_MSG_GETSETELEM = 13;
    static final int NFT_MSG_DELSETELEM = 14;

    static final int NFTA_SET_ELEM_LIST_TABLE = 1;
    static final int NFTA_SET_ELEM_LIST_SET = 2;
    static final int NFTA_SET_ELEM_LIST_ELEMENTS = 3;
    static final int NFTA_LIST_ELEM = 1;
    static final int NFTA_SET_ELEM_KEY = 1;
    static final int NFTA_SET_ELEM_DATA = 2;
    static final int NFTA_SET_ELEM_USERDATA = 6;
    static final int NFTA_DATA_VALUE = 1;
    /** libnftnl's NFTNL_UDATA_SET_ELEM_COMMENT: the user-data TLV nft reads an element's comment from. */
    static final int UDATA_SET_ELEM_COMMENT = 0;
    /** nft's limit for a comment (NFT_USERDATA_MAXLEN is 256 for the whole user data). */
    static final int MAX_COMMENT = 128;

    /** The address families of nf_tables tables jcni uses (NFPROTO_*). */
    public enum Family {
        INET(1, "inet"), IPV4(2, "ip"), BRIDGE(7, "bridge"), IPV6(10, "ip6");

        final int nfproto;
        final String nftName;

        Family(int nfproto, String nftName) {
            this.nfproto = nfproto;
            this.nftName = nftName;
        }

        /** The family as nft writes it ({@code inet}, {@code bridge}...). */
        public static Family of(String nftName) {
            for (Family f : values()) if (f.nftName.equals(nftName)) return f;
            throw new IllegalArgumentException("unknown nftables family: " + nftName);
        }

        public String nftName() {
            return nftName;
        }
    }

    private final List<NlMessage> messages = new ArrayList<>();
    private final List<String> operations = new ArrayList<>();

    /**
     * {@code add element}: creates the element, and is no error when it exists with the same value
     * (a map key holding another value fails the transaction: EEXIST, EBUSY on older kernels, as with nft).
     *
     * @param data the map value, or null for a set
     * @param comment shown by {@code nft list}, or null
     * @param what the element as nft would write it, for error messages
     */
    public NftBatch addElement(Family family, String table, String set, byte[] key, byte[] data, String comment, String what) {
        NlMessage m = header(NFT_MSG_NEWSETELEM, NetlinkSocket.NLM_F_CREATE, family, table, set);
        int list = m.nest(NFTA_SET_ELEM_LIST_ELEMENTS | NlMessage.NLA_F_NESTED);
        int el = m.nest(NFTA_LIST_ELEM | NlMessage.NLA_F_NESTED);
        value(m, NFTA_SET_ELEM_KEY, key);
        if (data != null) value(m, NFTA_SET_ELEM_DATA, data);
        if (comment != null) m.attr(NFTA_SET_ELEM_USERDATA, commentUserData(comment));
        m.end(el);
        m.end(list);
        return add(m, "add element " + family.nftName + " " + table + " " + set + " { " + what + " }");
    }

    /** {@code delete element}: fails the transaction with ENOENT when the element is not there. */
    public NftBatch deleteElement(Family family, String table, String set, byte[] key, String what) {
        NlMessage m = header(NFT_MSG_DELSETELEM, 0, family, table, set);
        int list = m.nest(NFTA_SET_ELEM_LIST_ELEMENTS | NlMessage.NLA_F_NESTED);
        int el = m.nest(NFTA_LIST_ELEM | NlMessage.NLA_F_NESTED);
        value(m, NFTA_SET_ELEM_KEY, key);
        m.end(el);
        m.end(list);
        return add(m, "delete element " + family.nftName + " " + table + " " + set + " { " + what + " }");
    }

    /** A request for one element ({@code get element}): answered with the element, or ENOENT. */
    static NlMessage getElement(Family family, String table, String set, byte[] key) {
        NlMessage m = header(NFT_MSG_GETSETELEM, 0, family, table, set);
        int list = m.nest(NFTA_SET_ELEM_LIST_ELEMENTS | NlMessage.NLA_F_NESTED);
        int el = m.nest(NFTA_LIST_ELEM | NlMessage.NLA_F_NESTED);
        value(m, NFTA_SET_ELEM_KEY, key);
        m.end(el);
        m.end(list);
        return m;
    }

    /** A dump request for the rules of one chain ({@code nft list chain}); the kernel filters by table and chain. */
    static NlMessage getRules(Family family, String table, String chain) {
        NlMessage m = new NlMessage((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETRULE, 0);
        m.u8(family.nfproto).u8(0).u16(0);
        m.attrString(NFTA_RULE_TABLE, table);
        m.attrString(NFTA_RULE_CHAIN, chain);
        return m;
    }

    /** A request for one chain ({@code nft list chain} without its rules); ENOENT when the table or chain is not there. */
    static NlMessage getChain(Family family, String table, String chain) {
        NlMessage m = new NlMessage((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETCHAIN, 0);
        m.u8(family.nfproto).u8(0).u16(0);
        m.attrString(NFTA_CHAIN_TABLE, table);
        m.attrString(NFTA_CHAIN_NAME, chain);
        return m;
    }

    public boolean isEmpty() {
        return messages.isEmpty();
    }

    public int size() {
        return messages.size();
    }

    List<NlMessage> messages() {
        return messages;
    }

    /** What each message does, in nft's words, for errors and logs. */
    public List<String> operations() {
        return List.copyOf(operations);
    }

    /**
     * The messages as one byte string (sequence numbers from {@code firstSeq}, port id 0, flags
     * as sent without acknowledgement requests), without the batch markers: what {@code strace}
     * shows nft sending between BATCH_BEGIN and BATCH_END. For tests.
     */
    public byte[] encode(int firstSeq) {
        ByteBuffer all = ByteBuffer.allocate(messages.stream().mapToInt(m -> (m.length() + 3) & ~3).sum()).order(ByteOrder.nativeOrder());
        int seq = firstSeq;
        for (NlMessage m : messages) {
            ByteBuffer b = m.finish(seq++, 0);
            b.putShort(6, (short) (m.flags() | NetlinkSocket.NLM_F_REQUEST));
            all.put(b);
            while ((all.position() & 3) != 0) all.put((byte) 0);
        }
        return all.array();
    }

    private NftBatch add(NlMessage m, String operation) {
        messages.add(m);
        operations.add(operation);
        return this;
    }

    private static NlMessage header(int msg, int flags, Family family, String table, String set) {
        Objects.requireNonNull(table);
        Objects.requireNonNull(set);
        NlMessage m = new NlMessage((NFNL_SUBSYS_NFTABLES << 8) | msg, flags);
        m.u8(family.nfproto).u8(0).u16(0); // struct nfgenmsg: family, NFNETLINK_V0, res_id 0
        m.attrString(NFTA_SET_ELEM_LIST_TABLE, table);
        m.attrString(NFTA_SET_ELEM_LIST_SET, set);
        return m;
    }

    private static void value(NlMessage m, int attr, byte[] v) {
        if (v == null || v.length == 0 || v.length > 64) throw new IllegalArgumentException("element key or value of " + (v == null ? 0 : v.length) + " bytes");
        int n = m.nest(attr | NlMessage.NLA_F_NESTED);
        m.attr(NFTA_DATA_VALUE, v);
        m.end(n);
    }

    /** The comment as nft stores it: type, length, the text with its NUL. */
    static byte[] commentUserData(String comment) {
        byte[] text = comment.getBytes(StandardCharsets.UTF_8);
        if (text.length >= MAX_COMMENT) throw new IllegalArgumentException("comment longer than " + (MAX_COMMENT - 1) + " bytes");
        byte[] out = new byte[text.length + 3];
        out[0] = UDATA_SET_ELEM_COMMENT;
        out[1] = (byte) (text.length + 1);
        System.arraycopy(text, 0, out, 2, text.length);
        return out;
    }

    @Override
    public String toString() {
        return String.join("\n", operations) + (operations.isEmpty() ? "" : "\n");
    }
}
