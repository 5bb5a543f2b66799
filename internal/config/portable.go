package config

import (
	"errors"
	"io/fs"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadPortable is Load for a file written on one machine and run on another
// (an image): see ParsePortable.
func LoadPortable(path string, lookupEnv func(string) (string, bool)) (*Config, []*Error, error) {
	data, err := readRegularFile(path, MaxFileSize)
	if err != nil {
		e := &Error{Pos: Pos{File: path}, Msg: err.Error(), cause: err}
		return nil, nil, newErrorList([]*Error{e})
	}
	return ParsePortable(path, data, lookupEnv)
}

// ParsePortable is Parse, except that what only the machine that runs the
// file can answer becomes a note instead of an error:
//
//   - a user or group missing from this machine's user database (the spec
//     must still be well formed);
//   - an env_file that does not exist here, or cannot be read here (one
//     that is read must parse);
//   - a ${VAR} without a default whose VAR is unset here (it stands for
//     "1" for the rest of the check, a value every interpolated place
//     accepts).
//
// Commands and directories are never checked by Parse, so they need no
// note. The notes are sorted by position; the Config is nil when there are
// errors.
func ParsePortable(name string, data []byte, lookupEnv func(string) (string, bool)) (*Config, []*Error, error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	l := newLoader(name, lookupEnv)
	l.portable = true
	lookup := l.lookup
	l.lookup = func(k string) (string, bool) {
		if v, ok := lookup(k); ok {
			return v, true
		}
		l.noteUnset(k)
		// A stand-in that every interpolated place accepts: a command,
		// a directory, a host, a port, a path. "" would turn an unset
		// variable into a different error (an empty command).
		return "1", true
	}
	root := l.parseYAML(data)
	var cfg *Config
	if root != nil {
		cfg = l.config(root)
	}
	notes := l.notes
	_ = newErrorList(notes) // sorts them
	if err := newErrorList(l.errs); err != nil {
		return nil, notes, err
	}
	return cfg, notes, nil
}

// noteUnset records that ${k} is unset here, at the value being
// interpolated. A ${k:-default} also asks, and is not noted: the caller
// cannot tell the two apart, so the note says "unless it has a default".
func (l *loader) noteUnset(k string) {
	for _, n := range l.notes {
		if n.Pos == l.pos(l.interpNode) && strings.Contains(n.Msg, "${"+k) {
			return
		}
	}
	l.notes = append(l.notes, &Error{Pos: l.pos(l.interpNode), Path: l.interpPath.String(),
		Msg:  "variable " + k + " is not set here; it must be set where podvisor runs unless ${" + k + ":-default} gives a default",
		Hint: "not checked: --portable"})
}

// portableUser decides, in portable mode, whether a failed user lookup is a
// note (the spec is well formed, the name is just unknown here) or an error.
func (l *loader) portableUser(n *yaml.Node, path *keyPath, spec string, err error) bool {
	userPart, groupPart, hasGroup := strings.Cut(spec, ":")
	if userPart == "" || (hasGroup && groupPart == "") {
		return false
	}
	for _, part := range []string{userPart, groupPart} {
		if isDigits(part) {
			if _, perr := parseID(part); perr != nil {
				return false
			}
		}
	}
	l.notes = append(l.notes, &Error{Pos: l.pos(n), Path: path.String(),
		Msg:  err.Error() + " on this machine; it must exist in the image that runs this file",
		Hint: "not checked: --portable"})
	return true
}

// portableEnvFile decides, in portable mode, whether an env_file that
// cannot be read is a note (it does not exist here, or is not a readable
// regular file here: facts of this machine) or an error (its contents do
// not parse).
func (l *loader) portableEnvFile(n *yaml.Node, path *keyPath, err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.cause == nil {
		return false // a syntax error inside the file
	}
	msg := "env_file " + n.Value + " does not exist here; it must exist where podvisor runs"
	if !errors.Is(err, fs.ErrNotExist) {
		msg = "env_file " + n.Value + " cannot be read here (" + e.Msg + "); it must be a readable file where podvisor runs"
	}
	l.notes = append(l.notes, &Error{Pos: l.pos(n), Path: path.String(), Msg: msg, Hint: "not checked: --portable"})
	return true
}

// FormatNotes prints notes one per line, as errors are printed, each
// prefixed with "note: ".
func FormatNotes(notes []*Error) string {
	lines := make([]string, 0, len(notes))
	for _, n := range notes {
		lines = append(lines, "note: "+n.Error())
	}
	return strings.Join(lines, "\n")
}
