/**
 * Kernel networking for CNI plugins: network namespaces ({@link io.jcni.linux.Netns}), rtnetlink
 * ({@link io.jcni.linux.Rtnl}), traffic control ({@link io.jcni.linux.Tc}), sysctl
 * ({@link io.jcni.linux.Sysctl}) and flock ({@link io.jcni.linux.Flock}).
 *
 * <p>The native part is libjcni.so, a few system-call wrappers behind {@code Native}; all netlink
 * encoding is Java. Failures are {@link io.jcni.linux.ErrnoException}s naming errno and operation.
 * See linux/README.md for the threading model and the measurements behind the design.
 */
package io.jcni.linux;
