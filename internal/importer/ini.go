package importer

import (
	"strings"
)

// iniSection is one [section] of an INI file, keys lowercased, in order.
type iniSection struct {
	Name string
	File string
	Line int
	Keys []iniKey
}

type iniKey struct {
	Name  string
	Value string
	Line  int
	File  string // set for systemd units, where drop-ins add keys from other files
}

// get returns the last value of key (later lines win, as in supervisord).
func (s *iniSection) get(key string) (iniKey, bool) {
	for i := len(s.Keys) - 1; i >= 0; i-- {
		if s.Keys[i].Name == key {
			return s.Keys[i], true
		}
	}
	return iniKey{}, false
}

// parseINI reads INI text the way Python's configparser does for
// supervisord: [section] headers; key=value or key: value, key lowercased,
// both trimmed; full-line comments with ; or #; inline comments where ; or
// # follows whitespace; indented lines continue the previous value; a blank
// line ends a value. Keys before any section, and lines that are neither,
// are errors (configparser refuses them too).
func parseINI(src Source) ([]*iniSection, error) {
	var (
		sections []*iniSection
		cur      *iniSection
		last     *iniKey
		errs     ParseErrors
	)
	for i, raw := range lines(src.Data) {
		n := i + 1
		if strings.TrimSpace(raw) == "" {
			last = nil
			continue
		}
		trimmed := strings.TrimSpace(raw)
		if trimmed[0] == ';' || trimmed[0] == '#' {
			continue
		}
		if (raw[0] == ' ' || raw[0] == '\t') && last != nil {
			v := stripInlineComment(trimmed)
			if v != "" {
				if last.Value != "" {
					last.Value += "\n"
				}
				last.Value += v
			}
			continue
		}
		if trimmed[0] == '[' {
			end := strings.IndexByte(trimmed, ']')
			if end < 0 {
				errs = append(errs, perr(src.Path, n, "section header %q has no closing ]", trimmed))
				cur, last = nil, nil
				continue
			}
			cur = &iniSection{Name: strings.TrimSpace(trimmed[1:end]), File: src.Path, Line: n}
			sections = append(sections, cur)
			last = nil
			continue
		}
		sep := strings.IndexAny(trimmed, "=:")
		if sep <= 0 {
			errs = append(errs, perr(src.Path, n, "line %q is neither [section] nor key=value", trimmed))
			last = nil
			continue
		}
		if cur == nil {
			errs = append(errs, perr(src.Path, n, "key %q before the first [section]", strings.TrimSpace(trimmed[:sep])))
			continue
		}
		cur.Keys = append(cur.Keys, iniKey{
			Name:  strings.ToLower(strings.TrimSpace(trimmed[:sep])),
			Value: stripInlineComment(strings.TrimSpace(trimmed[sep+1:])),
			Line:  n,
		})
		last = &cur.Keys[len(cur.Keys)-1]
	}
	if len(errs) > 0 {
		return nil, errs.err()
	}
	return sections, nil
}

func stripInlineComment(s string) string {
	for i := 1; i < len(s); i++ {
		if (s[i] == ';' || s[i] == '#') && (s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}
