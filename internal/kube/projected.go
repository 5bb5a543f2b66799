package kube

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
)

// The downwardAPI and projected volumes, as far as a local run has their
// data: the pod's name, namespace, uid, labels and annotations, the
// containers' resources, ConfigMaps and Secrets, and a placeholder service
// account token (there is no API server to issue one or to accept it).
// Every file path comes from the manifest and is checked as the API server
// checks it (validateLocalNonReservedPath); Materialise then writes the
// files without following symlinks, as for configMap volumes.

// rootCAConfigMap is the ConfigMap every namespace holds with the cluster's
// CA (kube-root-ca.crt, key ca.crt); a pod taken from a cluster mounts it in
// its kube-api-access-* volume.
const rootCAConfigMap = "kube-root-ca.crt"

// PlaceholderToken is the start of the service account token kube play
// writes: an unsigned JWT ("alg": "none") that no API server accepts.
const PlaceholderToken = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0."

func fileMode(m *int32) os.FileMode {
	if m == nil {
		return 0o644 // the API's default for every kind of volume file
	}
	return os.FileMode(*m) & 0o777
}

// addFile adds one file, refusing a path the API server refuses and two
// sources writing the same path.
func (t *translator) addFile(files map[string]File, p string, f File, where place) {
	if prob := localPathProblem(p, true); p == "" || prob != "" {
		if p == "" {
			prob = "is empty"
		}
		t.errorAt(where, ": path %q %s: it must be a relative path inside the volume", p, prob)
		return
	}
	if _, dup := files[p]; dup {
		t.errorAt(where, ": path %q: conflicting duplicate paths (two sources write it), as the API server refuses", p)
		return
	}
	files[p] = f
}

// downwardFiles adds the files of a downwardAPI volume or projection.
func (t *translator) downwardFiles(files map[string]File, items []DownwardAPIFile, mode os.FileMode, where place) {
	for i, it := range items {
		at := where.item("items", i, "")
		if it.User.Kind != 0 {
			t.warnf("%s: user: ignored, the files belong to podvisor's user", at)
		}
		var data string
		switch {
		case it.FieldRef != nil && it.ResourceFieldRef != nil:
			t.errorAt(at, ": fieldRef and resourceFieldRef: the API allows one")
			continue
		case it.FieldRef != nil:
			v, ok := t.volumeFieldRef(it.FieldRef.FieldPath, at)
			if !ok {
				continue
			}
			data = v
		case it.ResourceFieldRef != nil:
			if it.ResourceFieldRef.ContainerName == "" {
				t.errorAt(at, ": resourceFieldRef.containerName is required in a volume, as the API requires")
				continue
			}
			c := t.container(it.ResourceFieldRef.ContainerName)
			if c == nil {
				t.errorAt(at, ": resourceFieldRef.containerName %q is not a container of this pod", it.ResourceFieldRef.ContainerName)
				continue
			}
			v, ok := t.resourceFieldRef(c, it.ResourceFieldRef, at)
			if !ok {
				continue
			}
			data = v
		default:
			t.errorAt(at, ": needs fieldRef or resourceFieldRef")
			continue
		}
		m := mode
		if it.Mode != nil {
			m = fileMode(it.Mode)
		}
		t.addFile(files, it.Path, File{Data: data, Mode: m}, at)
	}
}

// volumeFieldRef answers the fields the API allows in a downwardAPI
// volume: metadata.name, namespace, uid, labels and annotations (whole, as
// the kubelet writes them: sorted key="value" lines), or one label or
// annotation.
func (t *translator) volumeFieldRef(path string, at place) (string, bool) {
	switch path {
	case "metadata.labels":
		return formatMap(t.w.Meta.Labels), true
	case "metadata.annotations":
		return formatMap(t.w.Meta.Annotations), true
	case "metadata.name", "metadata.namespace", "metadata.uid":
		return t.fieldRef(path, at)
	}
	if _, ok := bracketKey(path, "metadata.labels"); ok {
		return t.fieldRef(path, at)
	}
	if _, ok := bracketKey(path, "metadata.annotations"); ok {
		return t.fieldRef(path, at)
	}
	t.errorAt(at, ": fieldRef %q is not allowed in a volume (the API allows metadata.name, namespace, uid, labels, annotations, labels['K'], annotations['K'])", path)
	return "", false
}

// formatMap writes labels or annotations as the kubelet does: one
// key="value" line per key, sorted, the value Go-quoted, no final newline.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + strconv.Quote(m[k])
	}
	return strings.Join(lines, "\n")
}

// projectedFiles plans a projected volume's files.
func (t *translator) projectedFiles(v *ProjectedVolume, where place) map[string]File {
	files := map[string]File{}
	mode := fileMode(v.DefaultMode)
	if v.DefaultUser.Kind != 0 {
		t.warnf("%s: defaultUser: ignored, the files belong to podvisor's user", where)
	}
	for i, src := range v.Sources {
		at := where.item("sources", i, "")
		switch {
		case src.ConfigMap != nil, src.Secret != nil:
			secret, ref := false, src.ConfigMap
			if src.Secret != nil {
				secret, ref = true, src.Secret
			}
			t.projectObject(files, secret, ref, mode, at)
		case src.DownwardAPI != nil:
			t.downwardFiles(files, src.DownwardAPI.Items, mode, at.in("downwardAPI"))
		case src.ServiceAccountToken != nil:
			tok := src.ServiceAccountToken
			if tok.ExpirationSeconds != nil && (*tok.ExpirationSeconds < 600 || *tok.ExpirationSeconds > 1<<32) {
				t.errorAt(at.in("serviceAccountToken"), ": expirationSeconds %d: must be at least 10 minutes (600) and at most 2^32, as the API requires", *tok.ExpirationSeconds)
				continue
			}
			t.addFile(files, tok.Path, File{Data: t.placeholderToken(tok.Audience), Mode: mode}, at.in("serviceAccountToken"))
		case src.ClusterTrustBundle.Kind != 0, src.PodCertificate.Kind != 0:
			t.errorAt(at, ": clusterTrustBundle and podCertificate sources need a cluster to issue them; a local run has none (mount a secret with the files instead)")
		default:
			t.errorAt(at, ": needs configMap, secret, downwardAPI or serviceAccountToken")
		}
	}
	return files
}

// projectObject adds a projected ConfigMap's or Secret's keys. The
// cluster's CA ConfigMap, when the manifest does not hold it, is the file
// given with --ca-file, else left out with a warning.
func (t *translator) projectObject(files map[string]File, secret bool, ref *ObjectProjection, mode os.FileMode, at place) {
	data, ok := t.allKeys(secret, ref.Name)
	if !ok && !secret && ref.Name == rootCAConfigMap {
		if t.opts.CACert == "" {
			t.warnf("%s: ConfigMap %s (the cluster's CA) left out: pass --ca-file FILE to provide it", at, rootCAConfigMap)
			return
		}
		data, ok = map[string]string{"ca.crt": t.opts.CACert}, true
	}
	if !ok {
		if !ref.Optional {
			t.errorAt(at, ": %s %q not found (add it to the file, or pass --from-dir DIR holding DIR/%s/KEY files)", objKind(secret), ref.Name, ref.Name)
		}
		return
	}
	if len(ref.Items) == 0 {
		for _, k := range sortedKeys(data) {
			if prob := keyProblem(k); prob != "" {
				t.errorAt(at, ": %s %q: key %q %s, so it cannot be a file name in the volume (map it to a path with items)", objKind(secret), ref.Name, k, prob)
				continue
			}
			t.addFile(files, k, File{Data: data[k], Mode: mode}, at)
		}
		return
	}
	for j, it := range ref.Items {
		v, ok := data[it.Key]
		if !ok {
			if !ref.Optional {
				t.errorAt(at.item("items", j, ""), ": key %q not in %s %q", it.Key, objKind(secret), ref.Name)
			}
			continue
		}
		if it.User.Kind != 0 {
			t.warnf("%s.items[%d]: user: ignored, the files belong to podvisor's user", at, j)
		}
		m := mode
		if it.Mode != nil {
			m = fileMode(it.Mode)
		}
		t.addFile(files, it.Path, File{Data: v, Mode: m}, at.item("items", j, ""))
	}
}

// placeholderToken is an unsigned JWT naming the pod's service account:
// enough for a client that reads its claims, refused by any API server.
func (t *translator) placeholderToken(audience string) string {
	sa := t.w.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	claims := map[string]any{
		"iss": "podvisor-kube-play",
		"sub": "system:serviceaccount:" + t.namespace() + ":" + sa,
		"kubernetes.io": map[string]any{
			"namespace":      t.namespace(),
			"pod":            map[string]string{"name": t.w.Meta.Name, "uid": t.uid()},
			"serviceaccount": map[string]string{"name": sa},
		},
	}
	if audience != "" {
		claims["aud"] = []string{audience}
	}
	b, _ := json.Marshal(claims) // maps of strings cannot fail
	return PlaceholderToken + base64.RawURLEncoding.EncodeToString(b) + "."
}
