package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"simple", "A=1\n", []string{"A=1"}},
		{"no final newline", "A=1", []string{"A=1"}},
		{"empty file", "", nil},
		{"comments and blanks", "# c\n\n   # indented\nA=1\n\n", []string{"A=1"}},
		{"export prefix", "export A=1\nexport  B=2\n", []string{"A=1", "B=2"}},
		{"spaces around", "  A = 1  \n", []string{"A=1"}},
		{"empty value", "A=\nB=''\nC=\"\"\n", []string{"A=", "B=", "C="}},
		{"equals in value", "A=b=c\n", []string{"A=b=c"}},
		{"hash in unquoted value", "A=x # y\n", []string{"A=x # y"}},
		{"single quotes literal", `A='a "b" \n $X'` + "\n", []string{`A=a "b" \n $X`}},
		{"double quotes escapes", `A="q\"q \\ \n \t"` + "\n", []string{`A=q"q \ \n \t`}},
		{"comment after quotes", "A=\"x\"  # note\nB='y' #\n", []string{"A=x", "B=y"}},
		{"no interpolation", "A=${HOME} $HOME\n", []string{"A=${HOME} $HOME"}},
		{"crlf", "A=1\r\nB='2'\r\n", []string{"A=1", "B=2"}},
		{"repeated key kept", "A=1\nA=2\n", []string{"A=1", "A=2"}},
		{"unicode value", "A=héllo\n", []string{"A=héllo"}},
		{"underscore key", "_A_1=x\n", []string{"_A_1=x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnvFile(".env", []byte(tc.in))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseEnvFileErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"no equals", "A=1\nNOVALUE\n", ".env:2:1: expected KEY=VALUE"},
		{"indented no equals", "   oops\n", ".env:1:4: expected KEY=VALUE"},
		{"digit first", "1A=x\n", `.env:1:1: invalid variable name "1A" (use letters, digits and _, not starting with a digit)`},
		{"dash in key", "A-B=x\n", `.env:1:1: invalid variable name "A-B"`},
		{"empty key", "=x\n", `.env:1:1: invalid variable name ""`},
		{"space in key", "A B=x\n", `.env:1:1: invalid variable name "A B"`},
		{"unterminated double", "A=\"x\n", `.env:1:1: A: missing closing " (values cannot span lines)`},
		{"unterminated single", "# c\nA='x\n", ".env:2:1: A: missing closing ' (values cannot span lines)"},
		{"escaped closing quote", `A="x\"` + "\n", `.env:1:1: A: missing closing "`},
		{"text after quote", "A=\"x\" y\n", ".env:1:1: A: unexpected text after the closing quote"},
		{"NUL", "A=x\x00y\n", ".env:1:1: A: value contains a NUL byte"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnvFile(".env", []byte(tc.in))
			if err == nil {
				t.Fatalf("accepted: %q", got)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want prefix %q", err, tc.want)
			}
		})
	}

	// Every bad line is reported, in order.
	_, err := ParseEnvFile("x.env", []byte("B-=1\nOK=1\nnope\n"))
	want := "x.env:1:1: invalid variable name \"B-\" (use letters, digits and _, not starting with a digit)\nx.env:3:1: expected KEY=VALUE"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
}

// TestEnvOrder checks the merge order: global env, env_file(s) in order,
// process env; later keys win and keep their first position.
func TestEnvOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one.env", "F1=one\nSHARED=one\nG2=from-file\n")
	write("two.env", "SHARED=two\nF2=two\n")
	src := `env: {G1: g, G2: g, SHARED: g}
processes:
  a:
    command: x
    env_file: [one.env, two.env]
    env: {P: p, F2: process}
  b:
    command: x
    env_file: one.env
  c: {command: x}
`
	cfg, err := Parse(filepath.Join(dir, "procs.yaml"), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"a": {"G1=g", "G2=from-file", "SHARED=two", "F1=one", "F2=process", "P=p"},
		"b": {"G1=g", "G2=from-file", "SHARED=one", "F1=one"},
		"c": {"G1=g", "G2=g", "SHARED=g"},
	} {
		if got := cfg.Processes[name].Env; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if want := []string{"G1=g", "G2=g", "SHARED=g"}; !reflect.DeepEqual(cfg.Env, want) {
		t.Errorf("global: %q, want %q", cfg.Env, want)
	}
}
