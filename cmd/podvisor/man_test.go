package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestManPage: `podvisor __man` is a man page groff renders without a
// warning, naming every command of the table with its flags, examples and
// exit codes.
func TestManPage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := realMain([]string{manCommand}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	page := out.String()
	if !strings.HasPrefix(page, ".TH PODVISOR 1 ") {
		t.Fatalf("no .TH header:\n%.200s", page)
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff to render the page")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-rLL=1000n", "-P-c", "-P-b", "-P-u")
	cmd.Stdin = strings.NewReader(page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	text, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("groff: %v\n%s", err, stderr.String())
	}
	rendered := string(text)
	for _, c := range commands {
		if !strings.Contains(rendered, "podvisor "+c.name) {
			t.Errorf("the page lacks command %q", c.name)
		}
		for _, f := range flagHelp(c) {
			if !strings.Contains(rendered, f.names) {
				t.Errorf("the page lacks %s's flag %s", c.name, f.names)
			}
		}
		for _, e := range c.examples {
			if !strings.Contains(rendered, e.cmd) {
				t.Errorf("the page lacks %s's example %q", c.name, e.cmd)
			}
		}
	}
}

// TestRoffText: text that roff would read as a request or an escape comes
// out literal.
func TestRoffText(t *testing.T) {
	for in, want := range map[string]string{
		"a\n.SH x":       "a\n\\&.SH x",
		"'quoted":        "\\&'quoted",
		`C:\path --flag`: `C:\epath \-\-flag`,
	} {
		if got := roffText(in); got != want {
			t.Errorf("roffText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := roffQuote(`say "hi"` + "\nnow"); got != `"say ""hi"" now"` {
		t.Errorf("roffQuote = %s", got)
	}
}
