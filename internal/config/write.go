package config

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// SchemaURL is the schema the written file names on its first line (the
// same schema `podvisor schema` prints).
const SchemaURL = "https://raw.githubusercontent.com/podvisor/podvisor/main/schema/procs.schema.json"

// Write renders m as procs.yaml text (the one writer of procs.yaml): the schema line, the header comments,
// then the keys in the order docs/reference.md lists them. Every comment a
// converter left on a key is written beside it as "# approximated: ...".
func Write(m *Document) []byte {
	w := &writer{}
	w.line(0, "# yaml-language-server: $schema="+SchemaURL)
	for _, h := range m.Header {
		w.line(0, strings.TrimRight("# "+CommentText(h), " "))
	}
	w.line(0, "version: 1")
	if m.ShutdownTimeout > 0 {
		w.line(0, "shutdown_timeout: "+FormatDuration(m.ShutdownTimeout))
	}
	if len(m.Env) > 0 {
		w.line(0, "env:")
		w.env(1, m.Env)
	}
	w.line(0, "processes:")
	for i, p := range m.Processes {
		if i > 0 {
			w.b.WriteByte('\n')
		}
		w.process(p)
	}
	return []byte(w.b.String())
}

type writer struct {
	b strings.Builder
}

func (w *writer) line(indent int, s string) {
	w.b.WriteString(strings.Repeat("  ", indent))
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// kv writes "key: value", with the comment c beside it when not empty.
func (w *writer) kv(indent int, key, value, c string) {
	s := key + ":"
	if value != "" {
		s += " " + value
	}
	if c != "" {
		s += "  # approximated: " + CommentText(c)
	}
	w.line(indent, s)
}

// CommentText makes s fit in a YAML comment: line breaks become spaces, other
// control characters and invalid UTF-8 become "?".
func CommentText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r' || r == '\n' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError || r == '\ufeff':
			return '?'
		}
		return r
	}, s)
}

func (w *writer) env(indent int, env []string) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		w.kv(indent, quoteKey(k), quote(v), "")
	}
}

var noNotes = &Written{}

func (w *writer) process(p *Process) {
	n := p.Written
	if n == nil {
		n = noNotes
	}
	used := map[string]bool{}
	c := func(k string) string { used[k] = true; return n.Comments[k] }
	// A comment on a key that is not written (no user, an empty stop
	// block) goes on a line of its own at the end of the process.
	defer func() {
		keys := make([]string, 0, len(n.Comments))
		for k := range n.Comments {
			if !used[k] {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			w.line(2, "# approximated ("+CommentText(k)+"): "+CommentText(n.Comments[k]))
		}
	}()
	if n.Origin != "" {
		w.line(1, "# from "+CommentText(n.Origin))
	}
	if n.Note != "" {
		w.line(1, "# "+CommentText(n.Note))
	}
	w.kv(1, quoteKey(p.Name), "", c("name"))
	w.kv(2, "command", command(p.Command, p.Shell), c("command"))
	if p.Type != Service {
		w.kv(2, "type", p.Type.String(), c("type"))
	}
	if len(p.Env) > 0 {
		w.kv(2, "env", "", c("env"))
		w.env(3, p.Env)
	}
	if len(n.EnvFile) > 0 {
		w.kv(2, "env_file", list(n.EnvFile), c("env_file"))
	}
	if p.Root != "" {
		w.kv(2, "root", quote(p.Root), c("root"))
	}
	if p.WorkingDir != "" {
		w.kv(2, "working_dir", quote(p.WorkingDir), c("working_dir"))
	}
	if p.User != nil {
		w.kv(2, "user", quote(p.User.Spec), c("user"))
	}
	if len(p.DependsOn) > 0 {
		w.kv(2, "depends_on", "", c("depends_on"))
		for _, d := range p.DependsOn {
			if d.Restart {
				w.kv(3, quoteKey(d.Name), "{condition: "+d.Condition.String()+", restart: true}", c("depends_on."+d.Name))
			} else {
				w.kv(3, quoteKey(d.Name), d.Condition.String(), c("depends_on."+d.Name))
			}
		}
	}
	w.probe("ready", p.Ready, c)
	if p.StartTimeout > 0 {
		w.kv(2, "start_timeout", FormatDuration(p.StartTimeout), c("start_timeout"))
	}
	w.probe("live", p.Live, c)
	w.probe("startup", p.Startup, c)
	if n.Restart {
		w.restart(p.Restart, c("restart"))
	}
	w.rest(p, c)
	w.stop(p.Stop, n, c)
	w.log(p.Log, c)
}

// rest writes the keys between restart and stop.
func (w *writer) rest(p *Process, c func(string) string) {
	if len(p.SuccessExitCodes) > 0 {
		w.kv(2, "success_exit_codes", ints(p.SuccessExitCodes), c("success_exit_codes"))
	}
	if p.OOMScoreAdj != nil {
		w.kv(2, "oom_score_adj", strconv.Itoa(*p.OOMScoreAdj), c("oom_score_adj"))
	}
	w.privileges(p, c)
	if p.Sidecar {
		w.kv(2, "sidecar", "true", c("sidecar"))
	}
	if p.RemainAfterExit {
		w.kv(2, "remain_after_exit", "true", c("remain_after_exit"))
	}
	if p.TTY {
		w.kv(2, "tty", "true", c("tty"))
	}
	if p.Stdin {
		w.kv(2, "stdin", "true", c("stdin"))
	}
	if p.Watchdog > 0 {
		w.kv(2, "watchdog", FormatDuration(p.Watchdog), c("watchdog"))
	}
	if len(p.Sockets) > 0 {
		w.kv(2, "sockets", "", c("sockets"))
		for _, so := range p.Sockets {
			w.line(3, "- "+socketFlow(so))
		}
	}
	if p.FDStoreMax > 0 {
		w.kv(2, "fd_store_max", strconv.Itoa(p.FDStoreMax), c("fd_store_max"))
	}
	if p.Daemon != nil {
		w.kv(2, "daemon", "{pid_file: "+quote(p.Daemon.PidFile)+"}", c("daemon"))
	}
	w.reload(p.Reload, c)
	w.watch(p.Watch, c)
	w.schedule(p.Schedule, c)
	if len(p.SecretEnv) > 0 {
		w.kv(2, "secret_env", list(p.SecretEnv), c("secret_env"))
	}
	if len(p.Profiles) > 0 {
		w.kv(2, "profiles", list(p.Profiles), c("profiles"))
	}
	w.resources(p.Resources, c)
}

// log writes the log block, left out when it holds nothing.
func (w *writer) log(l Output, c func(string) string) {
	if l == (Output{}) {
		return
	}
	w.kv(2, "log", "", c("log"))
	for _, f := range []struct{ k, v string }{{"stdout", string(l.Stdout)}, {"stderr", string(l.Stderr)}, {"file", l.File}, {"stderr_file", l.StderrFile}, {"format", l.Format}} {
		if f.v != "" {
			w.kv(3, f.k, quote(f.v), "")
		}
	}
	if l.MaxSize > 0 {
		w.kv(3, "max_size", size(l.MaxSize), "")
	}
	if l.MaxFiles > 0 {
		w.kv(3, "max_files", strconv.Itoa(l.MaxFiles), "")
	}
	if l.Compress {
		w.kv(3, "compress", "true", "")
	}
	if l.Timestamps {
		w.kv(3, "timestamps", "true", "")
	}
}

func (w *writer) restart(r Restart, c string) {
	if r.Backoff == 0 && r.MaxBackoff == 0 && r.Limit == 0 && len(r.Rules) == 0 && !r.DuringTermination && !r.Overlap {
		w.kv(2, "restart", r.Policy.String(), c)
		return
	}
	w.kv(2, "restart", "", c)
	w.kv(3, "policy", r.Policy.String(), "")
	if r.Backoff > 0 {
		w.kv(3, "backoff", FormatDuration(r.Backoff), "")
	}
	if r.MaxBackoff > 0 {
		w.kv(3, "max_backoff", FormatDuration(r.MaxBackoff), "")
	}
	if r.Limit > 0 {
		w.kv(3, "limit", strconv.Itoa(r.Limit), "")
	}
	if r.Overlap {
		w.kv(3, "overlap", "true", "")
	}
	if r.DuringTermination {
		w.kv(3, "during_termination", "true", "")
	}
	if len(r.Rules) > 0 {
		w.kv(3, "rules", "", "")
		for _, x := range r.Rules {
			w.line(4, "- "+ruleFlow(x))
		}
	}
}

// stop writes the stop block, left out when it holds nothing.
func (w *writer) stop(s Stop, n *Written, c func(string) string) {
	if s.Signal == 0 && !n.StopTimeout && s.Command == nil && s.MinGrace == 0 {
		return
	}
	w.kv(2, "stop", "", c("stop"))
	if s.Signal != 0 {
		w.kv(3, "signal", unix.SignalName(s.Signal), "")
	}
	if n.StopTimeout {
		w.kv(3, "timeout", FormatDuration(s.Timeout), "")
	}
	if s.Command != nil {
		w.kv(3, "command", command(s.Command, s.Shell), "")
	}
	if s.CommandFirst {
		w.kv(3, "command_first", "true", "")
	}
	if s.MinGrace > 0 {
		w.kv(3, "min_grace", FormatDuration(s.MinGrace), "")
	}
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// probe writes the check under key, left out when pr is nil.
func (w *writer) probe(key string, pr *Probe, c func(string) string) {
	if pr == nil {
		return
	}
	w.kv(2, key, "", c(key))
	switch pr.Kind {
	case ProbeExec:
		w.kv(3, "exec", command(pr.Command, pr.Shell), "")
	case ProbeNotifySystemd:
		w.kv(3, "notify", "systemd", "")
	case ProbeNotifyFD:
		w.kv(3, "notify", quote("fd:"+strconv.Itoa(pr.FD)), "")
	default:
		w.kv(3, pr.Kind.String(), quote(pr.Target), "")
	}
	if pr.Service != "" {
		w.kv(3, "service", quote(pr.Service), "")
	}
	if pr.TLS {
		w.kv(3, "tls", "true", "")
	}
	if pr.H2C {
		w.kv(3, "h2c", "true", "")
	}
	for _, d := range []struct {
		k string
		v time.Duration
	}{{"start_interval", pr.StartInterval}, {"interval", pr.Interval}, {"timeout", pr.Timeout}, {"initial_delay", pr.InitialDelay}} {
		if d.v > 0 {
			w.kv(3, d.k, FormatDuration(d.v), "")
		}
	}
	if pr.SuccessThreshold > 0 {
		w.kv(3, "success_threshold", strconv.Itoa(pr.SuccessThreshold), "")
	}
	if pr.FailureThreshold > 0 {
		w.kv(3, "failure_threshold", strconv.Itoa(pr.FailureThreshold), "")
	}
	if pr.StopTimeout > 0 {
		w.kv(3, "stop_timeout", FormatDuration(pr.StopTimeout), "")
	}
	if pr.WhileStopping {
		w.kv(3, "while_stopping", "true", "")
	}
}

// command writes argv as a list, or, when shell is set, the s of
// ["/bin/sh", "-c", s] as a string.
func command(argv []string, shell bool) string {
	if shell && len(argv) == 3 {
		return quote(argv[2])
	}
	return list(argv)
}

func list(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// plain matches strings that YAML reads back as the same string unquoted.
var plain = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z/_][A-Za-z0-9_./@+=-]*$`) })

var yamlWords = map[string]bool{"true": true, "false": true, "yes": true, "no": true, "on": true,
	"off": true, "null": true, "y": true, "n": true}

// quote returns s as a YAML scalar: plain when that is unambiguous, else a
// double-quoted string with every character YAML does not allow raw
// (C0 and C1 controls, DEL, BOM) escaped.
func quote(s string) string {
	if plain().MatchString(s) && !yamlWords[strings.ToLower(s)] {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0xfeff || r == 0xfffe || r == 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r) // invalid UTF-8 comes out as U+FFFD; finish refuses it
		}
	}
	b.WriteByte('"')
	return b.String()
}

func quoteKey(s string) string { return quote(s) }

// FormatDuration writes a duration as podvisor reads it: whole seconds as "5s",
// otherwise Go's form ("1.5s", "250ms").
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// size writes a byte count as podvisor reads it: with a binary unit when
// it divides evenly, else in bytes.
func size(n int64) string {
	for _, u := range []struct {
		name string
		div  int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.div == 0 {
			return fmt.Sprintf("%d%s", n/u.div, u.name)
		}
	}
	return fmt.Sprint(n)
}

// socketFlow writes one sockets entry as a flow mapping (the importer's
// converted .socket units: listen, name, backlog, mode, reuse_port).
func socketFlow(so Socket) string {
	f := []string{"listen: " + quote(so.Listen)}
	if so.Name != "" {
		f = append(f, "name: "+quote(so.Name))
	}
	if so.Backlog > 0 {
		f = append(f, "backlog: "+strconv.Itoa(so.Backlog))
	}
	if so.Mode != 0 && strings.HasPrefix(so.Listen, "unix:") { // the loader gives other kinds 0666
		f = append(f, fmt.Sprintf("mode: \"%04o\"", so.Mode))
	}
	if so.Owner != nil {
		f = append(f, "owner: "+quote(so.Owner.Spec))
	}
	if so.ReusePort {
		f = append(f, "reuse_port: true")
	}
	return "{" + strings.Join(f, ", ") + "}"
}

// privileges writes limits, umask, no_new_privs and capabilities.
func (w *writer) privileges(p *Process, c func(string) string) {
	if len(p.Limits) > 0 {
		w.kv(2, "limits", "", c("limits"))
		for _, r := range p.Limits {
			v := FormatRlimit(r)
			if !isDigits(v) {
				v = quote(v)
			}
			w.kv(3, r.Name, v, c("limits."+r.Name))
		}
	}
	if p.Umask != nil {
		w.kv(2, "umask", fmt.Sprintf("%q", fmt.Sprintf("%04o", *p.Umask)), c("umask"))
	}
	if p.NoNewPrivs {
		w.kv(2, "no_new_privs", "true", c("no_new_privs"))
	}
	if len(p.AmbientCaps) > 0 {
		w.kv(2, "capabilities", "{ambient: "+list(p.AmbientCaps)+"}", c("capabilities"))
	}
}

// ruleFlow writes one restart.rules entry as a flow mapping.
func ruleFlow(x ExitRule) string {
	var f []string
	var codes []string
	if x.In != nil {
		codes = append(codes, "in: "+ints(x.In))
	}
	if x.NotIn != nil {
		codes = append(codes, "not_in: "+ints(x.NotIn))
	}
	if len(codes) > 0 {
		f = append(f, "exit_codes: {"+strings.Join(codes, ", ")+"}")
	}
	if len(x.Signals) > 0 {
		names := make([]string, len(x.Signals))
		for i, s := range x.Signals {
			names[i] = unix.SignalName(s)
		}
		f = append(f, "signals: "+list(names))
	}
	f = append(f, "action: "+quote(x.Action.String()))
	return "{" + strings.Join(f, ", ") + "}"
}

// reload writes the reload block: a signal or a command.
func (w *writer) reload(r *Reload, c func(string) string) {
	if r == nil {
		return
	}
	if r.Signal != 0 {
		w.kv(2, "reload", "{signal: "+unix.SignalName(r.Signal)+"}", c("reload"))
		return
	}
	w.kv(2, "reload", "", c("reload"))
	w.kv(3, "command", command(r.Command, r.Shell), "")
}

// watch writes the watch block.
func (w *writer) watch(x *Watch, c func(string) string) {
	if x == nil {
		return
	}
	w.kv(2, "watch", "", c("watch"))
	w.kv(3, "paths", list(x.Paths), "")
	if len(x.Ignore) > 0 {
		w.kv(3, "ignore", list(x.Ignore), "")
	}
	w.kv(3, "debounce", FormatDuration(x.Debounce), "")
	w.kv(3, "cascade", strconv.FormatBool(x.Cascade), "")
	if x.Signal != 0 {
		w.kv(3, "action", quote("signal "+strings.TrimPrefix(unix.SignalName(x.Signal), "SIG")), "")
	}
}

// schedule writes the schedule block (a oneshot's).
func (w *writer) schedule(s *Schedule, c func(string) string) {
	if s == nil {
		return
	}
	w.kv(2, "schedule", "", c("schedule"))
	if s.Cron != "" {
		w.kv(3, "cron", quote(s.Cron), "")
		if s.Location != nil && s.Location != time.Local {
			w.kv(3, "timezone", quote(s.Location.String()), "")
		}
	} else {
		w.kv(3, "every", FormatDuration(s.Every), "")
	}
	if s.Jitter > 0 {
		w.kv(3, "jitter", FormatDuration(s.Jitter), "")
	}
	w.kv(3, "concurrency", concurrencyWords[s.Concurrency], "")
}
