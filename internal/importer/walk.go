package importer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// MaxInputSize is the largest input file read.
const MaxInputSize = 1 << 20

// maxTreeFiles bounds the files read from one directory tree.
const maxTreeFiles = 10000

// Load reads the inputs at paths from the file system, detects their
// format when from is "", and converts them. A *ParseError means the input
// could not be read (import exits 2).
func Load(paths []string, from Format, opt Options) (*Model, *Report, Format, error) {
	if len(paths) == 0 {
		return nil, nil, "", &ParseError{Msg: "no input: give a file or directory"}
	}
	if from == "" {
		f, err := Detect(s6DetectPaths(paths, opt.Root))
		if err != nil {
			return nil, nil, "", err
		}
		from = f
	}
	if opt.ReadFile == nil {
		opt.ReadFile = readFile
	}
	if _, err := exec.LookPath("execlineb"); err == nil {
		opt.HasExecline = true
	}
	var (
		m   *Model
		r   *Report
		err error
	)
	switch from {
	case Supervisord:
		if len(paths) != 1 {
			return nil, nil, from, &ParseError{Msg: "supervisord: give one main file (its [include] brings the others)"}
		}
		var src Source
		// %(here)s is the absolute directory of the file, as supervisord
		// computes it.
		mainPath, _ := filepath.Abs(mainFile(paths[0], "supervisord.conf"))
		if src, err = readFile(mainPath); err == nil {
			m, r, err = ConvertSupervisord(src, supervisordInclude(opt), opt)
		}
	case ProcessCompose:
		var src Source
		p := paths[0]
		if st, e := os.Stat(p); e == nil && st.IsDir() {
			p = firstExisting(p, "process-compose.yaml", "process-compose.yml")
		}
		if src, err = readFile(p); err == nil {
			if opt.DotEnv, err = readDotenvBeside(p); err != nil {
				return nil, nil, from, err
			}
			m, r, err = ConvertProcessCompose(src, opt)
		}
	case Procfile:
		p := mainFile(paths[0], "Procfile")
		var src Source
		if src, err = readFile(p); err == nil {
			var env *Source
			if env, err = readDotenvBeside(p); err != nil {
				return nil, nil, from, err
			}
			m, r, err = ConvertProcfile(src, env, opt)
		}
	case S6:
		var files []Source
		if files, err = readS6(paths, opt.Root); err == nil {
			m, r, err = ConvertS6(files, opt)
		}
	case Systemd:
		var units []Source
		for _, p := range paths {
			if st, e := os.Stat(p); e == nil && st.IsDir() {
				matches, _ := filepath.Glob(filepath.Join(p, "*.service"))
				dropins, _ := filepath.Glob(filepath.Join(p, "*.service.d", "*.conf"))
				sockets, _ := filepath.Glob(filepath.Join(p, "*.socket"))
				matches = append(append(matches, dropins...), sockets...)
				sort.Strings(matches)
				for _, mm := range matches {
					src, rerr := readFile(mm)
					if rerr != nil {
						return nil, nil, from, rerr
					}
					units = append(units, src)
				}
				continue
			}
			src, rerr := readFile(templateFor(p))
			if rerr != nil {
				return nil, nil, from, rerr
			}
			src.Path = p // an instance keeps its own name
			units = append(units, src)
		}
		m, r, err = ConvertSystemd(units, opt)
	default:
		return nil, nil, from, &ParseError{Msg: fmt.Sprintf("unknown format %q (want %s)", from, formatList())}
	}
	return m, r, from, err
}

func formatList() string {
	s := make([]string, len(Formats))
	for i, f := range Formats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// mainFile returns p, or dir/name when p is a directory.
func mainFile(p, name string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, name)
	}
	return p
}

func firstExisting(dir string, names ...string) string {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n)
		}
	}
	return filepath.Join(dir, names[0])
}

// Detect guesses the format of the inputs from their names and, for
// files with a generic name, their first lines.
func Detect(paths []string) (Format, error) {
	p := paths[0]
	st, err := os.Stat(templateFor(p)) // an instance of a template unit has no file of its own
	if err != nil {
		return "", &ParseError{Pos: p, Msg: fmt.Sprintf("cannot read: %v", unwrapPath(err))}
	}
	if st.IsDir() {
		for _, try := range []struct {
			name string
			f    Format
		}{{"supervisord.conf", Supervisord}, {"process-compose.yaml", ProcessCompose}, {"process-compose.yml", ProcessCompose}, {"Procfile", Procfile}} {
			if _, err := os.Stat(filepath.Join(p, try.name)); err == nil {
				return try.f, nil
			}
		}
		if m, _ := filepath.Glob(filepath.Join(p, "*.service")); len(m) > 0 {
			return Systemd, nil
		}
		found := false
		_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				switch d.Name() {
				case "s6-rc.d", "services.d", "cont-init.d", "s6-overlay":
					found = true
					return filepath.SkipAll
				}
			}
			return nil
		})
		if found || strings.Contains(p, "s6-rc.d") || strings.Contains(p, "services.d") {
			return S6, nil
		}
		return "", &ParseError{Pos: p, Msg: "cannot tell the format of this directory; give --from " + strings.Join(strings.Split(formatList(), ", "), "|")}
	}
	base := filepath.Base(p)
	switch {
	case strings.HasSuffix(base, ".service") || strings.HasSuffix(base, ".target") || strings.HasSuffix(base, ".socket") || strings.HasSuffix(base, ".timer"):
		return Systemd, nil
	case strings.HasPrefix(base, "Procfile"):
		return Procfile, nil
	case strings.HasPrefix(base, "process-compose"):
		return ProcessCompose, nil
	case strings.HasPrefix(base, "supervisord") || strings.HasPrefix(base, "supervisor"):
		return Supervisord, nil
	}
	src, err := readFile(p)
	if err != nil {
		return "", err
	}
	text := string(src.Data)
	switch {
	case strings.Contains(text, "[program:") || strings.Contains(text, "[supervisord]"):
		return Supervisord, nil
	case strings.Contains(text, "[Service]"):
		return Systemd, nil
	case strings.Contains(text, "processes:"):
		return ProcessCompose, nil
	case procfileLine().MatchString(strings.TrimSpace(strings.SplitN(text, "\n", 2)[0])):
		return Procfile, nil
	}
	return "", &ParseError{Pos: p, Msg: "cannot tell the format of this file; give --from " + strings.Join(strings.Split(formatList(), ", "), "|")}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readFile reads a regular file of at most MaxInputSize bytes without
// blocking on a FIFO.
func readFile(p string) (Source, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Source{}, &ParseError{Pos: p, Msg: fmt.Sprintf("cannot read: %v", unwrapPath(err))}
	}
	defer f.Close()
	return readOpen(f, p)
}

// readOpen reads the open file f (named p in messages), a regular file of
// at most MaxInputSize bytes.
func readOpen(f *os.File, p string) (Source, error) {
	st, err := f.Stat()
	if err != nil {
		return Source{}, &ParseError{Pos: p, Msg: fmt.Sprintf("cannot stat: %v", unwrapPath(err))}
	}
	if !st.Mode().IsRegular() {
		return Source{}, &ParseError{Pos: p, Msg: "not a regular file"}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInputSize+1))
	if err != nil {
		return Source{}, &ParseError{Pos: p, Msg: fmt.Sprintf("cannot read: %v", unwrapPath(err))}
	}
	if len(data) > MaxInputSize {
		return Source{}, &ParseError{Pos: p, Msg: fmt.Sprintf("larger than %d bytes", MaxInputSize)}
	}
	return Source{Path: p, Data: data}, nil
}

// includeGlob is supervisord's [include]: the files matching pattern.
func includeGlob(pattern string) ([]Source, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(matches)
	var out []Source
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			continue
		}
		src, err := readFile(m)
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, nil
}

// readTree reads every regular file under dir (or dir itself when it is
// a file), with absolute paths, not following symbolic links to
// directories.
func readTree(dir string) ([]Source, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &ParseError{Pos: dir, Msg: err.Error()}
	}
	var out []Source
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &ParseError{Pos: p, Msg: fmt.Sprintf("cannot read: %v", unwrapPath(err))}
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			if d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			// dependencies.d and contents.d entries are sometimes symlinks
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				out = append(out, Source{Path: p})
				return nil
			}
		}
		if len(out) >= maxTreeFiles {
			return &ParseError{Pos: abs, Msg: fmt.Sprintf("more than %d files", maxTreeFiles)}
		}
		src, err := readFile(p)
		if err != nil {
			return err
		}
		out = append(out, src)
		return nil
	})
	return out, err
}

// templateFor returns the template unit file of an instance name
// (dir/x@1.service -> dir/x@.service) when the instance has no file of its
// own, else p.
func templateFor(p string) string {
	base := filepath.Base(p)
	prefix, inst, ok := strings.Cut(base, "@")
	if !ok || inst == ".service" || !strings.HasSuffix(inst, ".service") {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return filepath.Join(filepath.Dir(p), prefix+"@.service")
}

// RootReader returns a reader of the absolute paths a file names (systemd's
// EnvironmentFile=), resolved under root, the root file system of an image
// or a checkout (import --root). A path whose ".." or symbolic links lead
// outside root is refused (os.Root), as is a symbolic link to an absolute
// path, which would be read outside the image; the error names the path
// and root. The Source keeps the path as the file names it.
func RootReader(root string) func(string) (Source, error) {
	return func(p string) (Source, error) {
		rel, err := underRoot(root, p)
		if err != nil {
			return Source{}, err
		}
		r, err := os.OpenRoot(root)
		if err != nil {
			return Source{}, &ParseError{Pos: root, Msg: fmt.Sprintf("cannot open --root: %v", unwrapPath(err))}
		}
		defer r.Close()
		f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil && strings.Contains(err.Error(), "escapes") {
			return Source{}, fmt.Errorf("%s: %w %s: a symbolic link on the way leads out of it (an absolute one too); copy the file into the image, or import without --root", p, ErrOutsideRoot, root)
		}
		if err != nil {
			return Source{}, &ParseError{Pos: p, Msg: fmt.Sprintf("cannot read under --root %s: %v", root, unwrapPath(err))}
		}
		defer f.Close()
		src, err := readOpen(f, p)
		src.Path = p
		return src, err
	}
}

// ErrOutsideRoot is a path read under --root that would lead outside it.
var ErrOutsideRoot = errors.New("leads outside --root")

// underRoot turns the absolute path p into a path relative to root; ".."
// that would climb above root is refused.
func underRoot(root, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", &ParseError{Pos: p, Msg: "not an absolute path"}
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("%s: %w %s: \"..\" may climb out of it; write the path without \"..\"", p, ErrOutsideRoot, root)
		}
	}
	rel := strings.TrimLeft(filepath.Clean(p), "/")
	if rel == "" {
		rel = "."
	}
	return rel, nil
}

// readDotenvBeside reads the .env file in the directory of file, which
// foreman, honcho and process-compose load; nil when there is none.
func readDotenvBeside(file string) (*Source, error) {
	p := filepath.Join(filepath.Dir(file), ".env")
	if _, err := os.Stat(p); err != nil {
		return nil, nil
	}
	src, err := readFile(p)
	if err != nil {
		return nil, err
	}
	return &src, nil
}
