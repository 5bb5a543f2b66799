package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestInterpolate(t *testing.T) {
	vars := env(map[string]string{"A": "x", "EMPTY": "", "SPACE": "a b", "DOLLAR": "$B"})
	cases := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "", want: ""},
		{in: "${A}", want: "x"},
		{in: "pre-${A}-post", want: "pre-x-post"},
		{in: "${A}${A}", want: "xx"},
		{in: "${SPACE}", want: "a b"},
		{in: "${EMPTY}", want: ""},
		{in: "${A:-d}", want: "x"},
		{in: "${UNSET:-d}", want: "d"},
		{in: "${EMPTY:-d}", want: "d"},
		{in: "${UNSET:-}", want: ""},
		{in: "${UNSET:-a b:-c}", want: "a b:-c"},
		{in: "${UNSET:-x}y}", want: "xy}"},
		{in: "${UNSET:-$HOME}", want: "$HOME"},
		{in: "${DOLLAR}", want: "$B"}, // values are not interpolated again
		{in: "$$", want: "$"},
		{in: "$${A}", want: "${A}"},
		{in: "$$$", want: "$$"},
		{in: "$$$${A}", want: "$${A}"},
		{in: "$$$$${A}", want: "$$x"},
		{in: "$HOME/bin", want: "$HOME/bin"},
		{in: "echo $1 $@ $(date)", want: "echo $1 $@ $(date)"},
		{in: "$", want: "$"},
		{in: "costs 5$", want: "costs 5$"},
		{in: "$ {A}", want: "$ {A}"},
		{in: "héllo ${A} wörld", want: "héllo x wörld"},
		{in: "${UNSET}", err: "variable UNSET is not set (give a default with ${UNSET:-value})"},
		{in: "a ${UNSET} ${A}", err: "variable UNSET is not set"},
		{in: "${", err: "unterminated ${"},
		{in: "x ${A", err: `unterminated ${ in "${A"`},
		{in: "${}", err: "invalid variable reference ${}"},
		{in: "${1A}", err: "invalid variable reference ${1A}"},
		{in: "${ A }", err: "invalid variable reference ${ A }"},
		{in: "${A-x}", err: "invalid variable reference ${A-x}"},
		{in: "${A:=x}", err: "invalid variable reference ${A:=x}"},
		{in: "${UNSET:-${A}}", err: "nested ${...} in the default of ${UNSET}"},
	}
	for _, tc := range cases {
		got, err := interpolate(tc.in, vars)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("interpolate(%q): unexpected error %v", tc.in, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("interpolate(%q) = %q, want %q", tc.in, got, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("interpolate(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.err)
		}
	}
}

// TestInterpolationScope checks which fields are interpolated: command, env
// values, working_dir, probe targets and stop.command, but not env_file
// contents, env keys, names or other settings.
func TestInterpolationScope(t *testing.T) {
	src := `env: {G: "${V}"}
processes:
  a:
    command: ["${V}", "$$V", "$V"]
    env: {E: "${V:-d}"}
    working_dir: /srv/${V}
    ready: {http: "http://${HOST}:80/"}
    live: {exec: "test -f ${V}"}
    stop: {command: [stop, "${V}"]}
  b:
    command: "echo ${V} $V"
    ready: {tcp: "${HOST}:1"}
    live: {file: "/run/${V}"}
  c:
    command: x
    ready: {log: "^${V}$"}
`
	cfg := mustParse(t, src, map[string]string{"V": "val", "HOST": "h"})
	a, b, c := cfg.Processes["a"], cfg.Processes["b"], cfg.Processes["c"]
	checks := []struct {
		what      string
		got, want any
	}{
		{"global env", cfg.Env, []string{"G=val"}},
		{"a.command", a.Command, []string{"val", "$V", "$V"}},
		{"a.env", a.Env, []string{"G=val", "E=val"}},
		{"a.working_dir", a.WorkingDir, "/srv/val"},
		{"a.ready.http", a.Ready.Target, "http://h:80/"},
		{"a.live.exec", a.Live.Command, []string{"/bin/sh", "-c", "test -f val"}},
		{"a.stop.command", a.Stop.Command, []string{"stop", "val"}},
		{"b.command", b.Command, []string{"/bin/sh", "-c", "echo val $V"}},
		{"b.ready.tcp", b.Ready.Target, "h:1"},
		{"b.live.file", b.Live.Target, "/run/val"},
		{"c.ready.log", c.Ready.Target, "^val$"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %q, want %q", ch.what, ch.got, ch.want)
		}
	}
	if !c.Ready.Regexp.MatchString("val") || c.Ready.Regexp.MatchString("xval") {
		t.Errorf("log regexp %v", c.Ready.Regexp)
	}

	// Values from the env file are taken literally.
	cfg = mustParse(t, "processes: {a: {command: x, env_file: testdata/literal.env}}\n", map[string]string{"V": "val"})
	if want := []string{"LITERAL=${V} $V %s"}; !reflect.DeepEqual(cfg.Processes["a"].Env, want) {
		t.Errorf("env_file entries %q, want %q", cfg.Processes["a"].Env, want)
	}
}

func TestLiteral(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"echo $HOME $1": "echo $HOME $1", // the shell's: kept readable
		"${A}":          "$${A}",
		"$$":            "$$$$",
		"a $b ${c}":     "a $$b $${c}", // one ${ escapes every $
	} {
		if got := Literal(in); got != want {
			t.Errorf("Literal(%q) = %q, want %q", in, got, want)
		}
	}
}
