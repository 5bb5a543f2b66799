package config

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-multierror"
)

// Error is one problem in a config file. Parse and Load collect every Error
// they find and return them together as a *multierror.Error (see newErrorList).
type Error struct {
	Pos  Pos    // where the problem is; Line 0 means the file as a whole
	Path string // dotted location in the document, e.g. processes.app.depends_on
	Msg  string
	Hint string // optional advice, printed in parentheses

	cause error // underlying error, for errors.Is/As (file system errors)
}

// Error formats e as `procs.yaml:12:5 processes.app.depends_on: msg (hint)`.
// Path, Msg and Hint are kept on one line so that every line of a formatted
// error list starts with a file name.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	if e.Path != "" {
		b.WriteByte(' ')
		b.WriteString(oneLine(e.Path))
	}
	b.WriteString(": ")
	b.WriteString(oneLine(e.Msg))
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(oneLine(e.Hint))
		b.WriteByte(')')
	}
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.cause }

// String formats p as file:line:col, leaving out what is unknown.
func (p Pos) String() string {
	s := p.File
	if p.Line > 0 {
		s += ":" + strconv.Itoa(p.Line)
		if p.Col > 0 {
			s += ":" + strconv.Itoa(p.Col)
		}
	}
	return s
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// newErrorList sorts errs by position and wraps them in a *multierror.Error
// that prints one error per line, without multierror's "N errors occurred"
// header. It returns nil for an empty list.
func newErrorList(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
	list := make([]error, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	return &multierror.Error{Errors: list, ErrorFormat: formatErrors}
}

func formatErrors(errs []error) string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// yamlLineError matches the errors yaml.v3 returns for malformed input.
var yamlLineError = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// fromYAMLError turns a yaml.v3 syntax error into an Error. yaml.v3 gives a
// line but no column.
func fromYAMLError(file string, err error) *Error {
	msg := err.Error()
	if m := yamlLineError().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{Pos: Pos{File: file, Line: line}, Msg: "invalid YAML: " + m[2]}
	}
	return &Error{Pos: Pos{File: file}, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}
