package main

import (
	"fmt"
	"io"
	"strings"
)

// manCommand is the hidden command that prints the man page, podvisor(1),
// for packagers (scripts/deb.sh). It is not in the command table, so help
// and completion do not offer it.
const manCommand = "__man"

// writeMan writes podvisor(1) in roff (man(7) macros) from the command
// table, with what --help shows of each command. No date: two builds of
// the same source give the same page (docs/install.md).
func writeMan(w io.Writer, cmds []command) {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH PODVISOR 1 \"\" %s \"User Commands\"\n", roffQuote("podvisor "+version))
	b.WriteString(".SH NAME\npodvisor \\- in\\-pod process supervisor, PID 1 of a rich container\n")
	b.WriteString(".SH SYNOPSIS\n.B podvisor\n.I command\n.RI [ flags ]\n")
	b.WriteString(".SH DESCRIPTION\n" + roffText("podvisor reads a YAML dependency graph of processes (procs.yaml), "+
		"starts each one once its dependencies are started, ready or completed, restarts them by policy, "+
		"and on SIGTERM tears them down in reverse dependency order. "+
		"Every command, flag and config key is described in docs/reference.md of the source.") + "\n")
	b.WriteString(".SH COMMANDS\n")
	for _, c := range cmds {
		head := "podvisor " + c.name
		if syn := synopsis(c); syn != "" {
			head += " " + syn
		}
		fmt.Fprintf(&b, ".SS %s\n%s\n", roffQuote(head), roffText(c.summary))
		if c.about != "" {
			fmt.Fprintf(&b, ".PP\n%s\n", roffText(c.about))
		}
		for _, f := range flagHelp(c) {
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffQuote(f.names), roffText(f.usage))
		}
		if len(c.examples) > 0 {
			b.WriteString(".PP\nExamples:\n")
			for _, e := range c.examples {
				fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffQuote(e.cmd), roffText(e.what))
			}
		}
		b.WriteString(".PP\nExit codes:\n")
		for _, e := range c.exits {
			code := fmt.Sprint(e.code)
			if e.code < 0 {
				code = "N"
			}
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", code, roffText(e.meaning))
		}
	}
	io.WriteString(w, b.String())
}

// roffText escapes text for roff: backslashes and hyphens (a "-" is a
// hyphen, not the minus of a flag), and a line starting with . or '
// (a request) gets the zero-width \& in front.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffQuote is roffText as one macro argument: in double quotes, with a
// double quote inside written "" and no line break.
func roffQuote(s string) string {
	s = roffText(strings.ReplaceAll(s, "\n", " "))
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
