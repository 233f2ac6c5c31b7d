package io.jcni.docker.api;

import io.jcni.docker.api.NetworkCalls.AllocateNetwork;
import io.jcni.docker.api.NetworkCalls.CreateEndpoint;
import io.jcni.docker.api.NetworkCalls.CreateNetwork;
import io.jcni.docker.api.NetworkCalls.Discovery;
import io.jcni.docker.api.NetworkCalls.EndpointRef;
import io.jcni.docker.api.NetworkCalls.Join;
import io.jcni.docker.api.NetworkCalls.JoinAnswer;
import io.jcni.docker.api.NetworkCalls.NetworkRef;
import io.jcni.docker.api.NetworkCalls.ProgramExternalConnectivity;
import java.util.Map;

/** The NetworkDriver side of the remote API, after decoding. Errors are {@link DriverException}s. */
public interface NetworkDriver {

    /** "local" or "global" (GetCapabilities' Scope and ConnectivityScope). */
    String scope();

    void createNetwork(CreateNetwork r);

    void deleteNetwork(NetworkRef r);

    /** Swarm's network allocation; the answer's options go back to CreateNetwork on every node. */
    Map<String, String> allocateNetwork(AllocateNetwork r);

    void freeNetwork(NetworkRef r);

    void createEndpoint(CreateEndpoint r);

    /** The endpoint's operational data ({@code docker inspect}'s ports come from "com.docker.network.portmap"). */
    Map<String, Object> endpointOperInfo(EndpointRef r);

    void deleteEndpoint(EndpointRef r);

    JoinAnswer join(Join r);

    void leave(EndpointRef r);

    void programExternalConnectivity(ProgramExternalConnectivity r);

    void revokeExternalConnectivity(EndpointRef r);

    void discoverNew(Discovery r);

    void discoverDelete(Discovery r);
}
