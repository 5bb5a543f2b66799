package kube

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
)

// podHead is a pod with one container, up to its volumeMounts.
const podHead = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    command: [x]\n"

func volumeByName(res *Result, name string) *VolumePlan {
	for _, v := range res.Volumes {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// A volume with no source is an emptyDir, as the API server defaults it
// (the Istio injector writes three such volumes).
func TestVolumeWithoutSourceIsEmptyDir(t *testing.T) {
	res := play(t, podHead+`    volumeMounts: [{name: workload-socket, mountPath: /var/run/secrets/workload-spiffe-uds}]
  volumes:
  - name: workload-socket
`, Options{})
	v := volumeByName(res, "workload-socket")
	if v == nil || v.Kind != "emptyDir" || v.Source != "/vol/workload-socket" {
		t.Fatalf("volume = %+v, want an emptyDir in /vol", v)
	}
}

// An unsupported type is refused naming it, and its mounts say nothing
// more (the volume is declared).
func TestUnsupportedVolumeNamesItsType(t *testing.T) {
	_, err := playErr(podHead+`    volumeMounts: [{name: d, mountPath: /d}, {name: d, mountPath: /e}]
  volumes:
  - name: d
    csi: {driver: x}
`, Options{})
	if err == nil || !strings.Contains(err.Error(), "csi volumes cannot run locally") {
		t.Fatalf("err = %v, want the csi type named", err)
	}
	if strings.Contains(err.Error(), "no volume named") {
		t.Errorf("err = %v: a declared volume is reported as missing", err)
	}
}

// A claim is a directory in the claim directory, per namespace; a
// StatefulSet's claim templates are <template>-<set>-<ordinal>.
func TestClaims(t *testing.T) {
	res := play(t, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: shop}
spec:
  ordinals: {start: 3}
  selector: {matchLabels: {app: web}}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        command: [x]
        volumeMounts: [{name: data, mountPath: /data}, {name: shared, mountPath: /shared}]
      volumes:
      - name: shared
        persistentVolumeClaim: {claimName: shared.files}
`, Options{ClaimDir: "/state/claims"})
	for name, want := range map[string]string{"data": "/state/claims/shop/data-web-3", "shared": "/state/claims/shop/shared.files"} {
		v := volumeByName(res, name)
		if v == nil || v.Kind != "persistentVolumeClaim" || v.Source != want {
			t.Errorf("volume %s = %+v, want a claim at %s", name, v, want)
		}
	}
	for _, m := range res.Mounts {
		if !m.HostPath {
			t.Errorf("mount %+v: a claim's content is the containers', its mount points must be made beneath it", m)
		}
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "volumeClaimTemplates") {
			t.Errorf("warning %q: the claim templates are used", w)
		}
	}
}

// Claim names and namespaces from the manifest never leave the claim
// directory.
func TestClaimNamesRefused(t *testing.T) {
	for _, tc := range []struct{ ns, claim string }{{"default", "../x"}, {"default", "a/b"}, {"..", "x"}, {"default", ".x"}, {"Default", "x"}, {"default", ""}} {
		doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: '" + tc.ns + "'}\nspec:\n  containers: [{name: a, command: [x], volumeMounts: [{name: d, mountPath: /d}]}]\n" +
			"  volumes: [{name: d, persistentVolumeClaim: {claimName: '" + tc.claim + "'}}]\n"
		if _, err := playErr(doc, Options{ClaimDir: "/state/claims"}); err == nil {
			t.Errorf("namespace %q claim %q: accepted", tc.ns, tc.claim)
		}
	}
}

// FuzzClaimPath: an accepted claim path is exactly two elements beneath
// the claim directory.
func FuzzClaimPath(f *testing.F) {
	for _, s := range [][2]string{{"default", "data-web-0"}, {"a", "b.c"}, {"..", "x"}, {"a", "../../etc"}, {"a", "b/c"}, {"a", "."}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, ns, claim string) {
		p, err := ClaimPath("/state/claims", ns, claim)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel("/state/claims", p)
		if rerr != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, "/") != 1 || filepath.Join("/state/claims", ns, claim) != p {
			t.Fatalf("ClaimPath(%q, %q) = %s: not two elements beneath the claim directory", ns, claim, p)
		}
	})
}

// A pre-1.24 service account token Secret mounted at the service account
// path gets the placeholder files of a kube-api-access-* volume.
func TestLegacyTokenSecret(t *testing.T) {
	res := play(t, `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns1}
spec:
  serviceAccountName: builder
  containers:
  - name: app
    command: [x]
    volumeMounts: [{name: builder-token-x7k2p, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}]
  volumes:
  - name: builder-token-x7k2p
    secret: {secretName: builder-token-x7k2p, defaultMode: 420}
`, Options{CACert: "CA"})
	v := volumeByName(res, "builder-token-x7k2p")
	if v == nil {
		t.Fatal("no volume")
	}
	tok := v.Files["token"].Data
	if !strings.HasPrefix(tok, PlaceholderToken) || v.Files["namespace"].Data != "ns1" || v.Files["ca.crt"].Data != "CA" {
		t.Fatalf("files %+v, want the placeholder token, namespace and ca.crt", v.Files)
	}
	claims, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if !strings.Contains(string(claims), "system:serviceaccount:ns1:builder") {
		t.Errorf("token claims %s, want the service account", claims)
	}
	// Elsewhere, the Secret is an ordinary one: missing.
	if _, err := playErr(strings.ReplaceAll(`apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: app, command: [x], volumeMounts: [{name: t, mountPath: /elsewhere}]}]
  volumes: [{name: t, secret: {secretName: default-token-abcde}}]
`, "\t", ""), Options{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("err = %v, want the Secret not found", err)
	}
}
