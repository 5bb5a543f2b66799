// Package importer converts the configuration of other process supervisors
// (supervisord, process-compose, Procfile, s6-overlay, systemd units) into a
// procs.yaml.
//
// The converters are pure: each takes file contents (a Source per file, read
// by the caller) and returns a Model (a config.Document of config.Process
// values, each with its Written annotation; process.go) and a Report. Reading the files and directory trees is walk.go's job, writing
// YAML is config.Write's; neither knows any format. Every directive a converter meets ends up in the Report:
// converted as it is, approximated (and how), or dropped (and why); every
// approximation is also a comment beside the key in the written file.
package importer

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
)

// Format names a supported input format, as --from spells it.
type Format string

const (
	Supervisord    Format = "supervisord"
	ProcessCompose Format = "process-compose"
	Procfile       Format = "procfile"
	S6             Format = "s6"
	Systemd        Format = "systemd"
)

// Formats lists the formats in the order help shows them.
var Formats = []Format{Supervisord, ProcessCompose, Procfile, S6, Systemd}

// Source is one input file: its path (as it should appear in messages)
// and its contents.
type Source struct {
	Path string
	Data []byte
}

// The converters build config's own model of a procs.yaml (the loader's
// Process, with its Written annotation) and write it with config.Write (the
// one writer of procs.yaml); these are the importer's names for its types.
type (
	Model   = config.Document
	Process = config.Process
	Dep     = config.Dependency
	Probe   = config.Probe
)

// note records an approximation: a comment beside key, and a report entry.
func note(p *Process, r *Report, pos, key, how string) {
	p.Comment(key, how)
	r.Approx(pos, p.Name+"."+key, how)
}

// Kind classifies a report entry.
type Kind uint8

const (
	AsIs Kind = iota
	Approximated
	Dropped
	Failed // could not be converted: import exits 1
)

var kindNames = [...]string{AsIs: "converted as is", Approximated: "approximated", Dropped: "dropped", Failed: "not converted"}

func (k Kind) String() string { return kindNames[k] }

// Entry is one line of the report.
type Entry struct {
	Kind   Kind
	Pos    string // file:line
	What   string // directive or key
	Detail string // how (approximated), why (dropped, failed)
	beside bool   // an approximation also written as a comment beside its key
}

func (e Entry) String() string {
	s := e.Pos
	if s != "" {
		s += ": "
	}
	s += e.What
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Report collects what happened to every directive.
type Report struct {
	Entries []Entry
	seen    map[Entry]bool
}

func (r *Report) add(k Kind, pos, what, detail string) {
	r.addEntry(Entry{Kind: k, Pos: pos, What: what, Detail: detail})
}

func (r *Report) addEntry(e Entry) {
	if r.seen == nil {
		r.seen = map[Entry]bool{}
	}
	if r.seen[e] {
		return // numprocs and replicas copies say the same thing once
	}
	r.seen[e] = true
	r.Entries = append(r.Entries, e)
}

// AsIs records a directive converted without change of meaning.
func (r *Report) AsIs(pos, what string) { r.add(AsIs, pos, what, "") }

// Approx records an approximated directive and how.
func (r *Report) Approx(pos, what, how string) { r.add(Approximated, pos, what, how) }

// approxBeside records an approximation whose comment is beside its key
// in the written file, so the file's header need not repeat it.
func (r *Report) approxBeside(pos, what, how string) {
	r.addEntry(Entry{Kind: Approximated, Pos: pos, What: what, Detail: how, beside: true})
}

// Drop records a dropped directive and why.
func (r *Report) Drop(pos, what, why string) { r.add(Dropped, pos, what, why) }

// Fail records something that could not be converted.
func (r *Report) Fail(pos, what, why string) { r.add(Failed, pos, what, why) }

// Failed reports whether something could not be converted.
func (r *Report) Failed() bool {
	for _, e := range r.Entries {
		if e.Kind == Failed {
			return true
		}
	}
	return false
}

// ParseError is input that cannot be read as its format at all (import
// exits 2). Pos is file:line.
type ParseError struct {
	Pos string
	Msg string
}

func (e *ParseError) Error() string {
	if e.Pos == "" {
		return e.Msg
	}
	return e.Pos + ": " + e.Msg
}

// ParseErrors is every syntax error of the inputs, one per line.
type ParseErrors []*ParseError

func (es ParseErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// errs returns es as an error: nil when empty, the single error, or the list.
func (es ParseErrors) err() error {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	return es
}

func perr(file string, line int, format string, args ...any) *ParseError {
	return &ParseError{Pos: fmt.Sprintf("%s:%d", file, line), Msg: fmt.Sprintf(format, args...)}
}

func at(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

// finish checks what every converter's result must satisfy before it is
// written, recording a failure instead of writing a file podvisor would
// refuse: at least one process, and text without NUL bytes or invalid
// UTF-8 (which no YAML file can carry).
func finish(m *Model, r *Report) {
	if len(m.Processes) == 0 {
		r.Fail("", "processes", "nothing to convert: no process was found")
		return
	}
	m.Env = dedupEnv(m.Env)
	for _, p := range m.Processes {
		p.Env = dedupEnv(p.Env)
		p.DependsOn = dedupDeps(p.DependsOn)
		clampDurations(p, r)
		// remain_after_exit means something only where a success exit is
		// not restarted (config refuses it elsewhere).
		p.RemainAfterExit = p.RemainAfterExit && p.Type == config.Service && p.Restart.Policy != config.Always
	}
	bad := func(s string) bool { return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) }
	for _, p := range m.Processes {
		if p.Command == nil { // as a string: "" (refused below)
			p.Command, p.Shell = shellForm(""), true
		}
		checkProcess(p, r, bad)
	}
	checkGraph(m, r)
	shareNoLogFile(m, r)
	headerApproximations(m, r)
	for _, kv := range m.Env {
		if bad(kv) {
			k, _, _ := strings.Cut(kv, "=")
			r.Fail("", "environment "+k, "contains a NUL byte or invalid UTF-8")
		}
	}
}

// checkProcess records as failures what podvisor would refuse in p: an
// empty command, a malformed user, text no YAML file can carry (bad).
func checkProcess(p *Process, r *Report, bad func(string) bool) {
	w := p.Written
	texts := append([]string{p.Name, p.WorkingDir, userSpec(p)}, p.Command...)
	texts = append(texts, p.Stop.Command...)
	texts = append(texts, w.EnvFile...)
	texts = append(texts, p.Log.File, p.Log.StderrFile)
	texts = append(texts, p.Env...)
	empty := emptyCommand(p.Command, p.Shell)
	for _, pr := range []*Probe{p.Ready, p.Live} {
		if pr == nil {
			continue
		}
		texts = append(append(texts, pr.Target), pr.Command...)
		if pr.Kind == config.ProbeExec && emptyCommand(pr.Command, pr.Shell) {
			empty = true
		}
	}
	if p.Stop.Command != nil && emptyCommand(p.Stop.Command, p.Stop.Shell) {
		empty = true
	}
	if empty {
		r.Fail(w.Origin, p.Name, "a command (or an exec probe) is empty; write the command")
	}
	if slices.ContainsFunc(w.EnvFile, func(f string) bool { return strings.TrimSpace(f) == "" }) {
		r.Fail(w.Origin, p.Name+" env_file", "a file name is empty")
	}
	if slices.ContainsFunc(p.SuccessExitCodes, func(c int) bool { return c < 0 || c > 255 }) {
		r.Fail(w.Origin, p.Name+" success exit codes", fmt.Sprintf("%v: exit codes are 0 to 255", p.SuccessExitCodes))
	}
	if p.User != nil && !validUser(p.User.Spec) {
		r.Fail(w.Origin, p.Name+" user "+p.User.Spec, "not a user podvisor can run as: want name, uid, name:group or uid:gid")
	}
	if slices.ContainsFunc(texts, bad) {
		r.Fail(w.Origin, p.Name, "contains a NUL byte or invalid UTF-8; save the file as UTF-8 text")
	}
}

// maxEdges bounds the dependencies a conversion may produce (replicas
// depending on replicas multiply): far above a real setup, low enough that
// writing and checking the result stays instant.
const maxEdges = 20000

// checkGraph records as failures the dependencies podvisor would refuse:
// on an unknown process, on itself, `completed` on a service, and cycles
// (with their path).
func checkGraph(m *Model, r *Report) {
	edges := 0
	byName := map[string]*Process{}
	for _, p := range m.Processes {
		byName[p.Name] = p
		edges += len(p.DependsOn)
	}
	if edges > maxEdges {
		r.Fail("", "depends_on", fmt.Sprintf("%d dependencies after expanding numprocs, replicas and priorities, more than %d; lower the counts", edges, maxEdges))
		return
	}
	for _, p := range m.Processes {
		for _, d := range p.DependsOn {
			dep, ok := byName[d.Name]
			switch {
			case !ok:
				r.Fail(p.Written.Origin, p.Name+" depends on "+d.Name, "no such process was converted")
			case d.Name == p.Name:
				r.Fail(p.Written.Origin, p.Name+" depends on itself", "remove the dependency")
			case d.Condition == graph.Completed && dep.Type == config.Service:
				r.Fail(p.Written.Origin, p.Name+" waits for "+d.Name+" to complete", d.Name+" is a long-running service; wait for it to be started or ready instead")
			}
		}
	}
	// Cycles: depth-first search, reporting each cycle once.
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string)
	visit = func(n string) {
		state[n] = active
		stack = append(stack, n)
		for _, d := range byName[n].DependsOn {
			if _, ok := byName[d.Name]; !ok || d.Name == n {
				continue
			}
			switch state[d.Name] {
			case unvisited:
				visit(d.Name)
			case active:
				i := slices.Index(stack, d.Name)
				path := append(slices.Clone(stack[i:]), d.Name)
				r.Fail(byName[d.Name].Written.Origin, "dependency cycle", strings.Join(path, " -> ")+"; remove one of these dependencies")
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for _, p := range m.Processes {
		if state[p.Name] == unvisited {
			visit(p.Name)
		}
	}
}

// validUser reports whether s is a well-formed user: spec (podvisor checks
// that the names exist only where it runs).
func validUser(s string) bool {
	u, g, hasGroup := strings.Cut(s, ":")
	ok := func(part string) bool {
		if part == "" || strings.ContainsAny(part, ": \t") {
			return false
		}
		if strings.Trim(part, "0123456789") == "" {
			n, err := strconv.ParseUint(part, 10, 32)
			return err == nil && n != 1<<32-1
		}
		return true
	}
	return ok(u) && (!hasGroup || ok(g))
}

// dedupEnv keeps one entry per key, with the last value (every tool here
// lets a later assignment win), at the place of the first.
func dedupEnv(env []string) []string {
	idx := map[string]int{}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// maxDuration is the longest duration podvisor accepts.
const maxDuration = 24 * time.Hour

// clampDurations caps every duration at podvisor's maximum, noting it.
func clampDurations(p *Process, r *Report) {
	clamp := func(key string, d *time.Duration) {
		if *d > maxDuration {
			note(p, r, p.Written.Origin, key, fmt.Sprintf("%s is longer than podvisor's maximum; 24h", config.FormatDuration(*d)))
			*d = maxDuration
		}
	}
	clamp("start_timeout", &p.StartTimeout)
	clamp("stop", &p.Stop.Timeout)
	if p.Written.Restart {
		clamp("restart", &p.Restart.Backoff)
		clamp("restart", &p.Restart.MaxBackoff)
	}
	for _, pr := range []struct {
		key string
		p   *Probe
	}{{"ready", p.Ready}, {"live", p.Live}} {
		if pr.p == nil {
			continue
		}
		for _, d := range []*time.Duration{&pr.p.StartInterval, &pr.p.Interval, &pr.p.Timeout, &pr.p.InitialDelay} {
			clamp(pr.key, d)
		}
	}
}

// headerApproximations writes into the file's header every approximation
// that is not a comment beside a key (a group, a top-level setting, a
// renamed duplicate), so that the file shows all of them.
func headerApproximations(m *Model, r *Report) {
	for _, e := range r.Entries {
		if e.Kind != Approximated || e.beside {
			continue
		}
		if name, key, ok := strings.Cut(e.What, "."); ok {
			if p := m.Process(name); p != nil && strings.Contains(p.Written.Comments[key], e.Detail) {
				continue
			}
		}
		m.Header = append(m.Header, "approximated: "+e.String())
	}
}

// appendErr adds err (a *ParseError or ParseErrors) to es.
func appendErr(es ParseErrors, err error) ParseErrors {
	switch e := err.(type) {
	case *ParseError:
		return append(es, e)
	case ParseErrors:
		return append(es, e...)
	}
	return append(es, &ParseError{Msg: err.Error()})
}

// shareNoLogFile gives each process its own log files: podvisor refuses two
// processes writing one file, which supervisord allows (numprocs copies
// with one stdout_logfile). A shared name gets ".{name}" before its
// extension.
func shareNoLogFile(m *Model, r *Report) {
	owner := map[string]string{}
	for _, p := range m.Processes {
		for _, f := range []*string{&p.Log.File, &p.Log.StderrFile} {
			if *f == "" {
				continue
			}
			name := strings.ReplaceAll(*f, "{name}", p.Name)
			if o, taken := owner[name]; taken && o != p.Name {
				ext := path.Ext(*f)
				*f = strings.TrimSuffix(*f, ext) + ".{name}" + ext
				note(p, r, p.Written.Origin, "log", "the log file is also "+o+"'s; podvisor gives each process its own: "+*f)
				name = strings.ReplaceAll(*f, "{name}", p.Name)
			}
			owner[name] = p.Name
		}
	}
}

// dedupDeps keeps one dependency per name (an input may name one twice):
// the strictest condition (started, then ready, then completed), restart if
// either asked for it.
func dedupDeps(deps []Dep) []Dep {
	idx := map[string]int{}
	var out []Dep
	for _, d := range deps {
		i, ok := idx[d.Name]
		if !ok {
			idx[d.Name] = len(out)
			out = append(out, d)
			continue
		}
		out[i].Condition = max(out[i].Condition, d.Condition)
		out[i].Restart = out[i].Restart || d.Restart
	}
	return out
}
