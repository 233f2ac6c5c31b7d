#!/bin/bash
# Regenerates the RTM_NEWLINK fixtures in this directory: the exact request iproute2 sends for
# `ip link add` of each link kind, captured with strace (the kernel may reject the request, e.g. a
# kind whose driver this kernel lacks, but the request has been sent by then).
#
# Each fixture NAME.hex holds one line: the command, then the message bytes in hex (nlmsghdr
# included). NewLinkFixturesTest encodes the same link with io.jcni.linux.NewLink and compares
# byte for byte, ignoring only nlmsg_seq (bytes 8..11) and nlmsg_pid (12..15).
#
# Run as root: linux/src/test/resources/iproute2/capture.sh   (needs strace and iproute2)
set -euo pipefail
cd "$(dirname "$0")"
command -v strace >/dev/null || { echo "needs strace (apt-get install strace)" >&2; exit 1; }
ns=i11cap-$$
peer=i11cap2-$$
cleanup() { ip netns del "$ns" 2>/dev/null || true; ip netns del "$peer" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
ip netns add "$peer"
# p0 gets ifindex 3 in a fresh namespace (lo is 1, the veth peer p1, created first, is 2): the
# fixtures' IFLA_LINK.
ip -n "$ns" link add p0 type veth peer name p1
[ "$(ip -n "$ns" -o link show p0 | cut -d: -f1)" = 3 ] || { echo "p0 is not ifindex 3" >&2; exit 1; }
# br0, ifindex 4: the bridge a bridge plugin's host veth joins at birth.
ip -n "$ns" link add br0 type bridge
[ "$(ip -n "$ns" -o link show br0 | cut -d: -f1)" = 4 ] || { echo "br0 is not ifindex 4" >&2; exit 1; }
# flannel.1, ifindex 5: the device of the nexthop fixtures (the end of this script).
ip -n "$ns" link add flannel.1 type vxlan id 1 local 192.168.77.2 dstport 8472 nolearning
ip -n "$ns" link set flannel.1 up
[ "$(ip -n "$ns" -o link show flannel.1 | cut -d: -f1)" = 5 ] || { echo "flannel.1 is not ifindex 5" >&2; exit 1; }

capture() { # NAME ARGS...
  local name=$1; shift
  local trace hex
  # ip exits non-zero when the kernel refuses; the request is in the trace all the same.
  trace=$(strace -f -s 65535 -xx -e trace=sendmsg ip -n "$ns" link add "$@" 2>&1 >/dev/null || true)
  hex=$(grep 'nlmsg_type=0x10 ' <<<"$trace" | head -1 \
    | sed -E 's/.*nlmsg_len=([0-9]+), nlmsg_type=0x10[^,]*, nlmsg_flags=[^,]*, nlmsg_seq=[0-9]+, nlmsg_pid=0\}, "([^"]*)".*/\1 \2/')
  local len=${hex%% *} body=${hex#* }
  # nlmsghdr as strace decoded it: len, type 16, flags REQUEST|ACK|EXCL|CREATE (0x605), seq 0, pid 0.
  printf '%s\t%s\n' "ip link add $*" \
    "$(printf '%08x' "$len" | sed -E 's/(..)(..)(..)(..)/\4\3\2\1/')100005060000000000000000$(sed 's/\\x//g' <<<"$body")" > "$name.hex"
  ip -n "$ns" link del x0 2>/dev/null || true
}

capture vlan x0 link p0 type vlan id 10
capture vlan-mtu x0 link p0 mtu 1400 type vlan id 4094
capture ipvlan-l2 x0 link p0 type ipvlan mode l2
capture ipvlan-l3 x0 link p0 type ipvlan mode l3
capture ipvlan-l3s x0 link p0 mtu 1400 type ipvlan mode l3s
capture dummy x0 type dummy
capture veth x0 mtu 1400 type veth peer name x1 mtu 1300
# The host end as bridge/ptp create it: up, born in a jcni birth group (0x6a0004d2: creator pid
# 1234), already a port of br0; the container end born in another namespace with its MAC.
capture veth-host-end x0 up mtu 1400 group 1778386130 master br0 type veth peer name x1 mtu 1400 address 02:00:00:00:00:01 netns "$peer"
capture macvlan-bridge x0 link p0 type macvlan mode bridge
capture macvlan-passthru x0 link p0 mtu 1400 address 02:00:00:00:00:01 type macvlan mode passthru
capture macvlan-private-netns x0 link p0 netns "$peer" type macvlan mode private

# Nexthop objects and routes through them (NexthopFixturesTest): any request, its nlmsghdr written
# from strace's length and type and the flags given (REQUEST|ACK plus CREATE|EXCL 0x605, CREATE|REPLACE
# 0x505, none 0x005), on flannel.1 (ifindex 5).
capture_msg() { # NAME FLAGS_HEX IP_ARGS...
  local name=$1 flags=$2; shift 2
  local trace line len type body
  trace=$(strace -f -s 65535 -xx -e trace=sendmsg ip -n "$ns" "$@" 2>&1 >/dev/null || true)
  # The last request: `ip` may first look a device name up (RTM_GETLINK).
  line=$(grep 'nlmsg_flags=NLM_F_REQUEST|NLM_F_ACK' <<<"$trace" | tail -1)
  len=$(sed -E 's/.*nlmsg_len=([0-9]+),.*/\1/' <<<"$line")
  type=$(sed -E 's/.*nlmsg_type=0x([0-9a-f]+).*/\1/' <<<"$line")
  body=$(sed -E 's/.*nlmsg_pid=0\}, "([^"]*)".*/\1/' <<<"$line")
  printf '%s\t%s\n' "ip $*" "$(printf '%08x' "$len" | sed -E 's/(..)(..)(..)(..)/\4\3\2\1/')$(printf '%04x' "$((16#$type))" | sed -E 's/(..)(..)/\2\1/')$(sed -E 's/(..)(..)/\2\1/' <<<"$flags")0000000000000000$(sed 's/\\x//g' <<<"$body")" > "$name.hex"
}
capture_msg nexthop-add 0605 nexthop add id 7 via 10.5.2.0 dev flannel.1 onlink proto 74
capture_msg nexthop-replace-v6 0505 nexthop replace id 2147483655 via fd00:10:5:2:: dev flannel.1 onlink proto 74
capture_msg nexthop-del 0005 nexthop del id 7
capture_msg route-nhid 0605 route add table 1000 10.5.2.0/24 nhid 7 proto 74
ip -n "$ns" nexthop del id 7 2>/dev/null || true
