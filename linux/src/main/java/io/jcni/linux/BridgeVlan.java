package io.jcni.linux;

/** A VLAN on a bridge port or bridge: {@code pvid} tags untagged ingress, {@code untagged} strips on egress. */
public record BridgeVlan(int vid, boolean pvid, boolean untagged) {}
