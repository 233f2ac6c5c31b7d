package io.jcni.linux;

/** rtnetlink message types, header sizes and attribute numbers (linux/rtnetlink.h and friends). */
final class Rtm {
    private Rtm() {}

    static final int RTM_NEWLINK = 16;
    static final int RTM_DELLINK = 17;
    static final int RTM_GETLINK = 18;
    static final int RTM_SETLINK = 19;
    static final int RTM_NEWADDR = 20;
    static final int RTM_DELADDR = 21;
    static final int RTM_GETADDR = 22;
    static final int RTM_NEWROUTE = 24;
    static final int RTM_DELROUTE = 25;
    static final int RTM_GETROUTE = 26;
    static final int RTM_NEWNEIGH = 28;
    static final int RTM_DELNEIGH = 29;
    static final int RTM_GETNEIGH = 30;
    static final int RTM_NEWRULE = 32;
    static final int RTM_DELRULE = 33;
    static final int RTM_GETRULE = 34;
    static final int RTM_NEWQDISC = 36;
    static final int RTM_DELQDISC = 37;
    static final int RTM_GETQDISC = 38;
    static final int RTM_NEWTFILTER = 44;
    static final int RTM_DELTFILTER = 45;
    static final int RTM_GETTFILTER = 46;
    static final int RTM_NEWNEXTHOP = 104;
    static final int RTM_DELNEXTHOP = 105;
    static final int RTM_GETNEXTHOP = 106;

    static final int IFINFOMSG_SIZE = 16;
    static final int IFADDRMSG_SIZE = 8;
    static final int RTMSG_SIZE = 12;
    static final int NDMSG_SIZE = 12;
    static final int FIB_RULE_HDR_SIZE = 12;
    static final int TCMSG_SIZE = 20;
    static final int NHMSG_SIZE = 8;

    static final int IFLA_ADDRESS = 1;
    static final int IFLA_IFNAME = 3;
    static final int IFLA_MTU = 4;
    static final int IFLA_LINK = 5;
    static final int IFLA_MASTER = 10;
    static final int IFLA_PROTINFO = 12;
    static final int IFLA_TXQLEN = 13;
    static final int IFLA_OPERSTATE = 16;
    static final int IFLA_LINKINFO = 18;
    static final int IFLA_IFALIAS = 20;
    static final int IFLA_NET_NS_FD = 28;
    static final int IFLA_AF_SPEC = 26;
    static final int IFLA_GROUP = 27;
    static final int IFLA_EXT_MASK = 29;
    static final int IFLA_LINK_NETNSID = 37;
    static final int RTEXT_FILTER_BRVLAN = 2;

    static final int IFLA_BR_VLAN_FILTERING = 7;
    static final int IFLA_BRIDGE_FLAGS = 0;
    static final int IFLA_BRIDGE_VLAN_INFO = 2;
    static final int BRIDGE_FLAGS_SELF = 2;
    static final int BRIDGE_VLAN_INFO_PVID = 2;
    static final int BRIDGE_VLAN_INFO_UNTAGGED = 4;

    static final int IFLA_INFO_KIND = 1;
    static final int IFLA_INFO_DATA = 2;
    static final int IFLA_INFO_SLAVE_KIND = 4;

    static final int VETH_INFO_PEER = 1;
    static final int IFLA_MACVLAN_MODE = 1;
    static final int IFLA_MACVLAN_BC_QUEUE_LEN = 7;
    static final int IFLA_IPVLAN_MODE = 1;
    static final int IFLA_IPVLAN_FLAGS = 2;
    static final int IFLA_VLAN_ID = 1;
    static final int IFLA_VXLAN_ID = 1;
    static final int IFLA_VXLAN_GROUP = 2;
    static final int IFLA_VXLAN_LINK = 3;
    static final int IFLA_VXLAN_LOCAL = 4;
    static final int IFLA_VXLAN_TTL = 5;
    static final int IFLA_VXLAN_LEARNING = 7;
    static final int IFLA_VXLAN_PROXY = 11;
    static final int IFLA_VXLAN_PORT = 15;
    static final int IFLA_VXLAN_GROUP6 = 16;
    static final int IFLA_VXLAN_LOCAL6 = 17;
    static final int IFLA_VXLAN_GBP = 23; // a flag: present = on

    static final int IFLA_BRPORT_STATE = 1;
    static final int IFLA_BRPORT_MODE = 4;
    static final int IFLA_BRPORT_LEARNING = 8;
    static final int IFLA_BRPORT_ISOLATED = 33;

    static final int IFA_ADDRESS = 1;
    static final int IFA_LOCAL = 2;
    static final int IFA_LABEL = 3;
    static final int IFA_BROADCAST = 4;
    static final int IFA_FLAGS = 8;

    static final int RTA_DST = 1;
    static final int RTA_SRC = 2;
    static final int RTA_OIF = 4;
    static final int RTA_GATEWAY = 5;
    static final int RTA_PRIORITY = 6;
    static final int RTA_PREFSRC = 7;
    static final int RTA_METRICS = 8;
    static final int RTA_TABLE = 15;
    static final int RTA_NH_ID = 30;
    static final int RTAX_MTU = 2;
    static final int RTAX_ADVMSS = 8;
    static final int RTM_F_CLONED = 0x200;

    static final int NHA_ID = 1;
    static final int NHA_BLACKHOLE = 4;
    static final int NHA_OIF = 5;
    static final int NHA_GATEWAY = 6;

    static final int NDA_DST = 1;
    static final int NDA_LLADDR = 2;
    static final int NDA_VNI = 7;
    static final int NDA_MASTER = 9;

    static final int FRA_DST = 1;
    static final int FRA_SRC = 2;
    static final int FRA_IIFNAME = 3;
    static final int FRA_PRIORITY = 6;
    static final int FRA_FWMARK = 10;
    static final int FRA_TABLE = 15;
    static final int FRA_OIFNAME = 17;
}
