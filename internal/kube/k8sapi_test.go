package kube

// These tests hold kube's own types to the real Kubernetes API (k8s.io/api,
// a test-only dependency: the run path does not link it, see
// docs/BENCHMARKS.md). They check that every type lists exactly the API's
// fields, and that generated manifests decode strictly into the API's types.

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// jsonFields lists the JSON field names of an API type, inlined structs
// flattened.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			out = append(out, jsonFields(ft)...)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func yamlFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func diff(a, b []string) []string {
	var d []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			d = append(d, x)
		}
	}
	return d
}

func TestTypesMatchTheAPI(t *testing.T) {
	pairs := []struct {
		ours, api any
	}{
		{PodSpec{}, corev1.PodSpec{}},
		{Container{}, corev1.Container{}},
		{Probe{}, corev1.Probe{}},
		{ObjectMeta{}, metav1.ObjectMeta{}},
		{Volume{}, corev1.Volume{}},
		{VolumeMount{}, corev1.VolumeMount{}},
		{EnvVar{}, corev1.EnvVar{}},
		{EnvVarSource{}, corev1.EnvVarSource{}},
		{EnvFromSource{}, corev1.EnvFromSource{}},
		{ContainerPort{}, corev1.ContainerPort{}},
		{SecurityContext{}, corev1.SecurityContext{}},
		{PodSecurityContext{}, corev1.PodSecurityContext{}},
		{Lifecycle{}, corev1.Lifecycle{}},
		{LifecycleHandler{}, corev1.LifecycleHandler{}},
		{HTTPGetAction{}, corev1.HTTPGetAction{}},
		{HTTPHeader{}, corev1.HTTPHeader{}},
		{TCPSocketAction{}, corev1.TCPSocketAction{}},
		{ExecAction{}, corev1.ExecAction{}},
		{SleepAction{}, corev1.SleepAction{}},
		{KeyToPath{}, corev1.KeyToPath{}},
		{ConfigMapVolume{}, corev1.ConfigMapVolumeSource{}},
		{SecretVolume{}, corev1.SecretVolumeSource{}},
		{HostPath{}, corev1.HostPathVolumeSource{}},
		{EmptyDir{}, corev1.EmptyDirVolumeSource{}},
		{Resources{}, corev1.ResourceRequirements{}},
		{KeyRef{}, corev1.ConfigMapKeySelector{}},
		{KeyRef{}, corev1.SecretKeySelector{}},
		{NameRef{}, corev1.ConfigMapEnvSource{}},
		{FieldRef{}, corev1.ObjectFieldSelector{}},
		{ResourceFieldRef{}, corev1.ResourceFieldSelector{}},
		{PodTemplate{}, corev1.PodTemplateSpec{}},
		{DownwardAPIVolume{}, corev1.DownwardAPIVolumeSource{}},
		{DownwardAPIFile{}, corev1.DownwardAPIVolumeFile{}},
		{ProjectedVolume{}, corev1.ProjectedVolumeSource{}},
		{VolumeProjection{}, corev1.VolumeProjection{}},
		{ObjectProjection{}, corev1.ConfigMapProjection{}},
		{ObjectProjection{}, corev1.SecretProjection{}},
		{DownwardAPIProjection{}, corev1.DownwardAPIProjection{}},
		{TokenProjection{}, corev1.ServiceAccountTokenProjection{}},
		{FileKeyRef{}, corev1.FileKeySelector{}},
		{PodOS{}, corev1.PodOS{}},
		{RestartRule{}, corev1.ContainerRestartRule{}},
		{RestartRuleExitCodes{}, corev1.ContainerRestartRuleOnExitCodes{}},
	}
	for _, p := range pairs {
		ours, api := yamlFields(reflect.TypeOf(p.ours)), jsonFields(reflect.TypeOf(p.api))
		if missing := diff(api, ours); len(missing) > 0 {
			t.Errorf("%T lacks the API's fields %q (they would be refused as unknown)", p.ours, missing)
		}
		if extra := diff(ours, api); len(extra) > 0 {
			t.Errorf("%T has fields %q that %T does not", p.ours, extra, p.api)
		}
	}
	specs := map[string]any{
		"Deployment": appsv1.DeploymentSpec{}, "ReplicaSet": appsv1.ReplicaSetSpec{}, "StatefulSet": appsv1.StatefulSetSpec{},
		"DaemonSet": appsv1.DaemonSetSpec{}, "Job": batchv1.JobSpec{}, "CronJob": batchv1.CronJobSpec{},
	}
	union := yamlFields(reflect.TypeOf(WorkloadSpec{}))
	for kind, spec := range specs {
		api := jsonFields(reflect.TypeOf(spec))
		ours := slices.Sorted(slices.Values(allowedSpecKeys[kind]))
		if !slices.Equal(ours, api) {
			t.Errorf("%s spec keys: missing %q, extra %q", kind, diff(api, ours), diff(ours, api))
		}
		if missing := diff(api, union); len(missing) > 0 {
			t.Errorf("WorkloadSpec lacks %s fields %q", kind, missing)
		}
	}
}

// strictAPI decodes every document of a manifest into the API type of its
// kind as the API machinery does: through sigs.k8s.io/yaml, which reads
// YAML 1.1 (go-yaml v2), refusing unknown and duplicate fields. It returns
// the decoded objects.
func strictAPI(t *testing.T, manifest []byte) []any {
	t.Helper()
	var objs []any
	for _, doc := range bytes.Split(manifest, []byte("\n---\n")) {
		doc = append(doc, '\n') // the separator took the document's last newline
		var tm metav1.TypeMeta
		if err := sigsyaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		var obj any
		switch tm.Kind {
		case "Pod":
			obj = &corev1.Pod{}
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "Job":
			obj = &batchv1.Job{}
		default:
			t.Fatalf("unexpected kind %q", tm.Kind)
		}
		if err := sigsyaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("%s does not decode strictly into %T: %v\n%s", tm.Kind, obj, err, manifest)
		}
		objs = append(objs, obj)
	}
	return objs
}

func kindOf(obj any) string { return reflect.TypeOf(obj).Elem().Name() }

// podSpec returns the pod spec of a decoded workload.
func podSpec(obj any) *corev1.PodSpec {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.Spec
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec
	case *batchv1.Job:
		return &o.Spec.Template.Spec
	}
	return nil
}

func TestGeneratedDecodeIntoTheAPI(t *testing.T) {
	cfg, raw := genConfig(t, genProcs)
	for _, shape := range []string{"fat", "sidecars"} {
		for _, kind := range []string{"Pod", "Deployment", "Job"} {
			g, err := Generate(cfg, GenerateOptions{Name: "shop", Shape: shape, Kind: kind, Image: "shop:1", Raw: raw})
			if err != nil {
				t.Fatal(err)
			}
			objs := strictAPI(t, g.Manifest)
			if k := kindOf(objs[len(objs)-1]); k != kind {
				t.Errorf("%s/%s: last kind %s", shape, kind, k)
			}
		}
	}
	// The API reads the sidecars as native sidecars.
	g, _ := Generate(cfg, GenerateOptions{Name: "shop", Shape: "sidecars", Raw: raw})
	objs := strictAPI(t, g.Manifest)
	spec := podSpec(objs[len(objs)-1])
	if n := len(spec.InitContainers); n != 3 || spec.InitContainers[0].RestartPolicy == nil ||
		*spec.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("init containers as the API reads them: %+v", spec.InitContainers)
	}
	// stopSignal needs spec.os.name (the API refuses it otherwise).
	if spec.InitContainers[0].Lifecycle.StopSignal == nil || spec.OS == nil || spec.OS.Name != corev1.Linux {
		t.Errorf("stopSignal %v with spec.os %+v, want SIGINT with os.name linux", spec.InitContainers[0].Lifecycle.StopSignal, spec.OS)
	}
}

// yaml11Strings are strings a YAML 1.1 reader takes for something else
// when they are written plain.
var yaml11Strings = []string{"no", "on", "yes", "off", "y", "n", "Y", "N", "NO", "On", "True", "true", "false",
	"null", "Null", "~", "", "1", "-1", "+1", "017", "0o17", "0x1F", "0b101", "1_000", "1e3", "1.5", ".5", "1:20", "-1:20:30.5",
	".inf", "-.Inf", ".NaN", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "=", "<<", "1.2.3", "v1", "--flag", "-", "a b"}

// Strings a YAML 1.1 reader would turn into booleans, numbers or null reach
// the API as the same strings, in command, args and env of both shapes.
func TestGeneratedYAML11Strings(t *testing.T) {
	var procs strings.Builder
	procs.WriteString("listen: \":9464\"\nprocesses:\n  db: {command: [db], ready: {tcp: \"127.0.0.1:5432\"}}\n  app:\n    depends_on: [db]\n    command:\n")
	for _, s := range yaml11Strings {
		fmt.Fprintf(&procs, "      - %q\n", s)
	}
	procs.WriteString("    env:\n")
	for i, s := range yaml11Strings {
		fmt.Fprintf(&procs, "      V%d: %q\n", i, s)
	}
	cfg, raw := genConfig(t, procs.String())
	for _, shape := range []string{"fat", "sidecars"} {
		g, err := Generate(cfg, GenerateOptions{Name: "shop", Shape: shape, Raw: raw})
		if err != nil {
			t.Fatal(err)
		}
		objs := strictAPI(t, g.Manifest)
		if shape == "fat" {
			cm := objs[0].(*corev1.ConfigMap)
			if cm.Data["procs.yaml"] != procs.String() {
				t.Errorf("fat: the ConfigMap's procs.yaml differs:\n%q\nwant\n%q", cm.Data["procs.yaml"], procs.String())
			}
			continue
		}
		spec := podSpec(objs[len(objs)-1])
		app := spec.Containers[0]
		if !slices.Equal(app.Command, yaml11Strings) {
			t.Errorf("command as the API reads it:\n got %q\nwant %q\n%s", app.Command, yaml11Strings, g.Manifest)
		}
		for i, s := range yaml11Strings {
			if i >= len(app.Env) || app.Env[i].Name != fmt.Sprintf("V%d", i) || app.Env[i].Value != s {
				t.Errorf("env V%d as the API reads it: %+v, want %q", i, app.Env[min(i, len(app.Env)-1)], s)
			}
		}
	}
}
