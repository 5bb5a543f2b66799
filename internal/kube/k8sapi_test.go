package kube

// These tests hold kube's own types to the real Kubernetes API (k8s.io/api,
// a test-only dependency: the run path does not link it, see
// docs/BENCHMARKS.md). They check that every type lists exactly the API's
// fields, and that generated manifests decode strictly into the API's types.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// kind, refusing unknown fields.
func strictAPI(t *testing.T, manifest []byte) []string {
	t.Helper()
	var kinds []string
	dec := yaml.NewDecoder(bytes.NewReader(manifest))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return kinds
		}
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var obj any
		switch doc["kind"] {
		case "Pod":
			obj = &corev1.Pod{}
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "Job":
			obj = &batchv1.Job{}
		default:
			t.Fatalf("unexpected kind %v", doc["kind"])
		}
		jd := json.NewDecoder(bytes.NewReader(js))
		jd.DisallowUnknownFields()
		if err := jd.Decode(obj); err != nil {
			t.Fatalf("%v does not decode strictly into %T: %v\n%s", doc["kind"], obj, err, manifest)
		}
		kinds = append(kinds, doc["kind"].(string))
	}
}

func TestGeneratedDecodeIntoTheAPI(t *testing.T) {
	cfg, raw := genConfig(t, genProcs)
	for _, shape := range []string{"fat", "sidecars"} {
		for _, kind := range []string{"Pod", "Deployment", "Job"} {
			g, err := Generate(cfg, GenerateOptions{Name: "shop", Shape: shape, Kind: kind, Image: "shop:1", Raw: raw})
			if err != nil {
				t.Fatal(err)
			}
			kinds := strictAPI(t, g.Manifest)
			if kinds[len(kinds)-1] != kind {
				t.Errorf("%s/%s: kinds %q", shape, kind, kinds)
			}
		}
	}
	// And the test manifests users write, as a cross-check of the decoder:
	// what the API decodes, kube decodes too.
	g, _ := Generate(cfg, GenerateOptions{Name: "shop", Shape: "sidecars", Raw: raw})
	var pod corev1.Pod
	docs := bytes.Split(g.Manifest, []byte("\n---\n"))
	var m map[string]any
	_ = yaml.Unmarshal(docs[len(docs)-1], &m)
	js, _ := json.Marshal(m)
	if err := json.Unmarshal(js, &pod); err != nil {
		t.Fatal(err)
	}
	if n := len(pod.Spec.InitContainers); n != 3 || pod.Spec.InitContainers[0].RestartPolicy == nil ||
		*pod.Spec.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("init containers as the API reads them: %+v", pod.Spec.InitContainers)
	}
}
