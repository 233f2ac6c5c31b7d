package io.jcni.docker;

import io.jcni.daemon.DaemonConfig;
import io.jcni.daemon.DaemonService;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Optional;

/** Runs the Docker driver inside jcnid when it is started with {@code --docker-driver NAME}. */
public final class DockerService implements DaemonService.Provider {

    @Override
    public Optional<DaemonService> start(DaemonConfig cfg, PrintStream log) throws IOException {
        if (cfg.dockerDriver() == null) return Optional.empty();
        DockerDriver d = DockerDriver.start(DockerDriver.Options.of(cfg.dockerDriver(), cfg.dockerPluginDir(), cfg.dockerStateDir()), log);
        return Optional.of(new DaemonService() {
            @Override
            public String status() {
                return d.status();
            }

            @Override
            public void close() {
                d.close();
            }
        });
    }
}
