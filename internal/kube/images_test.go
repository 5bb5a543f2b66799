package kube

import (
	"slices"
	"strings"
	"testing"
)

func TestParseImageConfig(t *testing.T) {
	cases := []struct {
		name, in string
		want     ImageConfig
		err      string
	}{
		{"oci", `{"config": {"Env": ["A=1"], "Entrypoint": ["/e"], "Cmd": ["c"], "WorkingDir": "/w", "User": "app"}}`,
			ImageConfig{Env: []string{"A=1"}, Entrypoint: []string{"/e"}, Cmd: []string{"c"}, WorkingDir: "/w", User: "app"}, ""},
		{"podman inspect", `[{"Id": "x", "Config": {"Env": ["FOO=bar"], "WorkingDir": "/tmp"}}]`,
			ImageConfig{Env: []string{"FOO=bar"}, WorkingDir: "/tmp"}, ""},
		{"no config", `{}`, ImageConfig{}, ""},
		{"two images", `[{}, {}]`, ImageConfig{}, "want one image, found 2"},
		{"bad env", `{"config": {"Env": ["NOEQUALS"]}}`, ImageConfig{}, "not KEY=VALUE"},
		{"not json", `nope`, ImageConfig{}, "want an OCI image config"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseImageConfig("f.json", []byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "f.json") {
					t.Fatalf("error %v, want one naming f.json and %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Env, c.want.Env) || !slices.Equal(got.Entrypoint, c.want.Entrypoint) || !slices.Equal(got.Cmd, c.want.Cmd) ||
				got.WorkingDir != c.want.WorkingDir || got.User != c.want.User {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// Kubernetes' rules: command replaces Entrypoint and drops Cmd; args
// replace Cmd only.
func TestImageArgv(t *testing.T) {
	img := &Image{Config: ImageConfig{Entrypoint: []string{"/e"}, Cmd: []string{"c1", "c2"}}}
	cases := []struct {
		name          string
		command, args []string
		want          []string
	}{
		{"image's", nil, nil, []string{"/e", "c1", "c2"}},
		{"args", nil, []string{"a"}, []string{"/e", "a"}},
		{"command", []string{"/x"}, nil, []string{"/x"}},
		{"both", []string{"/x"}, []string{"a"}, []string{"/x", "a"}},
	}
	for _, c := range cases {
		e, a := imageArgv(&Container{Command: c.command, Args: c.args}, img)
		if got := append(slices.Clone(e), a...); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestImageUser(t *testing.T) {
	img := &Image{Ref: "r", Passwd: []byte("root:x:0:0::/root:/bin/sh\napp:x:1234:99:app:/home/app:/bin/sh\n"), Group: []byte("staff:x:50:\n")}
	for in, want := range map[string]string{"": "", "app": "1234:99", "1234": "1234:99", "77": "77:0", "app:staff": "1234:50", "app:7": "1234:7"} {
		img.Config.User = in
		got, err := imageUser(img)
		if err != nil || got != want {
			t.Errorf("User %q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"nobody", "app:nogroup"} {
		img.Config.User = in
		if _, err := imageUser(img); err == nil || !strings.Contains(err.Error(), "image r") {
			t.Errorf("User %q: %v, want an error naming the image", in, err)
		}
	}
}

func FuzzParseImageConfig(f *testing.F) {
	f.Add([]byte(`{"config": {"Env": ["A=1"], "Entrypoint": ["/e"], "User": "1:2"}}`))
	f.Add([]byte(`[{"Config": {"WorkingDir": "/tmp"}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseImageConfig("fuzz", b)
		if err != nil {
			return
		}
		for _, kv := range c.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				t.Fatalf("accepted env entry %q", kv)
			}
		}
		img := &Image{Ref: "fuzz", Config: c, Passwd: b, Group: b}
		_, _ = imageUser(img)
	})
}
