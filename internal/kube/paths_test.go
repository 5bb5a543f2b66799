package kube

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Manifest data that would become a path leading out of its volume is
// refused, as the API server refuses it, with the manifest's position.
func TestHostilePathsRefused(t *testing.T) {
	cm := func(data string) string {
		return "---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, " + data + "}\n"
	}
	sec := func(data string) string {
		return "---\n{apiVersion: v1, kind: Secret, metadata: {name: s}, " + data + "}\n"
	}
	pod := func(volumes, mounts string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: " + volumes +
			"\n  containers: [{name: app, command: [x], volumeMounts: " + mounts + "}]\n"
	}
	cases := []struct{ name, manifest, want string }{
		{"configMap key traversal", pod(`[{name: v, configMap: {name: c}}]`, `[{name: v, mountPath: /v}]`) +
			cm(`data: {"../../../../etc/cron.d/x": "* * * * * root id"}`), `pod.yaml:8:63: ConfigMap "c": data key "../../../../etc/cron.d/x"`},
		{"configMap binaryData key", pod(`[{name: v, configMap: {name: c}}]`, `[{name: v, mountPath: /v}]`) +
			cm(`binaryData: {"a/b": eA==}`), `binaryData key "a/b"`},
		{"secret data key", pod(`[{name: v, secret: {secretName: s}}]`, `[{name: v, mountPath: /v}]`) +
			sec(`data: {"../x": eA==}`), `data key "../x"`},
		{"secret stringData key", pod(`[{name: v, secret: {secretName: s}}]`, `[{name: v, mountPath: /v}]`) +
			sec(`stringData: {"..hidden": x}`), `must not start with '..'`},
		{"key dot-dot", pod(`[{name: v, configMap: {name: c}}]`, `[{name: v, mountPath: /v}]`) +
			cm(`data: {"..": x}`), `must not be '.' or '..'`},
		{"volume name traversal", pod(`[{name: "../../../etc", emptyDir: {}}]`, `[{name: "../../../etc", mountPath: /v}]`),
			`name "../../../etc" is not a DNS label`},
		{"volume name slash", pod(`[{name: "a/b", configMap: {name: c}}]`, `[{name: "a/b", mountPath: /v}]`) + cm(`data: {k: v}`),
			`not a DNS label`},
		{"items path traversal", pod(`[{name: v, configMap: {name: c, items: [{key: k, path: "a/../../x"}]}}]`, `[{name: v, mountPath: /v}]`) +
			cm(`data: {k: v}`), `must not contain '..'`},
		{"items path absolute", pod(`[{name: v, configMap: {name: c, items: [{key: k, path: /etc/x}]}}]`, `[{name: v, mountPath: /v}]`) +
			cm(`data: {k: v}`), `must be relative`},
		{"items path reserved", pod(`[{name: v, configMap: {name: c, items: [{key: k, path: ..data/x}]}}]`, `[{name: v, mountPath: /v}]`) +
			cm(`data: {k: v}`), `must not start with '..'`},
		{"subPath traversal", pod(`[{name: v, emptyDir: {}}]`, `[{name: v, mountPath: /v, subPath: "a/../../b"}]`),
			`subPath "a/../../b" must not contain '..'`},
		{"subPath absolute", pod(`[{name: v, emptyDir: {}}]`, `[{name: v, mountPath: /v, subPath: /etc}]`),
			`must be relative`},
		{"mountPath backstep", pod(`[{name: v, emptyDir: {}}]`, `[{name: v, mountPath: "/v/../etc"}]`),
			`mountPath "/v/../etc" must not contain '..'`},
		{"hostPath backstep", pod(`[{name: v, hostPath: {path: "/srv/../etc"}}]`, `[{name: v, mountPath: /v}]`),
			`hostPath.path "/srv/../etc" must not contain '..'`},
		{"duplicate volume", pod(`[{name: v, emptyDir: {}}, {name: v, emptyDir: {}}]`, `[{name: v, mountPath: /v}]`),
			`two volumes named "v"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := playErr(c.manifest, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// Keys read from --from-dir are file names nobody checked: those the API
// server would refuse are refused as file names in a volume.
func TestFromDirKeysChecked(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c", "..evil"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := playErr("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: [{name: v, configMap: {name: c}}]\n"+
		"  containers: [{name: app, command: [x], volumeMounts: [{name: v, mountPath: /v}]}]\n", Options{FromDir: dir})
	if err == nil || !strings.Contains(err.Error(), `key "..evil"`) {
		t.Fatalf("err = %v, want the key ..evil refused", err)
	}
}

// A symlink planted in a volume is never followed when its files are
// written: the write fails and nothing appears outside.
func TestMaterialiseRefusesSymlinks(t *testing.T) {
	root := t.TempDir()
	vols, outside := filepath.Join(root, "volumes"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(vols, "v"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(vols, "v", "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "f"), filepath.Join(vols, "v", "f")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"sub/x", "f"} {
		err := Materialise([]*VolumePlan{{Name: "v", Kind: "configMap", Source: filepath.Join(vols, "v"),
			Files: map[string]File{rel: {Data: "x", Mode: 0o644}}}})
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: err = %v, want a refused symlink", rel, err)
		}
	}
	// The volume directory itself planted as a symlink.
	if err := os.Symlink(outside, filepath.Join(vols, "w")); err != nil {
		t.Fatal(err)
	}
	err := Materialise([]*VolumePlan{{Name: "w", Kind: "emptyDir", Source: filepath.Join(vols, "w")}})
	if err == nil {
		t.Error("an emptyDir planted as a symlink was accepted")
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("outside: %v %v, want mode 0755 untouched", fi.Mode(), err)
	}
	assertOnlyUnder(t, root, vols, outside)
}

// A subPath through a symlink planted in the volume is refused, and a
// missing subPath is created inside the volume.
func TestSubPathRefusesSymlinks(t *testing.T) {
	root := t.TempDir()
	vol, outside := filepath.Join(root, "vol"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(vol, "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(vol, "link")); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"link", "link/deeper", "real/../link"} {
		if _, _, err := openSource(Mount{Source: vol, SubPath: sub, Volume: "v"}); err == nil {
			t.Errorf("subPath %q through a symlink was opened", sub)
		}
	}
	src, done, err := openSource(Mount{Source: vol, SubPath: "real/new/dir", Volume: "v"})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if target, err := os.Readlink(src); err != nil || target != filepath.Join(vol, "real/new/dir") {
		t.Errorf("subPath opened as %q (%v), want %s", target, err, filepath.Join(vol, "real/new/dir"))
	}
	assertOnlyUnder(t, root, vol, outside)
}

// assertOnlyUnder fails if anything under root lies outside allowed, other
// than allowed's parents and the directory outside.
func assertOnlyUnder(t *testing.T, root, allowed, outside string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == root || p == allowed || strings.HasPrefix(p, allowed+"/") || strings.HasPrefix(allowed, p+"/") || p == outside {
			return nil
		}
		t.Errorf("%s was created outside %s", p, allowed)
		return nil
	})
}

// FuzzPlayVolumes: whatever the manifest says of volume names, keys,
// items paths (configMap, secret, downwardAPI and projected volumes),
// subPaths and mount paths, translating it and materialising
// its volumes creates or changes nothing outside the run's volume
// directory, even with a symlink planted in each volume beforehand.
func FuzzPlayVolumes(f *testing.F) {
	f.Add("v", "../../../../x", "", "", "/data", false, uint8(0))
	f.Add("../../x", "k", "", "", "/data", false, uint8(0))
	f.Add("v", "k", "a/../../x", "", "/data", true, uint8(1))
	f.Add("v", "k", "link/x", "", "/data", true, uint8(0))
	f.Add("v", "k", "", "link", "/data", false, uint8(1))
	f.Add("v", "..data", "ok", "../x", "/d/../e", true, uint8(0))
	f.Add("cfg", "app.conf", "conf/app.conf", "conf", "/etc/app", true, uint8(0))
	f.Add("podinfo", "k", "link/labels", "", "/etc/podinfo", true, uint8(2))
	f.Add("podinfo", "k", "../labels", "", "/etc/podinfo", true, uint8(2))
	f.Add("kube-api-access-x", "ca.crt", "link/token", "", "/var/run/secrets", true, uint8(3))
	f.Add("kube-api-access-x", "../ca.crt", "..2026/token", "link", "/var/run/secrets", false, uint8(3))
	// kind: 0 configMap, 1 secret, 2 downwardAPI (itemPath is a file's
	// path), 3 projected (configMap with key and items, downwardAPI and
	// serviceAccountToken at itemPath).
	f.Fuzz(func(t *testing.T, vol, key, itemPath, subPath, mountPath string, useItems bool, kind uint8) {
		root := t.TempDir()
		volDir := filepath.Join(root, "a", "b", "c", "run", "volumes")
		outside := filepath.Join(root, "outside")
		if err := os.MkdirAll(outside, 0o755); err != nil {
			t.Fatal(err)
		}
		source := map[string]any{"name": "src"}
		if useItems {
			source["items"] = []map[string]any{{"key": key, "path": itemPath}}
		}
		volume := map[string]any{"name": vol}
		objKind, dataKey := "ConfigMap", "data"
		switch kind % 4 {
		case 0:
			volume["configMap"] = source
		case 1:
			source["secretName"], objKind, dataKey = "src", "Secret", "stringData"
			delete(source, "name")
			volume["secret"] = source
		case 2:
			volume["downwardAPI"] = map[string]any{"items": []any{
				map[string]any{"path": itemPath, "fieldRef": map[string]any{"fieldPath": "metadata.labels"}}}}
		case 3:
			volume["projected"] = map[string]any{"sources": []any{
				map[string]any{"configMap": source},
				map[string]any{"downwardAPI": map[string]any{"items": []any{
					map[string]any{"path": itemPath + "-ns", "fieldRef": map[string]any{"fieldPath": "metadata.namespace"}}}}},
				map[string]any{"serviceAccountToken": map[string]any{"path": itemPath + "-token"}},
			}}
		}
		mount := map[string]any{"name": vol, "mountPath": mountPath}
		if subPath != "" {
			mount["subPath"] = subPath
		}
		pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
			"spec": map[string]any{
				"volumes":    []any{volume, map[string]any{"name": "scratch", "emptyDir": map[string]any{}}},
				"containers": []any{map[string]any{"name": "app", "command": []string{"x"}, "volumeMounts": []any{mount}}},
			}}
		obj := map[string]any{"apiVersion": "v1", "kind": objKind, "metadata": map[string]any{"name": "src"},
			dataKey: map[string]string{key: "data"}}
		a, err := yaml.Marshal(pod)
		if err != nil {
			return
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return
		}
		m, err := Decode("pod.yaml", append(append(a, "---\n"...), b...))
		if err != nil {
			return
		}
		w, err := m.Pick("")
		if err != nil {
			return
		}
		res, err := Translate(m, w, Options{Self: "/usr/bin/podvisor", VolumeDir: volDir})
		if err != nil {
			return
		}
		for _, mt := range res.Mounts {
			if p := mt.sourcePath(); !strings.HasPrefix(p, volDir+"/") {
				t.Fatalf("mount source %s is outside %s", p, volDir)
			}
		}
		// Plant a symlink named "link" leading outside in every volume.
		for _, v := range res.Volumes {
			if err := os.MkdirAll(v.Source, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(v.Source, "link")); err != nil && !errors.Is(err, fs.ErrExist) {
				t.Fatal(err)
			}
		}
		_ = Materialise(res.Volumes)
		for _, mt := range res.Mounts {
			if _, done, err := openSource(mt); err == nil {
				done()
			}
		}
		assertOnlyUnder(t, root, volDir, outside)
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("%d entries written through a planted symlink into %s", len(ents), outside)
		}
		if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("outside's mode changed: %v %v", fi.Mode(), err)
		}
	})
}

// Under --volume-root, a link whose target lies beneath another volume's
// link (or a hostPath's directory) is made without following a symlink
// planted there: refused, naming it, and nothing appears outside; Unbind
// then removes what Link made, through the volume, without following.
func TestLinkRefusesPlantedSymlink(t *testing.T) {
	root := t.TempDir()
	host, outside, vroot := filepath.Join(root, "host"), filepath.Join(root, "outside"), filepath.Join(root, "vroot")
	for _, d := range []string{host, outside, filepath.Join(root, "vol")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(host, "dir")); err != nil {
		t.Fatal(err)
	}
	hostMount := Mount{Source: host, Target: vroot + "/h", Volume: "host", HostPath: true}
	for _, target := range []string{vroot + "/h/dir/sub", host + "/dir/sub"} {
		b, err := Link([]Mount{hostMount, {Source: filepath.Join(root, "vol"), Target: target, Volume: "vol"}})
		if err == nil || !strings.Contains(err.Error(), "/dir: is a symbolic link") {
			t.Errorf("%s: err = %v, want the planted link refused", target, err)
		}
		if errs := Unbind(b); len(errs) != 0 {
			t.Error(errs)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("%s: %v created through the planted link", target, ents)
		}
	}
	// Without the planted link: made inside the hostPath, removed after.
	if err := os.Remove(filepath.Join(host, "dir")); err != nil {
		t.Fatal(err)
	}
	b, err := Link([]Mount{hostMount, {Source: filepath.Join(root, "vol"), Target: vroot + "/h/dir/sub", Volume: "vol"}})
	if err != nil {
		t.Fatal(err)
	}
	if dest, err := os.Readlink(filepath.Join(host, "dir", "sub")); err != nil || dest != filepath.Join(root, "vol") {
		t.Errorf("link in the hostPath: %q %v", dest, err)
	}
	if errs := Unbind(b); len(errs) != 0 {
		t.Error(errs)
	}
	if ents, _ := os.ReadDir(host); len(ents) != 0 {
		t.Errorf("left in the hostPath: %v", ents)
	}
	if _, err := os.Lstat(vroot); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", vroot, err)
	}
}
