package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPodSubdomain: a pod with spec.subdomain finds its FQDN
// (hostname.subdomain.NAMESPACE.svc.cluster.local) in its /etc/hosts, as
// the kubelet writes it, with the machine's own lines kept; with
// setHostnameAsFQDN its hostname is the FQDN; the machine's /etc/hosts is
// untouched. A StatefulSet's serviceName is its pods' subdomain.
func TestPodSubdomain(t *testing.T) {
	needRoot(t)
	env := podsEnv(t)
	machineHosts, _ := os.ReadFile("/etc/hosts")
	app := `  containers:
  - name: app
    command: [sh, -c, 'trap "exit 0" TERM; cat /proc/sys/kernel/hostname > "$E2E_DIR/h.tmp"; cat /etc/hosts >> "$E2E_DIR/h.tmp"; mv "$E2E_DIR/h.tmp" "$E2E_DIR/host"; while :; do sleep 0.1; done']
`
	for _, tc := range []struct {
		name, doc, host, fqdn string
	}{
		{"sub-a", "apiVersion: v1\nkind: Pod\nmetadata: {name: sub-a, namespace: shop}\nspec:\n  hostname: web\n  subdomain: front\n" + app,
			"web", "web.front.shop.svc.cluster.local"},
		{"sub-b", "apiVersion: v1\nkind: Pod\nmetadata: {name: sub-b}\nspec:\n  subdomain: front\n  setHostnameAsFQDN: true\n" + app,
			"sub-b.front.default.svc.cluster.local", "sub-b.front.default.svc.cluster.local"},
		{"db-0", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db-headless\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n" + indent(app, "    "),
			"db-0", "db-0.db-headless.default.svc.cluster.local"},
	} {
		file := filepath.Join(t.TempDir(), tc.name+".yaml")
		if err := os.WriteFile(file, []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		r := startEnv(t, env, "kube", "play", file)
		var got []string
		if !waitFor(func() bool {
			b, _ := os.ReadFile(filepath.Join(r.dir, "host"))
			got = strings.Split(strings.TrimSpace(string(b)), "\n")
			return len(got) > 1
		}) {
			t.Fatalf("%s: nothing written\n%s", tc.name, r.stderr)
		}
		if got[0] != tc.host {
			t.Errorf("%s: hostname %q, want %q", tc.name, got[0], tc.host)
		}
		short, _, _ := strings.Cut(tc.host, ".")
		want := "127.0.1.1\t" + tc.fqdn + "\t" + short
		hosts := strings.Join(got[1:], "\n")
		if !strings.Contains(hosts, want) {
			t.Errorf("%s: /etc/hosts lacks %q:\n%s", tc.name, want, hosts)
		}
		if len(machineHosts) > 0 && !strings.HasPrefix(hosts, strings.TrimSpace(string(machineHosts))) {
			t.Errorf("%s: /etc/hosts does not keep the machine's lines:\n%s", tc.name, hosts)
		}
		if _, e, code := podvisorCmd(t, env, "kube", "down", tc.name); code != 0 {
			t.Fatalf("kube down: %d %s", code, e)
		}
		r.wait(time.Minute)
	}
	if now, _ := os.ReadFile("/etc/hosts"); string(now) != string(machineHosts) {
		t.Errorf("the machine's /etc/hosts changed:\n%s", now)
	}
}

// TestPodFQDNTooLong: setHostnameAsFQDN with an FQDN over 64 characters is
// refused, as the kubelet refuses the pod.
func TestPodFQDNTooLong(t *testing.T) {
	env := podsEnv(t)
	file := filepath.Join(t.TempDir(), "long.yaml")
	doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: a-rather-long-pod-name-for-this, namespace: some-namespace}\nspec:\n  subdomain: and-a-long-subdomain\n  setHostnameAsFQDN: true\n  containers:\n  - {name: app, command: [\"true\"]}\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := podvisorCmd(t, env, "kube", "play", file)
	if code != 2 || !strings.Contains(errOut, "more than the 64 a hostname may have") {
		t.Errorf("exit %d, want 2 and the FQDN's length named:\n%s", code, errOut)
	}
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n") + "\n"
}
