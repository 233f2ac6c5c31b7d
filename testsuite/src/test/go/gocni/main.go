// gocni-run calls CNI plugins through containerd's go-cni library exactly as containerd 1.6's CRI
// plugin does for a pod sandbox (pkg/cri/server/sandbox_run.go, sandbox_stop.go), so that jcni is
// tested against the bytes a Kubernetes node really sends: untagged capability structs
// ("HostPort", "IngressRate", ...), a burst of math.MaxUint32, pod labels as CNI_ARGS, the pod's
// annotations and DNS as capabilities, and a loopback network loaded first.
//
// Usage: gocni-run -confdir DIR -bindir DIR [-hostport N -containerport N] [-ingress BPS] [-egress BPS]
//
//	setup|remove ID=NETNS_PATH...
//
// Each ID=NETNS_PATH is one pod; several are set up (or removed) concurrently through one go-cni
// instance, as containerd does for pods started together. Pod i gets host port hostport+i. An
// empty NETNS_PATH is what containerd passes to Remove once the pod's netns is gone. setup prints
// one JSON line per pod: {"id":..., "ips":[...], "interfaces":{...}}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	cni "github.com/containerd/go-cni"
)

type podResult struct {
	ID         string            `json:"id"`
	IPs        []string          `json:"ips"`
	Interfaces map[string]string `json:"interfaces"`
}

func main() {
	confDir := flag.String("confdir", "", "CNI config directory")
	binDir := flag.String("bindir", "", "CNI plugin directory")
	hostPort := flag.Int("hostport", 0, "first host port (0: no port mapping)")
	containerPort := flag.Int("containerport", 80, "container port")
	ingress := flag.Uint64("ingress", 0, "ingress rate in bits/s (0: none)")
	egress := flag.Uint64("egress", 0, "egress rate in bits/s (0: none)")
	flag.Parse()
	if flag.NArg() < 2 {
		fail("usage: gocni-run [flags] setup|remove ID=NETNS...")
	}

	// containerd 1.6 CRI: pkg/cri/server/service_linux.go initPlatform and the CNI conf syncer.
	l, err := cni.New(cni.WithMinNetworkCount(2),
		cni.WithPluginConfDir(*confDir),
		cni.WithPluginMaxConfNum(1),
		cni.WithPluginDir([]string{*binDir}),
		cni.WithInterfacePrefix("eth"))
	if err != nil {
		fail("cni.New: %v", err)
	}
	if err := l.Load(cni.WithLoNetwork, cni.WithDefaultConf); err != nil {
		fail("Load: %v", err)
	}

	command := flag.Arg(0)
	pods := flag.Args()[1:]
	results := make([]*podResult, len(pods))
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		id, path, ok := strings.Cut(pod, "=")
		if !ok {
			fail("not ID=NETNS: %q", pod)
		}
		wg.Add(1)
		go func(i int, id, path string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			opts := namespaceOpts(id, i, *hostPort, *containerPort, *ingress, *egress)
			switch command {
			case "setup":
				r, err := l.Setup(ctx, id, path, opts...)
				if err != nil {
					errs[i] = err
					return
				}
				results[i] = summarize(id, r)
			case "remove":
				errs[i] = l.Remove(ctx, id, path, opts...)
			default:
				errs[i] = fmt.Errorf("unknown command %q", command)
			}
		}(i, id, path)
	}
	wg.Wait()
	failed := false
	for i, err := range errs {
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s %s: %v\n", command, pods[i], err)
			failed = true
		}
	}
	for _, r := range results {
		if r != nil {
			b, _ := json.Marshal(r)
			fmt.Println(string(b))
		}
	}
	if failed {
		os.Exit(1)
	}
}

// namespaceOpts is containerd 1.6's cniNamespaceOpts for a pod with one port mapping and the
// kubernetes.io/ingress-bandwidth and egress-bandwidth annotations.
func namespaceOpts(id string, i, hostPort, containerPort int, ingress, egress uint64) []cni.NamespaceOpts {
	name := fmt.Sprintf("pod-%d", i)
	annotations := map[string]string{"io.kubernetes.cri.sandbox-id": id}
	opts := []cni.NamespaceOpts{
		cni.WithLabels(map[string]string{
			"K8S_POD_NAMESPACE":          "default",
			"K8S_POD_NAME":               name,
			"K8S_POD_INFRA_CONTAINER_ID": id,
			"K8S_POD_UID":                "uid-" + id,
			"IgnoreUnknown":              "1",
		}),
		cni.WithCapability("io.kubernetes.cri.pod-annotations", annotations),
	}
	if hostPort > 0 {
		opts = append(opts, cni.WithCapabilityPortMap([]cni.PortMapping{{
			HostPort:      int32(hostPort + i),
			ContainerPort: int32(containerPort),
			Protocol:      "tcp", // CRI lower-cases the Kubernetes protocol
			HostIP:        "",
		}}))
	}
	if ingress > 0 || egress > 0 {
		bw := cni.BandWidth{}
		if ingress > 0 {
			bw.IngressRate = ingress
			bw.IngressBurst = math.MaxUint32 // toCNIBandWidth
		}
		if egress > 0 {
			bw.EgressRate = egress
			bw.EgressBurst = math.MaxUint32
		}
		opts = append(opts, cni.WithCapabilityBandWidth(bw))
	}
	opts = append(opts, cni.WithCapabilityDNS(cni.DNS{
		Servers:  []string{"10.96.0.10"},
		Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"},
		Options:  []string{"ndots:5"},
	}))
	return opts
}

func summarize(id string, r *cni.Result) *podResult {
	out := &podResult{ID: id, Interfaces: map[string]string{}}
	for name, c := range r.Interfaces {
		out.Interfaces[name] = c.Sandbox
		for _, ip := range c.IPConfigs {
			out.IPs = append(out.IPs, ip.IP.String())
		}
	}
	return out
}

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(2)
}
