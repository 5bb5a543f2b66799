package config

import (
	"slices"
	"strings"
	"testing"
)

// The values are systemd.exec(5)'s LimitX= syntax: one value or soft:hard,
// infinity, base-1024 suffixes for sizes, time spans for cpu (seconds by
// default, rounded up) and rttime (microseconds by default), and nice
// either signed (a nice value) or raw (0..40).
func TestParseRlimit(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		soft, hard uint64
	}{
		{"nofile", "1024", 1024, 1024},
		{"nofile", "1024:4096", 1024, 4096},
		{"nofile", "4096:infinity", 4096, RlimInfinity},
		{"nproc", "unlimited", RlimInfinity, RlimInfinity},
		{"as", "4G:16G", 4 << 30, 16 << 30},
		{"memlock", "64K", 64 << 10, 64 << 10},
		{"core", "0", 0, 0},
		{"stack", "8M", 8 << 20, 8 << 20},
		{"msgqueue", "819200", 819200, 819200},
		{"fsize", "1E", 1 << 60, 1 << 60},
		{"cpu", "10", 10, 10},
		{"cpu", "1min 30s", 90, 90},
		{"cpu", "1500ms", 2, 2}, // rounded up to whole seconds
		{"cpu", "1h:infinity", 3600, RlimInfinity},
		{"rttime", "500", 500, 500},
		{"rttime", "2s", 2_000_000, 2_000_000},
		{"nice", "-5", 25, 25},
		{"nice", "+19", 1, 1},
		{"nice", "0", 0, 0},
		{"nice", "40", 40, 40},
		{"rtprio", "50", 50, 50},
	} {
		r, msg := ParseRlimit(tc.name, tc.in)
		if msg != "" || r.Soft != tc.soft || r.Hard != tc.hard || r.Name != tc.name {
			t.Errorf("%s %q = %+v %q, want %d:%d", tc.name, tc.in, r, msg, tc.soft, tc.hard)
			continue
		}
		back, msg := ParseRlimit(tc.name, FormatRlimit(r))
		if msg != "" || back != r {
			t.Errorf("%s %q formats as %q, which reads back as %+v %q", tc.name, tc.in, FormatRlimit(r), back, msg)
		}
	}
	for _, tc := range []struct{ name, in, msg string }{
		{"nofile", "64K", "invalid number"},
		{"nofile", "4096:1024", "above the hard limit"},
		{"nofile", "", "empty limit"},
		{"nofile", "1:2:3", "invalid number"},
		{"nofile", "-1", "invalid number"},
		{"as", "512Mi", "Kubernetes"},
		{"as", "16Z", "invalid size"},
		{"as", "20E", "too large"},
		{"cpu", "10 parsecs", "unknown unit"},
		{"cpu", "10 20", "must stand alone"},
		{"nice", "-21", "out of range"},
		{"nice", "41", "out of range"},
		{"nice", "x", "invalid nice"},
		{"bogus", "1", "unknown limit"},
	} {
		if _, msg := ParseRlimit(tc.name, tc.in); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s %q: message %q, want it to contain %q", tc.name, tc.in, msg, tc.msg)
		}
	}
}

func TestLimitsAndPrivileges(t *testing.T) {
	cfg := mustParse(t, `processes:
  web:
    command: x
    user: "1000:1000"
    limits: {nofile: 1024:4096, core: 0, as: 1G, nice: -5}
    umask: "0027"
    no_new_privs: true
    capabilities: {ambient: [CAP_NET_RAW, CAP_NET_BIND_SERVICE, CAP_NET_RAW]}
  plain: {command: x, umask: 0o077}
`, nil)
	p := cfg.Processes["web"]
	want := []Rlimit{{"core", 0, 0}, {"nofile", 1024, 4096}, {"as", 1 << 30, 1 << 30}, {"nice", 25, 25}}
	if !slices.Equal(p.Limits, want) {
		t.Errorf("limits = %+v, want %+v (in the kernel's order)", p.Limits, want)
	}
	if p.Umask == nil || *p.Umask != 0o027 || !p.NoNewPrivs {
		t.Errorf("umask %v, no_new_privs %v", p.Umask, p.NoNewPrivs)
	}
	if !slices.Equal(p.AmbientCaps, []string{"CAP_NET_BIND_SERVICE", "CAP_NET_RAW"}) {
		t.Errorf("ambient = %v", p.AmbientCaps)
	}
	if q := cfg.Processes["plain"]; q.Umask == nil || *q.Umask != 0o077 || q.Limits != nil || q.NoNewPrivs || q.AmbientCaps != nil {
		t.Errorf("plain: %+v", q)
	}
	runErrCases(t, []errCase{
		{name: "unknown limit", src: "processes:\n  a: {command: x, limits: {nofiles: 10}}\n",
			pos: "procs.yaml:2:28", path: "processes.a.limits", msg: `unknown key "nofiles"`, hint: "nofile"},
		{name: "bad value", src: "processes:\n  a: {command: x, limits: {nofile: 64K}}\n",
			pos: "procs.yaml:2:36", path: "processes.a.limits.nofile", msg: `invalid number "64K"`, hint: "plain number"},
		{name: "soft above hard", src: "processes:\n  a: {command: x, limits: {stack: 16M:8M}}\n",
			pos: "procs.yaml:2:35", path: "processes.a.limits.stack", msg: "above the hard limit", hint: "soft:hard"},
		{name: "a list", src: "processes:\n  a: {command: x, limits: {core: [1]}}\n",
			pos: "procs.yaml:2:34", path: "processes.a.limits.core", msg: "expected a limit"},
		{name: "umask not octal", src: "processes:\n  a: {command: x, umask: \"0089\"}\n",
			pos: "procs.yaml:2:26", path: "processes.a.umask", msg: `invalid umask "0089"`, hint: "octal"},
		{name: "umask too big", src: "processes:\n  a: {command: x, umask: \"07777\"}\n",
			pos: "procs.yaml:2:26", path: "processes.a.umask", msg: "invalid umask"},
		{name: "no_new_privs", src: "processes:\n  a: {command: x, no_new_privs: yes please}\n",
			pos: "procs.yaml:2:33", path: "processes.a.no_new_privs", msg: "expected true or false"},
		{name: "unknown capability", src: "processes:\n  a: {command: x, user: \"1:1\", capabilities: {ambient: [net_raw]}}\n",
			pos: "procs.yaml:2:57", path: "processes.a.capabilities.ambient[0]", msg: `unknown capability "net_raw"`, hint: "CAP_NET_RAW"},
		{name: "ambient without user", src: "processes:\n  a: {command: x, capabilities: {ambient: [CAP_NET_RAW]}}\n",
			pos: "procs.yaml:2:34", path: "processes.a.capabilities.ambient", msg: "ambient capabilities need user:", hint: "set user:"},
	})
}

func TestWritePrivileges(t *testing.T) {
	mask := uint32(0o22)
	d := &Document{Processes: []*Process{{Name: "a", Command: []string{"x"}, User: &User{Spec: "1000"},
		Limits: []Rlimit{{"nproc", 100, 200}, {"nofile", 65536, 65536}, {"as", 1 << 30, RlimInfinity}},
		Umask:  &mask, NoNewPrivs: true, AmbientCaps: []string{"CAP_NET_BIND_SERVICE"}}}}
	out := string(Write(d))
	for _, want := range []string{"    limits:\n      nproc: \"100:200\"\n      nofile: 65536\n      as: \"1G:infinity\"\n", "    umask: \"0022\"\n",
		"    no_new_privs: true\n", "    capabilities: {ambient: [CAP_NET_BIND_SERVICE]}\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("written document lacks %q:\n%s", want, out)
		}
	}
	cfg, err := Parse("procs.yaml", []byte(out), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("written document does not load: %v\n%s", err, out)
	}
	p := cfg.Processes["a"]
	if !slices.Equal(p.Limits, []Rlimit{{"nproc", 100, 200}, {"nofile", 65536, 65536}, {"as", 1 << 30, RlimInfinity}}) || *p.Umask != mask || !p.NoNewPrivs {
		t.Errorf("loaded back %+v", p)
	}
}

// FuzzParseRlimit: every limit parses or is refused with a message, and
// what parses formats to text that parses to the same limit.
func FuzzParseRlimit(f *testing.F) {
	for _, s := range []string{"1024", "1:2", "infinity", "4G:16G", "1min 30s", "-5", "+19", "40", "64Ki", "1E", "500ms:2s", "9999999999999999999E"} {
		for _, n := range []string{"nofile", "as", "cpu", "rttime", "nice"} {
			f.Add(n, s)
		}
	}
	f.Fuzz(func(t *testing.T, name, s string) {
		r, msg := ParseRlimit(name, s)
		if msg != "" {
			if r != (Rlimit{}) {
				t.Fatalf("%s %q: refused (%s) but returned %+v", name, s, msg, r)
			}
			return
		}
		if r.Soft > r.Hard {
			t.Fatalf("%s %q: soft %d above hard %d", name, s, r.Soft, r.Hard)
		}
		back, msg := ParseRlimit(name, FormatRlimit(r))
		if msg != "" || back != r {
			t.Fatalf("%s %q = %+v formats as %q, read back as %+v %q", name, s, r, FormatRlimit(r), back, msg)
		}
	})
}
