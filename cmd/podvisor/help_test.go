package main

import (
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestMain lets the completion tests run this test binary as podvisor
// itself (the scripts call "podvisor completion names").
func TestMain(m *testing.M) {
	if os.Getenv("PODVISOR_TEST_AS_MAIN") == "1" {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = realMain(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestCommandHelp: every command's --help (and help CMD) shows its usage,
// every flag with its default, at least two examples and its exit codes,
// on stdout with exit 0, without running the command.
func TestCommandHelp(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			if len(c.examples) < 2 || len(c.exits) == 0 || c.summary == "" {
				t.Fatalf("table entry needs a summary, two examples and exit codes: %+v", c)
			}
			for _, form := range [][]string{{"--help"}, {"-h"}, {"-help"}} {
				code, out, errOut := runMain(append(strings.Fields(c.name), form...)...)
				if code != exitOK || errOut != "" {
					t.Fatalf("%s %v: exit %d, stderr %q", c.name, form, code, errOut)
				}
				for _, want := range []string{"Usage:\n  podvisor " + c.name, "Examples:\n", "Exit codes:\n", c.examples[1].cmd} {
					if !strings.Contains(out, want) {
						t.Errorf("%s %v: no %q in\n%s", c.name, form, want, out)
					}
				}
				for _, f := range flagHelp(c) {
					if !strings.Contains(out, f.names) {
						t.Errorf("%s --help lacks flag %s", c.name, f.names)
					}
				}
			}
			_, viaHelp, _ := runMain(append([]string{"help"}, strings.Fields(c.name)...)...)
			_, viaFlag, _ := runMain(append(strings.Fields(c.name), "--help")...)
			if viaHelp != viaFlag {
				t.Errorf("help %s differs from %s --help", c.name, c.name)
			}
		})
	}
	// Defaults are shown.
	_, out, _ := runMain("wait", "--help")
	if !strings.Contains(out, "--timeout DURATION") || !strings.Contains(out, "(default 1m0s)") {
		t.Errorf("wait --help without the --timeout default:\n%s", out)
	}
	_, out, _ = runMain("graph", "--help")
	if !regexp.MustCompile(`(?m)^  -c, --config FILE +config FILE`).MatchString(out) {
		t.Errorf("graph --help does not show -c and --config on one line:\n%s", out)
	}
}

// TestCommandFlagsMatchTable runs each command's own flag parsing with -h
// (which prints the flags its FlagSet defines and stops before doing
// anything) and checks they are exactly the table's: help and completion
// cannot drift from what the command accepts.
func TestCommandFlagsMatchTable(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	for _, c := range commands {
		if c.name == "help" {
			continue // takes no flags and prints the command list
		}
		var out, errOut strings.Builder
		c.run([]string{"-h"}, &out, &errOut)
		var got []string
		for _, m := range flagLine.FindAllStringSubmatch(errOut.String(), -1) {
			got = append(got, m[1])
		}
		var want []string
		if c.flags != nil {
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			c.flags(fs)
			fs.VisitAll(func(f *flag.Flag) { want = append(want, f.Name) })
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s defines flags %v, the command table %v", c.name, got, want)
		}
	}
}

func TestUnknownCommandsAndFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"stauts"}, `unknown command "stauts" (did you mean "status"?)`},
		{[]string{"chekc", "-c", "x"}, `unknown command "chekc" (did you mean "check"?)`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"check", "--confg", "x"}, "unknown flag --confg (did you mean --config?)"},
		{[]string{"graph", "--fromat", "dot"}, "unknown flag --fromat (did you mean --format?)"},
		{[]string{"status", "-jsn"}, "unknown flag --jsn (did you mean --json?)"},
		{[]string{"wait", "--htp", "http://x/"}, "unknown flag --htp (did you mean --http?)"},
		{[]string{"run", "--zzzzzz"}, "unknown flag --zzzzzz\n"},
		{[]string{"schema", "--json"}, "unknown flag --json"},
		{[]string{"help", "statsu"}, `unknown command "statsu" (did you mean "status"?)`},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh"`},
		{[]string{"--listen", ":1"}, "a command comes first"},
		{nil, "Commands:"},
	}
	for _, tt := range tests {
		code, out, errOut := runMain(tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
	// A flag after --exec belongs to the command being waited for.
	code, _, errOut := runMain("wait", "--timeout", "1ms", "--exec", "/bin/false", "--zzz")
	if code != exitFail || strings.Contains(errOut, "unknown flag") {
		t.Errorf("wait --exec ... --zzz: exit %d, %q; want a timeout", code, errOut)
	}
	// So does a --help after --exec: the command runs.
	code, out, _ := runMain("wait", "--exec", "/bin/sh", "-c", "exit 0", "--help")
	if code != exitOK || strings.Contains(out, "Usage:") {
		t.Errorf("wait --exec true --help: exit %d, %q; want the command run", code, out)
	}
}

func TestOverview(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, out, _ := runMain(args...)
		if code != exitOK {
			t.Errorf("%v: exit %d", args, code)
		}
		for _, c := range commands {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + ` +` + regexp.QuoteMeta(c.summary) + `$`).MatchString(out) {
				t.Errorf("%v: command %q missing from\n%s", args, c.name, out)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runMain("version")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || lines[0] != "podvisor "+version || len(lines) != 3 ||
		!strings.HasPrefix(lines[1], "commit: ") || !strings.Contains(lines[2], runtime.Version()) {
		t.Errorf("version: exit %d\n%s", code, out)
	}
	if _, alias, _ := runMain("--version"); alias != out {
		t.Errorf("--version printed %q, version %q", alias, out)
	}
	code, out, _ = runMain("version", "--json")
	var b buildInfo
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || code != exitOK {
		t.Fatalf("version --json: exit %d, %q: %v", code, out, err)
	}
	if b.Version != version || b.Go != runtime.Version() || b.Commit == "" || b.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version --json: %+v", b)
	}
	old := commit
	commit = "0123abc"
	defer func() { commit = old }()
	if _, out, _ := runMain("version"); !strings.Contains(out, "commit: 0123abc") {
		t.Errorf("a stamped commit is not shown: %q", out)
	}
}

func TestSchemaCommand(t *testing.T) {
	code, out, _ := runMain("schema")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("schema: exit %d: %v", code, err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema is %v", doc["$schema"])
	}
}

// TestTableComplete: every entry of the table can run, init included the
// two entries it completes (help, completion).
func TestTableComplete(t *testing.T) {
	for _, c := range commands {
		if c.run == nil {
			t.Errorf("%s: no run function", c.name)
		}
	}
	for _, name := range []string{"help", "completion"} {
		if tableEntry(name).argWords == nil {
			t.Errorf("%s: no words to complete", name)
		}
	}
}
