package config

import (
	"fmt"
	"strings"
)

// interpolate expands variables in s, taking values from lookup only:
//
//	${VAR}          the value of VAR; an error if VAR is unset
//	${VAR:-default} the value of VAR, or default if VAR is unset or empty
//	$$              a literal $
//
// Any other $ is kept as it is, so $HOME or "$1" in a shell command reach the
// shell untouched. A default is literal text up to the first }: it cannot
// contain } or another ${...}.
func interpolate(s string, lookup func(string) (string, bool)) (string, error) {
	i := strings.IndexByte(s, '$')
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "$$"):
			b.WriteByte('$')
			s = s[2:]
		case strings.HasPrefix(s, "${"):
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q (write $$ for a literal $)", s)
			}
			v, err := expand(s[2:end], lookup)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			s = s[end+1:]
		default:
			b.WriteByte('$')
			s = s[1:]
		}
		i = strings.IndexByte(s, '$')
	}
	b.WriteString(s)
	return b.String(), nil
}

// expand evaluates the inside of one ${...}.
func expand(expr string, lookup func(string) (string, bool)) (string, error) {
	name, def, hasDef := strings.Cut(expr, ":-")
	if !validEnvName(name) {
		return "", fmt.Errorf("invalid variable reference ${%s}: want ${NAME} or ${NAME:-default}", expr)
	}
	if strings.Contains(def, "${") {
		return "", fmt.Errorf("nested ${...} in the default of ${%s} is not supported", name)
	}
	v, ok := lookup(name)
	switch {
	case hasDef && (!ok || v == ""):
		return def, nil
	case !ok:
		return "", &unsetError{name}
	}
	return v, nil
}

// unsetError is a ${NAME} without a default whose NAME podvisor's
// environment does not set.
type unsetError struct{ name string }

func (e *unsetError) Error() string {
	return fmt.Sprintf("variable %s is not set (give a default with ${%s:-value})", e.name, e.name)
}

// hint says where ${NAME} takes its value from: a newcomer expects the
// process's env: to set it (docs/configuration.md, Interpolation).
func (e *unsetError) hint() string {
	n := e.name
	return "${" + n + "} reads podvisor's own environment as the config loads, not env:; give a default with ${" + n +
		":-value}, or write $$" + n + " in a command string: the shell then expands the process's own " + n + ", env: included"
}

// ValidEnvName reports whether s is a variable name podvisor can set (for
// the importer, which must refuse what the loader would).
func ValidEnvName(s string) bool { return validEnvName(s) }

// validEnvName reports whether s is a portable environment variable name:
// a letter or underscore, then letters, digits and underscores.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Literal returns s written so that interpolation gives s back: every $
// doubled when s holds "${" or "$$", the only sequences interpolate reads;
// any other text as it is, so that $HOME in a shell command stays
// readable. It is the one escaping rule of every procs.yaml podvisor
// writes (import, kube play).
func Literal(s string) string {
	if !strings.Contains(s, "${") && !strings.Contains(s, "$$") {
		return s
	}
	return strings.ReplaceAll(s, "$", "$$")
}
