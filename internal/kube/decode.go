// Package kube translates Kubernetes manifests into podvisor's procs.yaml
// (kube play) and procs.yaml into manifests (kube generate). Everything here
// is pure: parsing, checking and translating; running is the CLI's job.
package kube

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
	"go.yaml.in/yaml/v3"
)

// Error is one problem in a manifest, at a position.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is every problem found, one per line.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Workload is the pod template of one workload object.
type Workload struct {
	Kind         string
	Name         string // the object's metadata.name
	Meta         ObjectMeta
	Spec         PodSpec
	BackoffLimit *int // Job and CronJob
	Line         int
	Ignored      []string // workload spec fields set that kube play ignores
	// StatefulSet: its volumeClaimTemplates' names and the ordinal of the
	// pod played (spec.ordinals.start).
	ClaimTemplates []string
	Ordinal        int
	// SpecNode is the pod spec as parsed, for the positions of Translate's
	// errors; nil when unknown.
	SpecNode *yaml.Node
	// ServerSet lists the fields the API server sets that the object holds
	// (it was taken from a cluster: kubectl get -o yaml), for one notice.
	ServerSet []string
}

// serverSetMeta are the metadata fields the API server sets or manages.
var serverSetMeta = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "ownerReferences", "finalizers", "selfLink", "generateName"}

// serverSet lists the server-set fields object n holds.
func serverSet(n *yaml.Node) []string {
	var out []string
	meta := mapValue(n, "metadata")
	for _, k := range serverSetMeta {
		if mapValue(meta, k) != nil {
			out = append(out, "metadata."+k)
		}
	}
	if st := mapValue(n, "status"); st != nil && st.ShortTag() != "!!null" {
		out = append(out, "status")
	}
	return out
}

// Manifest is a decoded manifest file.
type Manifest struct {
	File       string
	Workloads  []*Workload
	ConfigMaps map[string]map[string]string
	Secrets    map[string]map[string]string
	// Skipped lists the objects kube play does not use, as "Kind/name"
	// (Services, ServiceAccounts: they concern the cluster, not the pod).
	Skipped []string
}

var workloadKinds = []string{"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"}

// Decode parses every document of a manifest file (a List's items too),
// checking every field strictly. It returns all the errors it finds.
func Decode(file string, data []byte) (*Manifest, error) {
	m := &Manifest{File: file, ConfigMaps: map[string]map[string]string{}, Secrets: map[string]map[string]string{}}
	d := &decoder{file: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			d.errorf(nil, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
			break
		}
		if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
			continue // an empty document between separators
		}
		d.object(m, doc.Content[0])
	}
	if len(d.errs) == 0 && len(m.Workloads) == 0 {
		d.errorf(nil, "no workload found: want one of %s", strings.Join(workloadKinds, ", "))
	}
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return m, nil
}

type decoder struct {
	file string
	errs Errors
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	e := &Error{File: d.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// decode checks n strictly against v's type, then decodes it.
func (d *decoder) decode(n *yaml.Node, v any, where string) bool {
	before := len(d.errs)
	d.strict(n, reflect.TypeOf(v).Elem(), where)
	if len(d.errs) > before {
		return false
	}
	if err := n.Decode(v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, s := range te.Errors {
				d.errorf(n, "%s: %s", where, s)
			}
		} else {
			d.errorf(n, "%s: %v", where, err)
		}
		return false
	}
	return true
}

func (d *decoder) object(m *Manifest, n *yaml.Node) {
	var obj Object
	if !d.decode(n, &obj, "object") {
		return
	}
	switch obj.Kind {
	case "List":
		for i := range obj.Items {
			d.object(m, &obj.Items[i])
		}
	case "ConfigMap":
		d.checkKeys(n, obj.Kind, obj.Metadata.Name, "data", "binaryData")
		data := map[string]string{}
		for k, v := range obj.Data {
			data[k] = v
		}
		for k, v := range obj.BinaryData {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				d.errorf(n, "ConfigMap %q: binaryData.%s is not base64: %v", obj.Metadata.Name, k, err)
			}
			data[k] = string(b)
		}
		m.ConfigMaps[obj.Metadata.Name] = data
	case "Secret":
		d.checkKeys(n, obj.Kind, obj.Metadata.Name, "data", "stringData")
		data := map[string]string{}
		for k, v := range obj.Data {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				d.errorf(n, "Secret %q: data.%s is not base64: %v", obj.Metadata.Name, k, err)
			}
			data[k] = string(b)
		}
		for k, v := range obj.StringData {
			data[k] = v
		}
		m.Secrets[obj.Metadata.Name] = data
	case "Pod":
		w := &Workload{Kind: obj.Kind, Name: obj.Metadata.Name, Meta: obj.Metadata, Line: n.Line, ServerSet: serverSet(n), SpecNode: mapValue(n, "spec")}
		if obj.Spec.Kind == 0 {
			d.errorf(n, "Pod %q has no spec", obj.Metadata.Name)
			return
		}
		if d.decode(&obj.Spec, &w.Spec, "Pod.spec") {
			m.Workloads = append(m.Workloads, w)
		}
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob":
		d.workload(m, n, &obj)
	case "":
		d.errorf(n, "object without kind")
	default:
		// Services, ServiceAccounts and the like are about the cluster, not
		// the pod: skipped, as the caller's warning says.
		m.Skipped = append(m.Skipped, obj.Kind+"/"+obj.Metadata.Name)
	}
}

// checkKeys refuses the keys of a ConfigMap's or Secret's data maps that
// the API server refuses: a key becomes a file name in a volume.
func (d *decoder) checkKeys(n *yaml.Node, kind, name string, fields ...string) {
	for _, field := range fields {
		data := mapValue(n, field)
		if data == nil || data.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(data.Content); i += 2 {
			k := data.Content[i]
			if p := keyProblem(k.Value); p != "" {
				d.errorf(k, "%s %q: %s key %q %s (the API server refuses it; a key is a file name in a volume)", kind, name, field, k.Value, p)
			}
		}
	}
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func (d *decoder) workload(m *Manifest, n *yaml.Node, obj *Object) {
	kind := obj.Kind
	if obj.Spec.Kind == 0 {
		d.errorf(n, "%s %q has no spec", kind, obj.Metadata.Name)
		return
	}
	if !d.specKeys(&obj.Spec, kind) {
		return
	}
	var spec WorkloadSpec
	if !d.decode(&obj.Spec, &spec, kind+".spec") {
		return
	}
	w := &Workload{Kind: kind, Name: obj.Metadata.Name, Line: n.Line, BackoffLimit: spec.BackoffLimit, ServerSet: serverSet(n)}
	for i := 0; i+1 < len(obj.Spec.Content); i += 2 {
		switch k := obj.Spec.Content[i].Value; k {
		case "template", "jobTemplate", "backoffLimit", "selector", "volumeClaimTemplates", "ordinals":
		case "serviceName":
			if kind != "StatefulSet" {
				w.Ignored = append(w.Ignored, k)
			}
		default:
			w.Ignored = append(w.Ignored, k)
		}
	}
	if kind == "StatefulSet" {
		w.ClaimTemplates, w.Ordinal = claimTemplates(&spec.VolumeClaimTemplates), ordinalStart(&spec.Ordinals)
	}
	tmpl := spec.Template
	if kind == "CronJob" {
		if spec.JobTemplate == nil || spec.JobTemplate.Spec.Template == nil {
			d.errorf(&obj.Spec, "CronJob %q has no spec.jobTemplate.spec.template", obj.Metadata.Name)
			return
		}
		tmpl = spec.JobTemplate.Spec.Template
		w.BackoffLimit = spec.JobTemplate.Spec.BackoffLimit
	}
	if tmpl == nil {
		d.errorf(&obj.Spec, "%s %q has no spec.template", kind, obj.Metadata.Name)
		return
	}
	// The pod's metadata: the template's, named after the workload; the
	// workload's own annotations count for podvisor.dev/ keys too.
	w.Meta = tmpl.Metadata
	w.Meta.Name = obj.Metadata.Name
	if w.Meta.Namespace == "" {
		w.Meta.Namespace = obj.Metadata.Namespace
	}
	for k, v := range obj.Metadata.Annotations {
		if _, set := w.Meta.Annotations[k]; !set && strings.HasPrefix(k, "podvisor.dev/") {
			if w.Meta.Annotations == nil {
				w.Meta.Annotations = map[string]string{}
			}
			w.Meta.Annotations[k] = v
		}
	}
	w.Spec = tmpl.Spec
	if kind == "StatefulSet" {
		statefulSetPod(w, spec.ServiceName.Value)
	}
	if kind == "CronJob" {
		w.SpecNode = mapValue(mapValue(mapValue(mapValue(&obj.Spec, "jobTemplate"), "spec"), "template"), "spec")
	} else {
		w.SpecNode = mapValue(mapValue(&obj.Spec, "template"), "spec")
	}
	m.Workloads = append(m.Workloads, w)
}

// specKeys refuses spec keys that exist in the union WorkloadSpec but not in
// this kind (a Deployment with a schedule).
func (d *decoder) specKeys(spec *yaml.Node, kind string) bool {
	if spec.Kind != yaml.MappingNode {
		return true // decode reports the type
	}
	ok := true
	allowed := allowedSpecKeys[kind]
	for i := 0; i+1 < len(spec.Content); i += 2 {
		k := spec.Content[i]
		if !slices.Contains(allowed, k.Value) {
			d.errorf(k, "%s.spec: unknown field %q%s", kind, k.Value, suggest(k.Value, allowed))
			ok = false
		}
	}
	return ok
}

var (
	nodeType      = reflect.TypeOf(yaml.Node{})
	unmarshalType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// strict reports every mapping key of n that t does not define, with its
// position and a suggestion. Type mismatches are left to yaml's Decode.
func (d *decoder) strict(n *yaml.Node, t reflect.Type, where string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType || reflect.PointerTo(t).Implements(unmarshalType) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields := map[string]reflect.StructField{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			fields[name] = f
			names = append(names, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				d.errorf(k, "%s: unknown field %q%s", where, k.Value, suggest(k.Value, names))
				continue
			}
			d.strict(v, f.Type, where+"."+k.Value)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			d.strict(c, t.Elem(), fmt.Sprintf("%s[%d]", where, i))
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			d.strict(n.Content[i+1], t.Elem(), where+"."+n.Content[i].Value)
		}
	}
}

// suggest returns ` (did you mean "x"?)` for the closest known name, or a
// hint that podvisor knows the Kubernetes API's fields.
func suggest(got string, known []string) string {
	if best := config.Suggest(got, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (not a field of the Kubernetes API; check the spelling and indentation)"
}

// Pick returns the workload named name, or the only one when name is "".
func (m *Manifest) Pick(name string) (*Workload, error) {
	var names []string
	for _, w := range m.Workloads {
		if name != "" && w.Name == name {
			return w, nil
		}
		names = append(names, w.Kind+"/"+w.Name)
	}
	if name == "" && len(m.Workloads) == 1 {
		return m.Workloads[0], nil
	}
	if name == "" {
		return nil, &Error{File: m.File, Msg: fmt.Sprintf("%d workloads (%s): pick one with --name NAME", len(names), strings.Join(names, ", "))}
	}
	return nil, &Error{File: m.File, Msg: fmt.Sprintf("no workload named %q (have %s)", name, strings.Join(names, ", "))}
}

// statefulSetPod names the pod played as the StatefulSet controller names
// its pods: SET-ORDINAL (the first ordinal), with the pod-name and
// pod-index labels, and that name as its hostname, whatever the template
// says (the controller's initIdentity sets spec.hostname to the pod's
// name, and spec.subdomain to the set's serviceName). The claims keep the
// set's name (claims.go).
func statefulSetPod(w *Workload, serviceName string) {
	w.Meta.Name = fmt.Sprintf("%s-%d", w.Name, w.Ordinal)
	w.Spec.Hostname = yaml.Node{} // the pod's name: kube play's default hostname
	if serviceName != "" {        // the set's governing Service names the pod's domain
		w.Spec.Subdomain = serviceName
	}
	labels := make(map[string]string, len(w.Meta.Labels)+2)
	maps.Copy(labels, w.Meta.Labels)
	labels["statefulset.kubernetes.io/pod-name"] = w.Meta.Name
	labels["apps.kubernetes.io/pod-index"] = strconv.Itoa(w.Ordinal)
	w.Meta.Labels = labels
}
