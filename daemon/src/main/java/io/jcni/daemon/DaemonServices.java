package io.jcni.daemon;

import java.io.PrintStream;
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

    /** Starts every service whose enable flag is in {@code args}; each gets the flags it knows. */
    static List<DaemonService.Running> start(List<String> args, PrintStream log) throws Exception {
        List<DaemonService.Running> started = new ArrayList<>();
        for (DaemonService s : available()) {
            if (!args.contains(s.enableFlag())) continue;
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
            try {
                started.add(s.start(mine, log));
            } catch (Exception e) {
                stop(started, log);
                throw e;
            }
        }
        return started;
    }

    static void stop(List<DaemonService.Running> services, PrintStream log) {
        for (DaemonService.Running s : services.reversed()) {
            try {
                s.close();
            } catch (Exception e) {
                log.println("jcnid: stopping a service failed: " + e);
            }
        }
    }
}
