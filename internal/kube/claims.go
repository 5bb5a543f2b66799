package kube

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Volumes as the API server leaves them (docs/kubernetes.md, "Volumes"):
// a volume with no source is an emptyDir (the API server's defaulting), a
// persistentVolumeClaim is a directory under the claim directory that
// outlives the run, and a StatefulSet's volumeClaimTemplates are claims
// named <template>-<set>-<ordinal>, as its controller names them.

// ClaimsDir is the claim directory under a state directory.
func ClaimsDir(stateDir string) string { return filepath.Join(stateDir, "claims") }

// ClaimPath is where claim's data lives: DIR/NAMESPACE/CLAIM. Both names
// come from the manifest: the namespace must be a DNS label and the claim
// a DNS subdomain (as the API server requires), so the path is always two
// elements beneath dir.
func ClaimPath(dir, namespace, claim string) (string, error) {
	if !dnsLabel(namespace) {
		return "", fmt.Errorf("namespace %q is not a DNS label (a-z, 0-9, '-', at most 63 characters)", namespace)
	}
	if !dnsSubdomain(claim) {
		return "", fmt.Errorf("claim name %q is not a DNS subdomain (DNS labels joined by '.', at most 253 characters), as the API server requires", claim)
	}
	return filepath.Join(dir, namespace, claim), nil
}

// DNSLabel reports whether s is a DNS-1123 label (a hostname, a namespace).
func DNSLabel(s string) bool { return dnsLabel(s) }

// dnsSubdomain reports whether s is a DNS-1123 subdomain: lowercase labels
// of a-z, 0-9 and '-' joined by '.', at most 253 characters. It never
// holds '/' and never is or starts with '.'.
func dnsSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !dnsLabel(label) {
			return false
		}
	}
	return true
}

// claimTemplates decodes a StatefulSet's spec.volumeClaimTemplates: the
// template names, in order.
func claimTemplates(n *yaml.Node) []string {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	var names []string
	for _, item := range n.Content {
		if name := mapValue(mapValue(item, "metadata"), "name"); name != nil {
			names = append(names, name.Value)
		}
	}
	return names
}

// ordinalStart is a StatefulSet's spec.ordinals.start, 0 when unset: the
// ordinal of the pod kube play runs.
func ordinalStart(n *yaml.Node) int {
	if v := mapValue(n, "start"); v != nil {
		if i, err := strconv.Atoi(v.Value); err == nil && i >= 0 {
			return i
		}
	}
	return 0
}

// withClaimTemplates returns the pod's volumes with one persistentVolumeClaim
// volume per claim template no volume of the pod already names, as the
// StatefulSet controller adds them.
func (t *translator) withClaimTemplates() []Volume {
	vols := t.w.Spec.Volumes
	declared := map[string]bool{}
	for _, v := range vols {
		declared[v.Name] = true
	}
	for _, name := range t.w.ClaimTemplates {
		if declared[name] {
			continue
		}
		claim := fmt.Sprintf("%s-%s-%d", name, t.w.Name, t.w.Ordinal)
		v := Volume{Name: name}
		v.PersistentVolumeClaim = yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "claimName"}, {Kind: yaml.ScalarNode, Value: claim}}}
		vols = append(vols, v)
	}
	return vols
}

// claimPlan plans a persistentVolumeClaim volume: its directory in the
// claim directory, made if missing and kept after the run.
func (t *translator) claimPlan(p *VolumePlan, v Volume, where place) bool {
	claim := mapValue(&v.PersistentVolumeClaim, "claimName")
	if claim == nil || claim.Value == "" {
		t.errorAt(where, ": persistentVolumeClaim.claimName is required")
		return false
	}
	dir := t.opts.ClaimDir
	if dir == "" {
		dir = "$STATE/claims"
	}
	src, err := ClaimPath(dir, t.namespace(), claim.Value)
	if err != nil {
		t.errorAt(where, ": persistentVolumeClaim: %v", err)
		return false
	}
	p.Kind, p.Source, p.Claim = "persistentVolumeClaim", src, claim.Value
	// readOnly forces every mount of the claim read-only, as the kubelet
	// mounts it (a write gets EROFS).
	if ro := mapValue(&v.PersistentVolumeClaim, "readOnly"); ro != nil {
		if ro.ShortTag() != "!!bool" {
			t.errorAt(where, ": persistentVolumeClaim.readOnly %q: want true or false", ro.Value)
			return false
		}
		p.ReadOnly = ro.Value == "true"
	}
	return true
}

// volumeType names the source of a volume that has one kube play cannot
// run, or "" when it has no source at all.
func volumeType(v Volume) string {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := range rt.NumField() {
		f := rv.Field(i)
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
		switch {
		case tag == "name":
		case f.Kind() == reflect.Pointer && !f.IsNil():
			return tag
		case f.Type() == nodeType && f.Interface().(yaml.Node).Kind != 0:
			return tag
		}
	}
	return ""
}

// saTokenPath is where a service account's token is mounted.
const saTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// legacyToken answers a secret volume of a pre-1.24 service account token
// Secret (<serviceaccount>-token-XXXXX, which the manifest does not hold)
// mounted at the service account path: the files of a kube-api-access-*
// volume (placeholder token, namespace, ca.crt with --ca-file).
func (t *translator) legacyToken(v Volume) (map[string]File, bool) {
	sa := t.w.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	name := v.Secret.SecretName
	if !strings.HasPrefix(name, sa+"-token-") {
		return nil, false
	}
	if _, ok := t.allKeys(true, name); ok || !t.mountedAt(v.Name, saTokenPath) {
		return nil, false
	}
	mode := fileMode(v.Secret.DefaultMode)
	files := map[string]File{
		"token":     {Data: t.placeholderToken(""), Mode: mode},
		"namespace": {Data: t.namespace(), Mode: mode},
	}
	if t.opts.CACert != "" {
		files["ca.crt"] = File{Data: t.opts.CACert, Mode: mode}
	} else {
		t.warnf("secret %s (a service account token): ca.crt left out: pass --ca-file FILE to provide it", name)
	}
	return files, true
}

// mountedAt reports whether a container mounts volume name at path.
func (t *translator) mountedAt(name, path string) bool {
	for _, list := range [][]Container{t.w.Spec.InitContainers, t.w.Spec.Containers} {
		for _, c := range list {
			for _, vm := range c.VolumeMounts {
				if vm.Name == name && filepath.Clean(vm.MountPath) == path {
					return true
				}
			}
		}
	}
	return false
}
