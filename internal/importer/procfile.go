package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
)

// procfileLine is foreman's and honcho's form: a name of letters, digits,
// _ and -, a colon, the command.
var procfileLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_-]+):[ \t]*(.*)$`) })

// procfileBasePort is foreman's and honcho's first $PORT; each further
// process gets 100 more.
const procfileBasePort = 5000

// ConvertProcfile converts a Procfile (or Procfile.dev). env, when not nil,
// is the .env file beside it; it becomes every process's env_file, named by
// its path as given.
func ConvertProcfile(src Source, env *Source, opt Options) (*Model, *Report, error) {
	r := &Report{}
	m := &Model{Header: []string{"Converted by podvisor import from a Procfile: " + src.Path}}
	r.Approx(src.Path, "process exit", "foreman/honcho stop every process when one exits; podvisor restarts the process (restart: always)")
	port := procfileBasePort
	if env != nil {
		vars, err := config.ParseEnvFile(env.Path, env.Data)
		if err != nil {
			return nil, nil, &ParseError{Pos: env.Path, Msg: err.Error()}
		}
		r.AsIs(env.Path, ".env (every process's env_file)")
		// foreman takes its base port from PORT in .env.
		for _, kv := range vars {
			if v, ok := strings.CutPrefix(kv, "PORT="); ok {
				if n, err := strconv.Atoi(v); err == nil && n > 0 && n < 65536 {
					port = n
				}
			}
		}
	}
	var errs ParseErrors
	for i, line := range lines(src.Data) {
		n := i + 1
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		mm := procfileLine().FindStringSubmatch(t)
		if mm == nil {
			errs = append(errs, perr(src.Path, n, "line %q is not NAME: COMMAND (a name of letters, digits, _ and -, then a colon)", t))
			continue
		}
		name, cmd := mm[1], strings.TrimSpace(mm[2])
		if cmd == "" {
			r.Fail(at(src.Path, n), name, "has no command; write one after the colon")
			continue
		}
		p := newProcess(sanitizeName(name), at(src.Path, n))
		p.Command, p.Shell = shellForm(config.Literal(cmd)), true
		if p.Name != name {
			note(p, r, at(src.Path, n), "name", "renamed from "+name)
		}
		r.AsIs(at(src.Path, n), name+" (run by /bin/sh -c, as foreman and honcho run it)")
		if env != nil {
			p.Written.EnvFile = []string{env.Path}
		}
		// foreman and honcho give every process type a PORT: the base,
		// then 100 more per line, whether or not the command uses it.
		if port < 65536 {
			p.Env = []string{envEntry("PORT", strconv.Itoa(port))}
			r.AsIs(at(src.Path, n), fmt.Sprintf("%s: PORT=%d, as foreman and honcho set it for this line", name, port))
		}
		port += 100
		if name == "release" {
			p.Type = config.Oneshot
			note(p, r, at(src.Path, n), "type", "release runs once (as on Heroku); a oneshot")
		}
		m.Processes = append(m.Processes, p)
	}
	if len(errs) > 0 {
		return nil, nil, errs.err()
	}
	if len(m.Processes) == 0 {
		return nil, nil, perr(src.Path, 1, "no process: a Procfile has lines NAME: COMMAND")
	}
	uniqueNames(m, r)
	finish(m, r)
	if rel := m.Process("release"); rel != nil && opt.ReleaseFirst {
		for _, p := range m.Processes {
			if p != rel {
				p.DependsOn = append(p.DependsOn, Dep{Name: rel.Name, Condition: graph.Completed})
			}
		}
		r.AsIs(rel.Written.Origin, "release: every other process waits for it to complete (--release-first)")
	}
	return m, r, nil
}
