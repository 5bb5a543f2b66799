package importer

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// This file reads the scripts of an s6 tree: run, up, finish and the
// cont-init.d scripts, and what they say about the service.

// isWithContenv reports whether w names s6-overlay's with-contenv
// (/command/with-contenv, /usr/bin/with-contenv, or on the PATH).
func isWithContenv(w string) bool { return path.Base(w) == "with-contenv" }

// scriptBody returns the interpreter of a script (its #! line, without
// with-contenv; /bin/sh when none) and its logical lines: comments and
// blank lines left out, backslash continuations joined.
func scriptBody(text string) (interp []string, withContenv bool, body []string) {
	ls := strings.Split(text, "\n")
	if len(ls) > 0 && strings.HasPrefix(ls[0], "#!") {
		interp = strings.Fields(strings.TrimPrefix(ls[0], "#!"))
		ls = ls[1:]
	}
	if len(interp) > 0 && isWithContenv(interp[0]) {
		interp, withContenv = interp[1:], true
	}
	if len(interp) == 0 {
		interp = []string{"/bin/sh"}
	}
	cur := ""
	for _, l := range ls {
		t := strings.TrimSpace(l)
		if cur == "" && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cur += strings.TrimSuffix(t, "\\") + " "
			continue
		}
		body = append(body, strings.TrimSpace(cur+t))
		cur = ""
	}
	if cur != "" {
		body = append(body, strings.TrimSpace(cur))
	}
	return interp, withContenv, body
}

func isShell(interp string) bool {
	switch path.Base(interp) {
	case "sh", "bash", "ash", "dash":
		return true
	}
	return false
}

// script converts a run (or cont-init.d, or up-named) script. A shell
// script whose body is one simple command becomes that command, exec'd
// (and its user, with-contenv left out); one line that is a list or a
// pipeline (`a || b`, `a | b`, `a; b`) runs as it is written, without an
// exec that would cut it short. Any other script is run by its
// interpreter from where it is.
func (c *s6Conv) script(p *Process, file string) bool {
	text, _ := c.read(file)
	interp, shebangEnv, body := scriptBody(text)
	if shebangEnv {
		c.r.AsIs(file, p.Name+": with-contenv in the #! line (left out: podvisor passes the container's environment)")
	}
	c.flagControl(p, file, body)
	if isShell(interp[0]) && len(body) == 1 {
		c.oneLine(p, file, body[0], interp[0])
		return true
	}
	if withContenvInside(body) {
		c.keepEnv(p, file)
	}
	if strings.Contains(text, "s6-setuidgid") && isShell(interp[0]) {
		note(p, c.r, file, "command", "the script calls s6-setuidgid itself; the image needs s6-setuidgid (or set user: and remove it)")
	}
	setArgv(&p.Command, &p.Shell, escapeAll(append(append([]string{}, interp...), file)))
	if strings.HasPrefix(path.Base(interp[0]), "execlineb") {
		c.noteExecline(p, file, "run script")
	} else {
		c.r.AsIs(file, p.Name+": script run by "+strings.Join(interp, " "))
	}
	return true
}

// keepEnv makes a with-contenv inside a script pass podvisor's
// environment on: with S6_KEEP_ENV set, s6-overlay's with-contenv only
// execs its program, as the #! line's with-contenv left out does.
// Without it, with-contenv empties the environment and reads
// /run/s6/container_environment, which only s6-overlay's stage 1 writes.
func (c *s6Conv) keepEnv(p *Process, file string) {
	p.Env = append(p.Env, envEntry("S6_KEEP_ENV", "1"))
	c.r.AsIs(file, p.Name+": with-contenv inside the script (env S6_KEEP_ENV=1 makes it keep podvisor's environment, as the #! line's is left out; the image needs with-contenv)")
}

func withContenvInside(body []string) bool {
	for _, l := range body {
		for _, w := range strings.Fields(l) {
			if isWithContenv(strings.Trim(w, "\"'{};")) {
				return true
			}
		}
	}
	return false
}

// oneLine converts the single logical line of a shell script.
func (c *s6Conv) oneLine(p *Process, file, line, interp string) {
	rest := strings.TrimSpace(line)
	if r, ok := strings.CutPrefix(rest, "exec "); ok {
		rest = strings.TrimSpace(r)
	}
	if !simpleCommand(rest) {
		// A list or a pipeline: exec in front would replace the shell with
		// its first command, and what follows || or && would never run.
		if withContenvInside([]string{line}) {
			c.keepEnv(p, file)
		}
		setShell(&p.Command, &p.Shell, config.Literal(line))
		c.r.AsIs(file, p.Name+": run script (its one line, a list or pipeline, as written)")
		c.bashNote(p, file, interp)
		return
	}
	for {
		words, err := splitWords(rest)
		if err != nil || len(words) == 0 {
			break
		}
		switch {
		case isWithContenv(words[0]):
			rest = afterWords(rest, 1)
			c.r.AsIs(file, p.Name+": with-contenv (left out: podvisor passes the container's environment)")
			continue
		case words[0] == "exec":
			rest = afterWords(rest, 1)
			continue
		case words[0] == "s6-setuidgid" && len(words) >= 3 && p.User == nil:
			p.User = user(words[1])
			rest = afterWords(rest, 2)
			c.r.AsIs(file, p.Name+": s6-setuidgid "+words[1]+" (user: "+words[1]+")")
			continue
		case words[0] == "s6-notifyoncheck" && p.Ready == nil && !strings.ContainsAny(rest, "$`"):
			if more, probe, timeout, ok := notifyOnCheck(words[1:], path.Dir(file)); ok && len(more) > 0 {
				p.Ready = probe
				if p.StartTimeout == 0 {
					p.StartTimeout = timeout
				}
				note(p, c.r, file, "ready", "s6-notifyoncheck: its check became an exec readiness probe with the same timings")
				rest = strings.Join(shellQuoteAll(more), " ")
				continue
			}
		}
		break
	}
	setShell(&p.Command, &p.Shell, "exec "+config.Literal(rest))
	c.r.AsIs(file, p.Name+": run script (its one command)")
	c.bashNote(p, file, interp)
}

func (c *s6Conv) bashNote(p *Process, file, interp string) {
	if path.Base(interp) == "bash" {
		note(p, c.r, file, "command", "the one-line bash script runs under /bin/sh -c")
	}
}

// simpleCommand reports whether line is one simple shell command: no
// unquoted |, &, ;, ( or ) outside a $(...) substitution (a redirection
// such as 2>&1 is fine), so that exec in front keeps its meaning.
func simpleCommand(line string) bool {
	depth := 0 // inside $( ... )
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; ch {
		case '\\':
			i++
		case '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return false
			}
			i += end + 1
		case '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			if i >= len(line) {
				return false
			}
		case '`':
			end := strings.IndexByte(line[i+1:], '`')
			if end < 0 {
				return false
			}
			i += end + 1
		case '$':
			if i+1 < len(line) && line[i+1] == '(' {
				depth++
				i++
			}
		case '(':
			if depth == 0 {
				return false
			}
			depth++
		case ')':
			if depth == 0 {
				return false
			}
			depth--
		case '&':
			redirect := (i > 0 && (line[i-1] == '>' || line[i-1] == '<')) || (i+1 < len(line) && line[i+1] == '>')
			if depth == 0 && !redirect {
				return false
			}
		case '|', ';', '\n':
			if depth == 0 {
				return false
			}
		}
	}
	return depth == 0
}

// afterWords returns s without its first n shell words, the rest as it is
// written.
func afterWords(s string, n int) string {
	i := 0
	for ; n > 0; n-- {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			switch s[i] {
			case '\\':
				i++
			case '\'':
				if end := strings.IndexByte(s[i+1:], '\''); end >= 0 {
					i += end + 1
				}
			case '"':
				for i++; i < len(s) && s[i] != '"'; i++ {
					if s[i] == '\\' {
						i++
					}
				}
			}
			i++
		}
	}
	if i > len(s) {
		return ""
	}
	return strings.TrimSpace(s[i:])
}

// s6Control matches the s6 programs that control or watch supervised
// services, and s6-overlay's stage-2 hook.
var s6Control = regexp.MustCompile(`(?:^|[^\w./-])(?:/\S*/)?(s6-svc|s6-svscanctl|s6-rc|s6-rc-update|s6-svwait|s6-svstat|s6-svok|s6-svlisten1?|s6-svlink|s6-svunlink|S6_STAGE2_HOOK)(?:[^\w.-]|$)`)

// s6ServiceDirs are where services are made at run time; s6WriteWords
// the commands that write there.
var (
	s6ServiceDirs = regexp.MustCompile(`/run/service\b|/var/run/s6/services\b|/run/s6/legacy-services\b|/etc/services\.d\b|/etc/s6-overlay/s6-rc\.d\b|/run/s6-rc\b|/run/s6/services\b`)
	s6WriteWords  = regexp.MustCompile(`\b(mkdir|cp|ln|mv|install|tee|touch|rm|s6-hiercopy|s6-mkdir|s6-ln|s6-rmrf)\b|>`)
)

// flagControl reports what a converted script does that needs s6 at run
// time: calls to s6-svc, s6-svscanctl and the like (there is no
// s6-supervise or s6-svscan under podvisor), the stage-2 hook, and
// services made at run time, which import cannot see.
func (c *s6Conv) flagControl(p *Process, file string, body []string) {
	seen := map[string]bool{}
	for _, l := range body {
		for _, m := range s6Control.FindAllStringSubmatch(l, -1) {
			prog := m[1]
			if seen[prog] {
				continue
			}
			seen[prog] = true
			how := "it calls " + prog + ", which talks to s6's supervisor: under podvisor there is none, so it fails; use podvisor stop/start/restart/signal NAME (or podvisor wait NAME for s6-svwait)"
			if prog == "S6_STAGE2_HOOK" {
				how = "it names S6_STAGE2_HOOK, s6-overlay's hook run before stage 2: podvisor runs no hook; run what it does before podvisor starts"
			}
			note(p, c.r, file, "command", how)
		}
		if m := s6ServiceDirs.FindString(l); m != "" && s6WriteWords.MatchString(l) && !seen[m] {
			seen[m] = true
			c.r.Fail(file, p.Name+": services made at run time", "the script writes into "+m+", making or changing s6 services when the container starts; import converts only the services in the tree: convert those it makes by hand")
		}
	}
}

// s6Terminate is v2's way to halt the container (s6-svscanctl -t);
// s6Exit125 a finish script's permanent failure.
var (
	s6Terminate = regexp.MustCompile(`\bs6-svscanctl\s+(-\w*\s+)*-\w*t`)
	s6Exit125   = regexp.MustCompile(`^exit\s+125\b|[;&|{]\s*exit\s+125\b|\bthen\s+exit\s+125\b`)
)

// finish converts a finish script. s6-supervise runs it after each exit
// with the exit code (256 and the signal after a kill). What podvisor can
// say of it: it halts the container (/run/s6/basedir/bin/halt, v2's
// s6-svscanctl -t): the exit ends the run; it exits 125: s6 stops
// restarting the service. Any other finish script is dropped.
func (c *s6Conv) finish(p *Process, dir string) {
	file := dir + "/finish"
	text, ok := c.read(file)
	if !ok {
		return
	}
	_, _, body := scriptBody(text)
	haltAt, exitAt := -1, -1
	for i, l := range body {
		if strings.Contains(l, "/run/s6/basedir/bin/halt") || s6Terminate.MatchString(l) {
			if haltAt < 0 {
				haltAt = i
			}
		}
		if s6Exit125.MatchString(l) && exitAt < 0 {
			exitAt = i
		}
	}
	switch {
	case haltAt >= 0:
		p.Restart.Rules = []config.ExitRule{{In: []int{0}, Action: config.RuleShutdown}, {NotIn: []int{0}, Action: config.RuleShutdown}}
		p.Written.Restart = true
		var how []string
		if conditional(body, haltAt) {
			how = append(how, "the finish script halts the container on some exits only (it tests them): here every exit ends the run; narrow restart.rules to the exit codes it halts on")
		}
		code := ""
		for _, l := range body {
			if strings.Contains(l, "container-results/exitcode") {
				code = l
			}
		}
		switch {
		case code == "":
			how = append(how, "s6-overlay then exits 0 (no exitcode file is written); podvisor exits with the process's exit code")
		case !strings.Contains(code, "$"):
			how = append(how, "s6-overlay then exits with the code the finish script writes to the exitcode file; podvisor exits with the process's exit code")
		}
		if len(how) == 0 {
			c.r.AsIs(file, p.Name+": finish halts the container with the service's exit code (restart.rules: shutdown on every exit, podvisor exits with that code)")
			return
		}
		note(p, c.r, file, "restart", "finish halts the container: any exit ends the run (restart.rules action shutdown); "+strings.Join(how, "; "))
	case exitAt >= 0 && strings.Contains(text, "s6-permafailon"):
		note(p, c.r, file, "restart", "finish uses s6-permafailon: after that many deaths in that time s6 stops restarting the service; podvisor restarts it with backoff every time (restart.limit counts restarts over the whole life)")
	case exitAt >= 0 && !conditional(body, exitAt):
		p.Restart.Rules = []config.ExitRule{{In: []int{0}, Action: config.RuleStop}, {NotIn: []int{0}, Action: config.RuleStop}}
		p.Written.Restart = true
		c.r.AsIs(file, p.Name+": finish exits 125, s6's permanent failure: no restart after any exit, and the run goes on (restart.rules action stop)")
	case exitAt >= 0:
		note(p, c.r, file, "restart", "finish exits 125 (s6's permanent failure: no restart) on some exits only: podvisor restarts after every exit; add a restart.rules entry with action: stop for the exit codes it means")
	default:
		c.r.Drop(file, p.Name+": finish", "podvisor runs nothing after a process exits; put the clean-up in the run script (trap) or stop.command")
	}
}

// conditional reports whether body's line at is run only under a
// condition: inside an if/case/loop of a shell script, after an execline
// if, or behind && / ||.
func conditional(body []string, at int) bool {
	if strings.Contains(body[at], "&&") || strings.Contains(body[at], "||") {
		return true
	}
	if w := strings.Fields(body[at]); len(w) > 0 {
		switch w[0] {
		case "if", "case", "while", "until", "for", "ifelse", "ifte", "ifthenelse", "ifnot", "test", "[", "eltest":
			return true // the line itself tests: if ...; then exit 125; fi
		}
	}
	depth := 0
	for _, l := range body[:at] {
		w := strings.Fields(l)
		if len(w) == 0 {
			continue
		}
		switch w[0] {
		case "if", "case", "while", "until", "for":
			depth++
		case "fi", "esac", "done":
			depth--
		case "ifelse", "ifte", "ifthenelse", "ifnot", "if{", "eltest", "test", "[":
			return true
		}
		if w[len(w)-1] == "fi" || w[len(w)-1] == "done" || w[len(w)-1] == "esac" {
			if w[0] != "fi" && w[0] != "done" && w[0] != "esac" {
				depth-- // a one-line if ... fi
			}
		}
	}
	return depth > 0
}

// up converts a oneshot's up file: one execline command line. A plain
// command line (words only) becomes the argv; anything using execline
// syntax runs under execlineb -Pc.
func (c *s6Conv) up(p *Process, file, text string) {
	var body []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			body = append(body, t)
		}
	}
	line := strings.Join(body, " ")
	words, err := splitWords(line)
	if err == nil && len(words) > 0 && !strings.ContainsAny(line, "{}$;|&<>") && len(body) == 1 {
		for len(words) > 1 && isWithContenv(words[0]) {
			words = words[1:]
			c.r.AsIs(file, p.Name+": with-contenv (left out: podvisor passes the container's environment)")
		}
		script := words[0]
		if found := c.inTree(words[0]); found != "" {
			script = found
			note(p, c.r, file, "command", "up names "+words[0]+", found in the tree at "+found+"; run the import inside the image (or with --root) to keep the image's path")
		}
		if _, ok := c.files[script]; ok && len(words) == 1 {
			// A script of the tree: converted like a run script, so that
			// its with-contenv #! line is not needed.
			c.r.AsIs(file, p.Name+": up runs "+words[0]+" (a oneshot)")
			c.script(p, script)
			return
		}
		words[0] = script
		c.r.AsIs(file, p.Name+": up (a oneshot)")
		setArgv(&p.Command, &p.Shell, escapeAll(words))
		return
	}
	if withContenvInside(body) {
		c.keepEnv(p, file)
	}
	c.flagControl(p, file, body)
	setArgv(&p.Command, &p.Shell, []string{"execlineb", "-Pc", config.Literal(text)})
	c.noteExecline(p, file, "up")
}

func (c *s6Conv) noteExecline(p *Process, file, what string) {
	if c.opt.HasExecline {
		c.r.AsIs(file, p.Name+": "+what+" (an execline script, run by execlineb as it is)")
		return
	}
	note(p, c.r, file, "command", what+" is an execline script and execlineb is not on this machine: the image that runs this file needs execline")
}

// inTree returns where an absolute path an up file names is in the
// imported tree, when the tree is not at / (a repository's root/ copied
// into the image): the one file whose path ends with it. "" when the path
// is there as it is, or not found, or ambiguous.
func (c *s6Conv) inTree(p string) string {
	if !path.IsAbs(p) {
		return ""
	}
	if _, ok := c.files[p]; ok {
		return ""
	}
	found := ""
	for f := range c.files {
		if strings.HasSuffix(f, p) {
			if found != "" {
				return ""
			}
			found = f
		}
	}
	return found
}

// notifyOnCheck reads s6-notifyoncheck's options (times in ms) and returns
// the program it runs and the readiness probe its check amounts to. With
// no -c, the check is the service's data/check script.
//
// The start timeout is -T, else -s plus -n tries of -w (1 s when not
// given), else 0.
func notifyOnCheck(args []string, dir string) ([]string, *Probe, time.Duration, bool) {
	pr := &Probe{Kind: config.ProbeExec, Command: []string{path.Join(dir, "data", "check")}}
	ms := func(v string) (time.Duration, bool) {
		n, err := strconv.Atoi(v)
		return time.Duration(n) * time.Millisecond, err == nil && n >= 0 && n < 1e9
	}
	tries := 0
	var global time.Duration
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1; i++ {
		opt := args[i]
		if opt == "--" {
			i++
			break
		}
		if opt == "-d" {
			continue
		}
		if i+1 >= len(args) {
			return nil, nil, 0, false
		}
		v := args[i+1]
		i++
		var ok bool
		switch opt {
		case "-s":
			pr.InitialDelay, ok = ms(v)
		case "-t":
			pr.Timeout, ok = ms(v)
		case "-w":
			pr.StartInterval, ok = ms(v)
		case "-T":
			global, ok = ms(v)
		case "-n":
			var err error
			tries, err = strconv.Atoi(v)
			ok = err == nil && tries >= 0
		case "-3":
			ok = true // the notification fd: podvisor needs none for an exec probe
		case "-c":
			pr.Command, pr.Shell, ok = shellForm(config.Literal(v)), true, v != ""
		}
		if !ok {
			return nil, nil, 0, false
		}
	}
	if pr.StartInterval > 0 && pr.StartInterval < 10*time.Millisecond {
		pr.StartInterval = 10 * time.Millisecond
	}
	timeout := global
	if timeout == 0 && tries > 0 {
		w := pr.StartInterval
		if w == 0 {
			w = time.Second
		}
		timeout = pr.InitialDelay + time.Duration(tries)*w
	}
	return args[i:], pr, timeout, true
}
