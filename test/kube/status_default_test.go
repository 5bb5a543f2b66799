package kube

import (
	"net"
	"strings"
	"testing"
)

// TestStatusWithoutFlagsFindsThePod: kube play's HTTP listener is off by
// default, so `podvisor status` with no flags asks the pod's control socket
// when it is the only pod here, and names the pods when there are several.
func TestStatusWithoutFlagsFindsThePod(t *testing.T) {
	if conn, err := net.Dial("tcp", "127.0.0.1:9464"); err == nil {
		conn.Close()
		t.Skip("something listens on 127.0.0.1:9464, the address status tries first")
	}
	env := podsEnv(t)
	startEnv(t, env, "kube", "play", sidecarPod(t, "solo-a"))
	waitPods(t, env, "solo-a")
	out, errOut, code := podvisorCmd(t, env, "status")
	if code != 0 || !strings.Contains(out, "proxy") || !strings.Contains(out, "app") {
		t.Fatalf("status with one pod: exit %d, want 0 and the pod's containers\n%s%s", code, out, errOut)
	}

	startEnv(t, env, "kube", "play", sidecarPod(t, "solo-b"))
	waitPods(t, env, "solo-a", "solo-b")
	out, errOut, code = podvisorCmd(t, env, "status")
	if code != 2 || !strings.Contains(errOut, "solo-a, solo-b") || !strings.Contains(errOut, "--pod NAME") {
		t.Errorf("status with two pods: exit %d, want 2 and an error naming both and --pod\n%s%s", code, out, errOut)
	}
}
