package config

import (
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Dest is where one output stream of a process goes.
type Dest string

const (
	DestInherit Dest = "inherit" // podvisor's stdout, framed (`name | line` or JSON)
	DestFile    Dest = "file"    // the process's own file, rotated by size
	DestOff     Dest = "off"     // discarded (still seen by the tail and a log readiness check)
)

// Defaults of the file keys of log.
const (
	DefaultLogMaxSize  = 10 << 20
	DefaultLogMaxFiles = 5
	// MinLogMaxSize is the smallest max_size: smaller files would rotate every
	// few reads of a busy stream.
	MinLogMaxSize = 1 << 20
	// NamePlaceholder in log.file is replaced by the process's name.
	NamePlaceholder = "{name}"
)

// Output is where a process's stdout and stderr go: its own log keys over
// the top-level ones. At the top level it is the default for every process,
// with File and StderrFile still holding {name}.
type Output struct {
	Stdout, Stderr Dest
	// File is stdout's file, StderrFile stderr's: absolute. When both
	// streams go to the same file, their lines are merged there.
	File, StderrFile string
	MaxSize          int64 // bytes; a file is rotated before it grows past this
	MaxFiles         int   // files kept, the current one included (>= 2)
	Compress         bool  // gzip rotated files
	Format           string
	Timestamps       bool
}

// UsesFile reports whether a stream goes to a file.
func (o Output) UsesFile() bool { return o.Stdout == DestFile || o.Stderr == DestFile }

// Files returns the files o writes, stdout's first; merged streams give one.
func (o Output) Files() []string {
	var out []string
	if o.Stdout == DestFile {
		out = append(out, o.File)
	}
	if o.Stderr == DestFile && (o.Stdout != DestFile || o.StderrFile != o.File) {
		out = append(out, o.StderrFile)
	}
	return out
}

var (
	// outputKeys are the log keys a process may set; the top level has
	// them too, as the default for all.
	outputKeys = []string{"stdout", "stderr", "file", "stderr_file", "max_size", "max_files", "compress", "format", "timestamps"}
	destWords  = []string{string(DestInherit), string(DestFile), string(DestOff)}
)

func defaultOutput() Output {
	return Output{Stdout: DestInherit, Stderr: DestInherit, MaxSize: DefaultLogMaxSize, MaxFiles: DefaultLogMaxFiles, Format: "text"}
}

// output decodes the output keys of f over base. At the top level (proc
// "") a file must name {name}: every process would write one file otherwise.
func (l *loader) output(f fieldSet, path *keyPath, base Output, topLevel bool) Output {
	out := base
	if p, ok := f.get("stdout"); ok {
		if w, ok := l.word(p.val, path.field("stdout"), "log destination", destWords); ok {
			out.Stdout = Dest(w)
		}
	}
	if p, ok := f.get("stderr"); ok {
		if w, ok := l.word(p.val, path.field("stderr"), "log destination", destWords); ok {
			out.Stderr = Dest(w)
		}
	}
	for _, k := range []string{"file", "stderr_file"} {
		p, ok := f.get(k)
		if !ok {
			continue
		}
		kpath := path.field(k)
		file := l.path(p.val, kpath)
		if file == "" {
			l.badLogDefaults = l.badLogDefaults || topLevel
			continue
		}
		if topLevel && !strings.Contains(file, NamePlaceholder) {
			l.errorf(p.val, kpath, "a log file for every process must contain {name}").Hint =
				`such as /var/log/podvisor/{name}.log; or set the file under each process's log`
			l.badLogDefaults = true
			continue
		}
		if v := p.val.Value; strings.HasSuffix(v, "/") || strings.HasSuffix(v, "/.") || strings.HasSuffix(v, "/..") || v == "." || v == ".." {
			l.errorf(p.val, kpath, "log file %q is a directory", v).Hint = "name the file, such as app.log"
			l.badLogDefaults = l.badLogDefaults || topLevel
			continue
		}
		if k == "file" {
			out.File = file
		} else {
			out.StderrFile = file
		}
	}
	if p, ok := f.get("max_size"); ok {
		if v, ok := l.size(p.val, path.field("max_size")); ok {
			if v < MinLogMaxSize {
				l.errorf(p.val, path.field("max_size"), "log max_size %s is below 1MiB", p.val.Value).Hint = "use 1MiB or more"
			} else {
				out.MaxSize = v
			}
		}
	}
	if p, ok := f.get("max_files"); ok {
		if v, ok := l.integer(p.val, path.field("max_files")); ok {
			if v < 2 || v > 1000 {
				l.errorf(p.val, path.field("max_files"), "log max_files %d is out of range 2-1000", v).Hint =
					"the files kept, the current one included"
			} else {
				out.MaxFiles = v
			}
		}
	}
	if p, ok := f.get("compress"); ok {
		out.Compress, _ = l.boolean(p.val, path.field("compress"))
	}
	if p, ok := f.get("format"); ok {
		if w, ok := l.word(p.val, path.field("format"), "log format", logFormats); ok {
			out.Format = w
		}
	}
	if p, ok := f.get("timestamps"); ok {
		out.Timestamps, _ = l.boolean(p.val, path.field("timestamps"))
	}
	return out
}

// processOutput resolves a process's output: its log keys (n, or nil) over
// the top-level ones, {name} replaced, files checked. at is where to report
// a missing file.
func (l *loader) processOutput(name string, n, at *yaml.Node, path *keyPath) Output {
	out := l.logDefaults
	bad := l.badLogDefaults
	if n != nil {
		before := len(l.errs)
		if f, ok := l.fields(n, path, outputKeys); ok {
			out = l.output(f, path, out, false)
		}
		bad = len(l.errs) > before // reported already: no "no file" on top
		at = n
	}
	out.File = strings.ReplaceAll(out.File, NamePlaceholder, name)
	out.StderrFile = strings.ReplaceAll(out.StderrFile, NamePlaceholder, name)
	if out.StderrFile == "" {
		out.StderrFile = out.File // merged
	}
	switch {
	case bad:
	case out.Stdout == DestFile && out.File == "":
		l.errorf(at, path, "stdout goes to a file but no log.file is set").Hint = "set log.file, such as /var/log/podvisor/{name}.log"
	case out.Stderr == DestFile && out.StderrFile == "":
		l.errorf(at, path, "stderr goes to a file but neither log.stderr_file nor log.file is set").Hint = "set log.file (stderr then shares it) or log.stderr_file"
	}
	if out.Stdout != DestFile {
		out.File = ""
	}
	if out.Stderr != DestFile {
		out.StderrFile = ""
	}
	return out
}

// fileOwners reports a log file written by two processes: rotating one file
// from two writers would lose lines.
func (l *loader) fileOwners(cfg *Config) {
	owner := map[string]string{}
	for _, name := range cfg.Names {
		p := cfg.Processes[name]
		for _, f := range p.Log.Files() {
			if o, ok := owner[f]; ok {
				l.errorf(l.logNodes[name], top("processes").field(name).field("log"), "log file %s is also %q's", f, o).Hint =
					"give each process its own file; stdout and stderr of one process may share one"
				continue
			}
			owner[f] = name
		}
	}
}

// size parses a byte size: a whole number of bytes, or a number with a unit
// B, K/KB/KiB, M/MB/MiB, G/GB/GiB. The units are binary (K = 1024), as in
// supervisord's logfile_maxbytes.
func (l *loader) size(n *yaml.Node, path *keyPath) (int64, bool) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!str") {
		l.errorf(n, path, "expected a size such as 10MiB, got %s", describe(n))
		return 0, false
	}
	v, err := parseSize(n.Value)
	if err != "" {
		l.errorf(n, path, "invalid size %q: %s", n.Value, err).Hint = "use a number of bytes or a unit: 512KiB, 10MiB, 1GiB"
		return 0, false
	}
	return v, true
}

func parseSize(s string) (int64, string) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, "no number"
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	var mult int64
	switch strings.ToLower(unit) {
	case "", "b":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	default:
		return 0, "unknown unit " + strconv.Quote(unit)
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v > math.MaxInt64/mult || v*mult > 1<<40 {
		return 0, "too large"
	}
	return v * mult, ""
}
