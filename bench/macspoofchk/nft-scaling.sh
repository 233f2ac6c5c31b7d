#!/bin/bash
# bench/macspoofchk/nft-scaling.sh [N]: the nft cost of one container's macspoofchk with N others
# present, in a scratch network namespace (deleted on exit), run as root.
#   jcni:      the ADD transaction ElementStore writes (skeleton + 2 owned elements) in table bridge jcni
#   reference: the read its DEL does first (nft -j list chain bridge nat PREROUTING) with the
#              reference 1.1.1 layout (2 chains + 4 rules per container in table bridge nat)
# Synthetic (nft alone, not the plugins); prints milliseconds. The shapes matter, not one figure:
# jcni's stays flat as N grows, the reference's read grows with N.
set -e
NS=jmscb-$$-$RANDOM; ip netns add $NS; trap "ip netns del $NS" EXIT
N=${1:-2000}
skel='add table bridge jcni
add set bridge jcni msc_ports { type ifname; }
add set bridge jcni msc_macs { type ifname . ether_addr; }
add chain bridge jcni msc { type filter hook prerouting priority -300; policy accept; }
flush chain bridge jcni msc
add rule bridge jcni msc iifname @msc_ports iifname . ether saddr != @msc_macs drop'
one() { # ADD transaction as ElementStore writes it, for veth $1
 printf '%s\n' "$skel"
 for s in "msc_ports { \"$1\"" "msc_macs { \"$1\" . 0a:58:00:00:00:01"; do
  set_=${s%% *}; k=${s#* \{ }
  echo "add element bridge jcni $set_ { $k }"; echo "delete element bridge jcni $set_ { $k }"; echo "add element bridge jcni $set_ { $k comment \"macspoofchk n c eth0\" }"
 done; }
t() { local s=$(date +%s%N); "$@" >/dev/null; echo $(( ($(date +%s%N)-s)/1000000 )); }
jadd() { one vethtest0000 | ip netns exec $NS nft -f -; }
echo "jcni ADD txn, 0 others: $(t jadd) ms"
{ printf '%s\n' "$skel"; for i in $(seq 1 $N); do printf 'add element bridge jcni msc_ports { "v%07d" }\nadd element bridge jcni msc_macs { "v%07d" . 0a:58:00:%02x:%02x:02 }\n' $i $i $((i/256%256)) $((i%256)); done; } | ip netns exec $NS nft -f -
echo "jcni ADD txn, $N others: $(t jadd) ms"
ip netns exec $NS nft 'add table bridge nat; add chain bridge nat PREROUTING { type filter hook prerouting priority -300; policy accept; }'
rlist0() { ip netns exec $NS nft -j list chain bridge nat PREROUTING; }
echo "reference DEL's read, 0 containers: $(t rlist0) ms"
# reference layout: per container two chains + jump rule in bridge nat PREROUTING
{ echo 'add table bridge nat'; echo 'add chain bridge nat PREROUTING { type filter hook prerouting priority -300; policy accept; }'
  for i in $(seq 1 $N); do printf 'add chain bridge nat cni-br-iface-c%d-eth0\nadd chain bridge nat cni-br-iface-c%d-eth0-mac\nadd rule bridge nat PREROUTING iifname "v%07d" jump cni-br-iface-c%d-eth0 comment "macspoofchk-c%d-eth0"\nadd rule bridge nat cni-br-iface-c%d-eth0 jump cni-br-iface-c%d-eth0-mac\nadd rule bridge nat cni-br-iface-c%d-eth0-mac ether saddr 0a:58:00:00:00:02 return\nadd rule bridge nat cni-br-iface-c%d-eth0-mac drop\n' $i $i $i $i $i $i $i $i $i; done; } | ip netns exec $NS nft -f -
rlist() { ip netns exec $NS nft -j list chain bridge nat PREROUTING; }
echo "reference DEL's read (nft -j list chain bridge nat PREROUTING), $N containers: $(t rlist) ms"
