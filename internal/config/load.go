package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Load reads and parses the config file at path (see Parse). It refuses,
// without blocking, anything but a regular file of at most MaxFileSize bytes.
// Every error it returns is a *multierror.Error of *Error values.
func Load(path string, lookupEnv func(string) (string, bool)) (*Config, error) {
	data, err := readRegularFile(path, MaxFileSize)
	if err != nil {
		e := &Error{Pos: Pos{File: path}, Msg: err.Error(), cause: err}
		if errors.Is(err, fs.ErrNotExist) {
			e.Hint = "pass -c FILE or set PODVISOR_CONFIG to use another file"
		}
		return nil, newErrorList([]*Error{e})
	}
	return Parse(path, data, lookupEnv)
}

// readRegularFile reads a regular file of at most limit bytes. The open is
// non-blocking so that a FIFO without a writer cannot hang it; the type is
// then checked on the open descriptor, and the size both before and while
// reading, since the file may grow in between. Errors do not repeat the path.
func readRegularFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("cannot open: %w", pe.Err)
		}
		return nil, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot stat: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("is %s, not a regular file", fileKind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("file is %d bytes, larger than the limit of %d bytes", fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("file is larger than the limit of %d bytes", limit)
	}
	return data, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}

// Parse parses and validates a config file's contents. name is the file's
// path: it prefixes every error, and relative paths in the config
// (working_dir, env_file, file probes) resolve against its directory, which
// becomes Config.Dir. ${VAR} values come from lookupEnv only (nil means an
// empty environment). On failure it returns a *multierror.Error holding every
// problem found as *Error values sorted by position, printed one per line.
//
// Parse is a function of its inputs apart from reading env_file files and
// the user database (for `user:`). Choices made
// beyond docs/reference.md:
//
//   - The input must be UTF-8 without NUL bytes; a leading UTF-8 byte order
//     mark is skipped. One YAML document only; anchors and aliases are
//     refused outright, which bounds the work for any input.
//   - Durations are Go durations with a unit (bare 0 is allowed), not
//     negative, at most MaxDuration.
//   - Process names must also differ in more than case.
//   - stop.signal is a name (SIGTERM, TERM or term), never a number;
//     SIGKILL and SIGSTOP are refused. stop.timeout 0s means SIGKILL right
//     after the stop signal.
//   - restart: always is refused for a oneshot or job.
//   - working_dir defaults to Config.Dir; directories and commands are not
//     checked for existence, since an earlier process may create them.
//   - depends_on conditions are stored as written; the rules "ready on a
//     oneshot means completed" and "ready without a probe means started"
//     are the supervisor's.
func Parse(name string, data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	l := newLoader(name, lookupEnv)
	root := l.parseYAML(data)
	if root == nil {
		return nil, newErrorList(l.errs)
	}
	cfg := l.config(root)
	if err := newErrorList(l.errs); err != nil {
		return nil, err
	}
	return cfg, nil
}

func newLoader(name string, lookupEnv func(string) (string, bool)) *loader {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		dir = filepath.Dir(name)
	}
	return &loader{file: name, dir: dir, lookup: lookupEnv}
}

var bom = []byte("\xef\xbb\xbf")

// parseYAML checks the encoding, parses exactly one document, refuses
// anchors and aliases, and returns the document's top node, or nil after
// recording the errors.
func (l *loader) parseYAML(data []byte) *yaml.Node {
	offset := 0
	if bytes.HasPrefix(data, bom) {
		data, offset = data[len(bom):], len(bom)
	}
	if i := invalidUTF8(data); i >= 0 {
		l.errs = append(l.errs, &Error{Pos: bytePos(l.file, data, i),
			Msg: fmt.Sprintf("invalid UTF-8 at byte offset %d", i+offset), Hint: "save the file as UTF-8"})
		return nil
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		l.errs = append(l.errs, &Error{Pos: bytePos(l.file, data, i),
			Msg: fmt.Sprintf("NUL byte at byte offset %d", i+offset), Hint: "save the file as UTF-8 text"})
		return nil
	}

	doc, more, err := decodeDocuments(data)
	if err != nil {
		l.errs = append(l.errs, fromYAMLError(l.file, err))
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		l.errs = append(l.errs, &Error{Pos: Pos{File: l.file, Line: 1, Col: 1},
			Msg: "no configuration: the file is empty", Hint: "define at least one process under processes"})
		return nil
	}
	if more != nil {
		l.errorf(more, nil, "more than one YAML document").Hint = "remove the --- separator; one file holds one config"
		return nil
	}
	if first, count := findAliases(&doc); first != nil {
		l.errorf(first, nil, "anchors and aliases are not supported (%d found)", count).Hint =
			"write the values out; aliases are refused so that a small file cannot expand into a huge one"
		return nil
	}
	return doc.Content[0]
}

// decodeDocuments decodes the first document and reports whether another
// follows (as that document's first node). A panic inside the YAML parser is
// turned into an error: malformed input must never crash podvisor.
func decodeDocuments(data []byte) (doc yaml.Node, more *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: parser failure: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return doc, nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
		return doc, nil, nil
	case err != nil:
		return doc, nil, err
	}
	if len(next.Content) > 0 {
		return doc, next.Content[0], nil
	}
	return doc, &next, nil
}

// findAliases returns the first node (in document order) carrying an anchor
// or being an alias, and how many there are. It walks with an explicit stack:
// the parser allows nesting deeper than is safe to recurse.
func findAliases(doc *yaml.Node) (*yaml.Node, int) {
	var (
		first *yaml.Node
		count int
	)
	stack := []*yaml.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Anchor != "" || n.Kind == yaml.AliasNode {
			count++
			if first == nil || n.Line < first.Line || (n.Line == first.Line && n.Column < first.Column) {
				first = n
			}
		}
		stack = append(stack, n.Content...)
	}
	return first, count
}

// invalidUTF8 returns the offset of the first byte that is not valid UTF-8,
// or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// bytePos converts a byte offset into a line and a column counted in
// characters, as the YAML parser counts them.
func bytePos(file string, b []byte, off int) Pos {
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return Pos{File: file, Line: line, Col: utf8.RuneCount(before[lineStart:]) + 1}
}
