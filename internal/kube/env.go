package kube

import (
	"crypto/sha1"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// envVar is one variable of a container's environment, in order.
type envVar struct{ Key, Value string }

// lookupKey finds key in the ConfigMap (secret false) or Secret named name:
// the manifest's objects first, then FromDir/NAME/KEY.
func (t *translator) lookupKey(secret bool, name, key string) (string, bool) {
	objs := t.m.ConfigMaps
	if secret {
		objs = t.m.Secrets
	}
	if data, ok := objs[name]; ok {
		v, ok := data[key]
		return v, ok
	}
	if t.opts.FromDir != "" && validKey(name) && validKey(key) {
		b, err := os.ReadFile(filepath.Join(t.opts.FromDir, name, key))
		if err == nil {
			return string(b), true
		}
	}
	return "", false
}

// allKeys returns every key of a ConfigMap or Secret, and whether it exists.
func (t *translator) allKeys(secret bool, name string) (map[string]string, bool) {
	objs := t.m.ConfigMaps
	if secret {
		objs = t.m.Secrets
	}
	if data, ok := objs[name]; ok {
		return data, true
	}
	if t.opts.FromDir != "" && validKey(name) {
		dir := filepath.Join(t.opts.FromDir, name)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, false
		}
		data := map[string]string{}
		for _, e := range ents {
			if e.Type().IsRegular() {
				if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
					data[e.Name()] = string(b)
				}
			}
		}
		return data, true
	}
	return nil, false
}

// validKey refuses names that would escape --from-dir.
func validKey(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

func objKind(secret bool) string {
	if secret {
		return "Secret"
	}
	return "ConfigMap"
}

// env computes a container's environment as the kubelet does: envFrom
// first, then env, each value expanded against the variables defined
// before it. It returns the variables in order.
//
// secrets names the variables whose values came from a Secret (envFrom
// secretRef, secretKeyRef) and were not overridden since: procs.yaml lists
// them in secret_env, so that podvisor redacts them whatever their names.
func (t *translator) env(c *Container, where place) (out []envVar, secrets []string) {
	idx := map[string]int{}
	fromSecret := map[string]bool{}
	setFrom := func(k, v string, secret bool) {
		fromSecret[k] = secret
		if i, ok := idx[k]; ok {
			out[i].Value = v
			return
		}
		idx[k] = len(out)
		out = append(out, envVar{Key: k, Value: v})
	}
	set := func(k, v string) { setFrom(k, v, false) }
	lookup := func(k string) (string, bool) {
		if i, ok := idx[k]; ok {
			return out[i].Value, true
		}
		return "", false
	}
	for i, ef := range c.EnvFrom {
		secret, ref := false, ef.ConfigMapRef
		if ef.SecretRef != nil {
			secret, ref = true, ef.SecretRef
		}
		if ref == nil {
			t.errorAt(where.item("envFrom", i, ""), ": needs configMapRef or secretRef")
			continue
		}
		data, ok := t.allKeys(secret, ref.Name)
		if !ok {
			if !ref.Optional {
				t.errorAt(where.item("envFrom", i, ""), ": %s %q not found (add it to the file, or pass --from-dir DIR holding DIR/%s/KEY files)", objKind(secret), ref.Name, ref.Name)
			}
			continue
		}
		for _, k := range sortedKeys(data) {
			name := ef.Prefix + k
			if !validEnvName(name) {
				t.warnf("%s.envFrom[%d]: key %q of %s %q is not a variable name (letters, digits, _): skipped", where, i, k, objKind(secret), ref.Name)
				continue
			}
			setFrom(name, data[k], secret)
		}
	}
	for i, e := range c.Env {
		at := where.item("env", i, e.Name)
		if !validEnvName(e.Name) {
			// Kubernetes also allows . and -; podvisor's environments do not.
			t.warnFor(c.Name, fmt.Sprintf("env %q: not a variable name podvisor can set (letters, digits, _): skipped", e.Name))
			continue
		}
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		if ref := e.ValueFrom.FileKeyRef; ref != nil {
			t.fileKeyRef(e.Name, ref, at)
			continue
		}
		v, ok := t.valueFrom(c, e.ValueFrom, at)
		if ok {
			setFrom(e.Name, v, e.ValueFrom.SecretKeyRef != nil)
		}
	}
	for _, kv := range out {
		if fromSecret[kv.Key] {
			secrets = append(secrets, kv.Key)
		}
	}
	slices.Sort(secrets)
	return out, secrets
}

func (t *translator) valueFrom(c *Container, vf *EnvVarSource, at place) (string, bool) {
	switch {
	case vf.FieldRef != nil:
		return t.fieldRef(vf.FieldRef.FieldPath, at)
	case vf.ResourceFieldRef != nil:
		return t.resourceFieldRef(c, vf.ResourceFieldRef, at)
	case vf.ConfigMapKeyRef != nil, vf.SecretKeyRef != nil:
		secret, ref := false, vf.ConfigMapKeyRef
		if vf.SecretKeyRef != nil {
			secret, ref = true, vf.SecretKeyRef
		}
		v, ok := t.lookupKey(secret, ref.Name, ref.Key)
		if !ok && !ref.Optional {
			t.errorAt(at, ": key %q of %s %q not found (add the %s to the file, or pass --from-dir DIR holding DIR/%s/%s)", ref.Key, objKind(secret), ref.Name, objKind(secret), ref.Name, ref.Key)
		}
		return v, ok
	case vf.FileKeyRef != nil:
		return "", false // read when the container starts: see env and fileKeyRef
	default:
		t.errorAt(at, ": valueFrom needs fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef")
	}
	return "", false
}

// fieldRef answers the downward API for a pod running on this machine.
func (t *translator) fieldRef(path string, at place) (string, bool) {
	meta := t.w.Meta
	if k, ok := bracketKey(path, "metadata.labels"); ok {
		return meta.Labels[k], true
	}
	if k, ok := bracketKey(path, "metadata.annotations"); ok {
		return meta.Annotations[k], true
	}
	switch path {
	case "metadata.name":
		return meta.Name, true
	case "metadata.namespace":
		return t.namespace(), true
	case "metadata.uid":
		return t.uid(), true
	case "spec.nodeName":
		if t.w.Spec.NodeName != "" {
			return t.w.Spec.NodeName, true
		}
		return t.opts.Hostname, true
	case "spec.serviceAccountName":
		if sa := t.w.Spec.ServiceAccountName; sa != "" {
			return sa, true
		}
		return "default", true
	case "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return "127.0.0.1", true // every process of a local pod shares the host's network
	}
	t.errorAt(at, ": fieldRef %q is not supported (metadata.name, namespace, uid, labels['K'], annotations['K'], spec.nodeName, spec.serviceAccountName, status.podIP, status.hostIP are)", path)
	return "", false
}

func bracketKey(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", false
	}
	k := strings.TrimSuffix(rest, "]")
	return strings.Trim(k, `'"`), true
}

func (t *translator) namespace() string {
	if t.w.Meta.Namespace != "" {
		return t.w.Meta.Namespace
	}
	return "default"
}

// uid is the manifest's uid, else a stable one derived from namespace and
// name, so that a --dry-run prints the same file every time.
func (t *translator) uid() string {
	if t.w.Meta.UID != "" {
		return t.w.Meta.UID
	}
	h := sha1.Sum([]byte(t.namespace() + "/" + t.w.Meta.Name))
	return fmt.Sprintf("%x-%x-5%x-%x-%x", h[0:4], h[4:6], h[6:8][1:], h[8:10], h[10:16])
}

// resourceFieldRef gives a container's limit or request divided by the
// divisor, rounded up; an unset limit is the machine's capacity, an unset
// request the limit if set, else 0.
func (t *translator) resourceFieldRef(c *Container, r *ResourceFieldRef, at place) (string, bool) {
	target := c
	if r.ContainerName != "" && r.ContainerName != c.Name {
		target = t.container(r.ContainerName)
		if target == nil {
			t.errorAt(at, ": resourceFieldRef.containerName %q is not a container of this pod", r.ContainerName)
			return "", false
		}
	}
	kind, res, ok := strings.Cut(r.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") || (res != "cpu" && res != "memory" && res != "ephemeral-storage") {
		t.errorAt(at, ": resourceFieldRef.resource %q is not supported (limits.cpu, limits.memory, limits.ephemeral-storage, requests.* are)", r.Resource)
		return "", false
	}
	get := func(m map[string]Quantity) (float64, bool, error) {
		q, set := m[res]
		if !set {
			return 0, false, nil
		}
		v, err := parseQuantity(string(q))
		return v, true, err
	}
	var limits, requests map[string]Quantity
	if target.Resources != nil {
		limits, requests = target.Resources.Limits, target.Resources.Requests
	}
	lim, limSet, err := get(limits)
	if err == nil && !limSet {
		lim = t.capacity(res)
	}
	val := lim
	if kind == "requests" && err == nil {
		var reqSet bool
		val, reqSet, err = get(requests)
		if !reqSet {
			val = 0
			if limSet {
				val = lim
			}
		}
	}
	div := 1.0
	if r.Divisor != "" && err == nil {
		div, err = parseQuantity(string(r.Divisor))
		if err == nil && div == 0 {
			div = 1 // the kubelet takes a zero divisor (Istio writes "0") for 1
		}
	}
	if err != nil {
		t.errorAt(at, ": %v", err)
		return "", false
	}
	return strconv.FormatInt(int64(math.Ceil(val/div-1e-9)), 10), true
}

func (t *translator) capacity(res string) float64 {
	switch res {
	case "cpu":
		return float64(t.opts.CPUs)
	case "memory":
		return float64(t.opts.MemoryBytes)
	}
	return float64(t.opts.DiskBytes)
}

// parseQuantity reads a Kubernetes quantity: a decimal number with an
// optional suffix m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent.
func parseQuantity(s string) (float64, error) {
	suffixes := []struct {
		s string
		f float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50}, {"Ei", 1 << 60},
		{"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}}
	num, f := s, 1.0
	for _, x := range suffixes {
		if strings.HasSuffix(s, x.s) {
			num, f = strings.TrimSuffix(s, x.s), x.f
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid quantity %q (want e.g. 500m, 2, 128Mi, 1G)", s)
	}
	return v * f, nil
}

// validEnvName: a C identifier, what procs.yaml accepts as a variable name
// (the API also allows . and -).
func validEnvName(s string) bool {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// envFromFile is one fileKeyRef of the container being translated: the
// variable Name gets Key's value from the env file File when the process
// starts (the file is usually written by an init container, so it cannot
// be read now).
type envFromFile struct {
	Name, File, Key string
	Optional        bool
}

// fileKeyRef checks a fileKeyRef as the API server does and records it for
// the container's command (withEnvFiles).
func (t *translator) fileKeyRef(name string, ref *FileKeyRef, at place) {
	at = at.in("valueFrom", "fileKeyRef")
	p, ok := t.plans[ref.VolumeName]
	if !ok {
		t.errorAt(at, ": volumeName %q is not a volume of the pod", ref.VolumeName)
		return
	}
	if prob := localPathProblem(ref.Path, true); ref.Path == "" || prob != "" {
		if ref.Path == "" {
			prob = "is empty"
		}
		t.errorAt(at, ": path %q %s: it must be a relative path inside the volume", ref.Path, prob)
		return
	}
	if ref.Key == "" || len(ref.Key) > 128 || strings.ContainsFunc(ref.Key, func(r rune) bool { return r == '=' || r < ' ' || r > '~' }) {
		t.errorAt(at, ": key %q: want 1-128 printable ASCII characters other than '='", ref.Key)
		return
	}
	t.envFiles = append(t.envFiles, envFromFile{Name: name, File: filepath.Join(p.Source, ref.Path), Key: ref.Key,
		Optional: ref.Optional != nil && *ref.Optional})
}

// envFileScript sets, for each FILE KEY NAME (required|optional) quadruple
// before "--", NAME to KEY's value in the env file FILE (its last KEY=VALUE
// line; the value as written), then execs the rest. A missing file or key
// that is not optional fails the start, as the kubelet fails the container.
const envFileScript = `while [ "$1" != -- ]; do
  f=$1 k=$2 n=$3 o=$4; shift 4
  if v=$(awk -v k="$k" 'index($0, k "=") == 1 { v = substr($0, length(k) + 2); found = 1 } END { if (!found) exit 3; printf "%s", v }' "$f" 2>/dev/null); then
    export "$n=$v"
  elif [ "$o" = required ]; then
    echo "fileKeyRef: no key $k in env file $f" >&2; exit 1
  fi
done
shift
exec "$@"`

// withEnvFiles wraps argv in envFileScript for the container's fileKeyRefs.
func withEnvFiles(name string, argv []string, files []envFromFile) []string {
	if len(files) == 0 {
		return argv
	}
	out := []string{"/bin/sh", "-c", envFileScript, name}
	for _, f := range files {
		o := "required"
		if f.Optional {
			o = "optional"
		}
		out = append(out, f.File, f.Key, f.Name, o)
	}
	return append(append(out, "--"), argv...)
}
