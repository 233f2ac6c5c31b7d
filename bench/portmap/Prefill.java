/** Adds mappings FROM..TO-1 with the plugin, in the current namespace: java Prefill.java DATADIR FROM TO. */
public class Prefill {
    public static void main(String[] a) {
        for (int k = Integer.parseInt(a[1]); k < Integer.parseInt(a[2]); k++) {
            PortmapBench.call("ADD", "pre" + k, PortmapBench.conf(a[0], 10000 + k, k));
        }
    }
}
