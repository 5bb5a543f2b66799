package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Warnings returns what a valid config does that its author likely did not
// mean, each without a "warning: " prefix: check prints them on stderr, run
// logs them at WARN level.
func (c *Config) Warnings() []string {
	var ws []string
	if w := c.TeardownWarning(); w != "" {
		ws = append(ws, w)
	}
	for _, name := range c.Names {
		ws = append(ws, c.Processes[name].shellSignalWarnings()...)
	}
	return ws
}

// EndWarnings names the services that end not ready for good when they
// exit as their policy allows: restart never or on-failure, no
// remain_after_exit. check prints them; run does not, since a Kubernetes
// pod's containers (kube play) mean exactly that (docs/configuration.md).
func (c *Config) EndWarnings() []string {
	var ws []string
	for _, name := range c.Names {
		p := c.Processes[name]
		if p.Type != Service || p.Restart.Policy == Always || p.RemainAfterExit || p.Schedule != nil {
			continue
		}
		ends := "after it exits"
		if p.Restart.Policy == OnFailure {
			ends = "after a success exit"
		}
		ws = append(ws, fmt.Sprintf("%s processes.%s: a service with restart: %s stays stopped %s, and /readyz answers 503 from then on; "+
			"for a command meant to end, use type: oneshot (ready once completed) or add remain_after_exit: true",
			p.Pos, name, p.Restart.Policy, ends))
	}
	return ws
}

// execWord finds exec as a shell word: a command string that execs its
// program lets the program's death by a signal reach podvisor as one.
var execWord = regexp.MustCompile(`(^|[\s;&|(])exec\s`)

// shellSignalWarnings: /bin/sh -c runs the command as its child and exits
// 128+N when the child dies by signal N (dash execs nothing by itself), so
// a rule's signals match only when the shell itself dies of one
// (docs/reference.md, restart.rules).
func (p *Process) shellSignalWarnings() []string {
	if p == nil || !p.Shell || len(p.Command) < 3 || execWord.MatchString(p.Command[2]) {
		return nil
	}
	var ws []string
	for i, r := range p.Restart.Rules {
		var deaths, codes []string
		for _, sig := range r.Signals {
			code := 128 + int(sig)
			if slices.ContainsFunc(p.Restart.Rules, func(o ExitRule) bool { return slices.Contains(o.In, code) }) {
				continue
			}
			by := "by " + unix.SignalName(sig) + " as "
			if len(deaths) == 0 {
				by += "exit code "
			}
			deaths = append(deaths, by+strconv.Itoa(code))
			codes = append(codes, strconv.Itoa(code))
		}
		if len(deaths) == 0 {
			continue
		}
		them := "them"
		if len(deaths) == 1 {
			them = "it"
		}
		first, _, _ := strings.Cut(strings.TrimSpace(p.Command[2]), " ")
		ws = append(ws, fmt.Sprintf("%s processes.%s.restart.rules[%d]: the command is a shell string without exec: "+
			"/bin/sh -c reports its death %s, so this rule does not match %s; start the command with exec (\"exec %s ...\") "+
			"or add exit_codes: {in: [%s]} in a rule of its own",
			r.Pos, p.Name, i, strings.Join(deaths, ", "), them, first, strings.Join(codes, ", ")))
	}
	return ws
}
