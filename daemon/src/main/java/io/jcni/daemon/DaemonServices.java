package io.jcni.daemon;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** The {@link DaemonService}s on the classpath, and the flags that belong to them. */
final class DaemonServices {
    private DaemonServices() {}

    static List<DaemonService> available() {
        List<DaemonService> out = new ArrayList<>();
        ServiceLoader.load(DaemonService.class).forEach(out::add);
        return out;
    }

    /** 0 or 1 (values a service flag takes), or -1 when no service claims {@code flag}. */
    static int arity(String flag) {
        for (DaemonService s : available()) {
            if (s.valueFlags().contains(flag)) return 1;
            if (s.enableFlag().equals(flag) || s.switchFlags().contains(flag)) return 0;
        }
        return -1;
    }

    /** The flags in {@code args} that belong to {@code s}, in order, values following their flag. */
    static List<String> argsOf(DaemonService s, List<String> args) {
        List<String> mine = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (s.valueFlags().contains(a) && i + 1 < args.size()) {
                mine.add(a);
                mine.add(args.get(++i));
            } else if (s.switchFlags().contains(a)) {
                mine.add(a);
            }
        }
        return mine;
    }
}
