package importer

import (
	"path"
	"strconv"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// A logger is an s6 service whose stdin is another service's stdout: an
// s6-rc consumer (consumer-for, with producer-for on the producer) or a
// services.d service's log/ directory. podvisor cannot pipe one process's
// output into another, so the logger is left out; when it is s6-log
// writing to a directory, the producer's stdout goes to that directory's
// `current` file instead (podvisor rotates it), else to podvisor's log.

// consumer converts an s6-rc logger: its producers get its log directory
// and its dependencies.
func (c *s6Conv) consumer(s *s6Service, services map[string]*s6Service) {
	var prods []string
	for _, name := range s.consumerFor {
		prod, ok := services[name]
		p := c.m.Process(sanitizeName(name))
		if !ok || p == nil || prod.producerFor != s.name {
			if !c.dropped[name] {
				c.r.Fail(s.dir+"/consumer-for", s.name+": consumer for "+name, "no converted longrun "+name+" with producer-for "+s.name+" (s6-rc-compile refuses that too)")
			}
			continue
		}
		prods = append(prods, name)
		c.logTo(p, s.name, s.dir, s.dir+"/run")
		c.r.AsIs(prod.dir+"/producer-for", name+": producer-for "+s.name)
		// The logger starts before its producer in s6-rc; what it waits
		// for (a log directory made by a oneshot) the producer now waits for.
		p.DependsOn = append(p.DependsOn, c.depList(s, services)...)
	}
	if len(prods) > 0 {
		c.r.Drop(s.dir, s.name, "a logger (consumer-for "+strings.Join(prods, ", ")+"): podvisor cannot pipe a process's output into another process; the producer's output is logged as its log: key says")
	}
	if s.pipelineName != "" {
		c.r.AsIs(s.dir+"/pipeline-name", s.name+": pipeline-name "+s.pipelineName+" (a bundle of the pipeline's services)")
	}
}

// legacyLogger converts services.d/NAME/log, the logger s6-svscan pipes
// NAME's stdout into.
func (c *s6Conv) legacyLogger(p *Process, name, dir string) {
	c.logTo(p, name+"/log", dir, dir+"/run")
	c.r.Drop(dir, name+"/log", "a logger: podvisor cannot pipe a process's output into another process; "+name+"'s output is logged as its log: key says")
}

// logTo gives the producer p the logger's destination: the s6-log
// directory its run script names, else podvisor's own log (said).
func (c *s6Conv) logTo(p *Process, logger, dir, run string) {
	text, ok := c.read(run)
	if !ok {
		note(p, c.r, run, "log", "its stdout went to the logger "+logger+", which has no run script; podvisor logs it")
		return
	}
	_, _, body := scriptBody(text)
	words, err := splitWords(strings.Join(body, " "))
	for err == nil && len(words) > 0 {
		switch {
		case words[0] == "exec" || isWithContenv(words[0]):
			words = words[1:]
			continue
		case (words[0] == "s6-setuidgid" || words[0] == "s6-envuidgid") && len(words) > 1:
			words = words[2:]
			continue
		}
		break
	}
	if err != nil || len(words) == 0 || path.Base(words[0]) != "s6-log" {
		note(p, c.r, run, "log", "its stdout went to the logger "+logger+" (not s6-log writing to a directory); podvisor cannot pipe it there and logs it itself")
		return
	}
	sl, ok := parseS6Log(words[1:], dir)
	if !ok {
		note(p, c.r, run, "log", "its stdout went to the logger "+logger+" (s6-log with a script import does not read: one log directory, n, s, T, t); podvisor logs it itself")
		return
	}
	p.Log.Stdout, p.Log.File = config.DestFile, path.Join(sl.dir, "current")
	p.Log.MaxFiles = min(max(sl.files+1, 2), 1000) // podvisor counts the current file
	p.Log.MaxSize = max(sl.size, config.MinLogMaxSize)
	p.Log.Timestamps = sl.stamps
	how := []string{"its stdout went to " + logger + ", s6-log writing to " + sl.dir + ": podvisor writes it to " + p.Log.File + " itself, rotated"}
	if sl.size < config.MinLogMaxSize {
		how = append(how, "s6-log rotates at "+strconv.FormatInt(sl.size, 10)+" bytes, podvisor at 1MiB at least")
	}
	if sl.stamps {
		how = append(how, "podvisor's timestamps are RFC 3339, not TAI64N")
	}
	how = append(how, sl.unsupported...)
	note(p, c.r, run, "log", strings.Join(how, "; "))
}

type s6LogScript struct {
	dir         string
	files       int   // n: archived files kept
	size        int64 // s: bytes before rotation
	stamps      bool
	unsupported []string
}

// parseS6Log reads the options and the logging script of s6-log: the
// one log directory (absolute, or relative to the logger's service
// directory), n, s, T and t. Selection (+ - f), forwarding to fd 1 or 2,
// processors and status files are not kept (said).
func parseS6Log(args []string, dir string) (s6LogScript, bool) {
	sl := s6LogScript{files: 10, size: 99999}
	// Options: -q -v -b -p -e, and -d -l -t with a number (joined or not).
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' || !strings.ContainsRune("qvbpedlt", rune(a[1])) {
			break
		}
		if _, err := strconv.Atoi(a[2:]); len(a) > 2 && strings.ContainsRune("dlt", rune(a[1])) && err != nil {
			break // a -regex directive, not an option
		}
		i++
		if len(a) == 2 && strings.ContainsRune("dlt", rune(a[1])) {
			i++ // its value
		}
	}
	seen := map[string]bool{}
	say := func(s string) {
		if !seen[s] {
			seen[s] = true
			sl.unsupported = append(sl.unsupported, s)
		}
	}
	for ; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "":
		case w[0] == '/' || w[0] == '.':
			if sl.dir != "" {
				return sl, false // several directories
			}
			sl.dir = w
			if w[0] == '.' {
				sl.dir = path.Join(dir, w)
			}
		case w[0] == 'n' && len(w) > 1:
			n, err := strconv.Atoi(w[1:])
			if err != nil || n < 0 {
				return sl, false
			}
			sl.files = n
		case w[0] == 's' && len(w) > 1:
			n, err := strconv.ParseInt(w[1:], 10, 64)
			if err != nil || n <= 0 {
				return sl, false
			}
			sl.size = n
		case w == "T" || w == "t":
			sl.stamps = true
		case w[0] == '+' || w[0] == '-' || w == "f":
			say("its line selection (+, -, f) is not applied: every line is written")
		case w == "1" || w == "2":
			say("s6-log also copied lines to its stdout or stderr; podvisor writes them to the file only")
		case w[0] == '!':
			say("its processor (!) is not run")
		default:
			say("s6-log's " + strconv.Quote(w) + " is not kept")
		}
	}
	return sl, sl.dir != "" && !dirLike(sl.dir)
}
