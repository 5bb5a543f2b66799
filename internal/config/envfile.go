package config

import (
	"strconv"
	"strings"
)

// ParseEnvFile parses the contents of an env_file named name. The format is
// one KEY=VALUE per line:
//
//   - blank lines and lines starting with # are skipped;
//   - an optional "export " prefix is ignored;
//   - KEY is a letter or underscore followed by letters, digits, underscores;
//     spaces around KEY and before VALUE are ignored;
//   - an unquoted VALUE runs to the end of the line, trailing spaces trimmed,
//     and is taken literally: # and $ have no special meaning there;
//   - 'VALUE' is taken literally;
//   - "VALUE" is literal except for \" and \\; any other backslash stays;
//   - after a closing quote only spaces or a # comment may follow;
//   - values are never interpolated and cannot span lines.
//
// It returns the entries as KEY=VALUE in file order (a key may repeat; the
// last one wins when the environment is assembled), or every malformed line
// as an Error positioned in the env file, sorted, in a *multierror.Error.
func ParseEnvFile(name string, data []byte) ([]string, error) {
	var (
		out  []string
		errs []*Error
	)
	for i, line := range strings.Split(string(data), "\n") {
		pos := Pos{File: name, Line: i + 1, Col: 1}
		line = strings.TrimSuffix(line, "\r")
		text := strings.TrimLeft(line, " \t")
		if text == "" || text[0] == '#' {
			continue
		}
		pos.Col += len(line) - len(text)
		if rest, ok := strings.CutPrefix(text, "export "); ok {
			text = strings.TrimLeft(rest, " \t")
		}
		key, raw, ok := strings.Cut(text, "=")
		if !ok {
			errs = append(errs, &Error{Pos: pos, Msg: "expected KEY=VALUE"})
			continue
		}
		key = strings.TrimRight(key, " \t")
		if !validEnvName(key) {
			errs = append(errs, &Error{Pos: pos, Msg: "invalid variable name " + strconv.Quote(key),
				Hint: "use letters, digits and _, not starting with a digit"})
			continue
		}
		value, msg := envValue(strings.TrimLeft(raw, " \t"))
		if msg == "" && strings.IndexByte(value, 0) >= 0 {
			msg = "value contains a NUL byte"
		}
		if msg != "" {
			errs = append(errs, &Error{Pos: pos, Msg: key + ": " + msg})
			continue
		}
		out = append(out, key+"="+value)
	}
	if err := newErrorList(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// envValue decodes the VALUE part of an env file line. It returns a non-empty
// message if the value is malformed.
func envValue(raw string) (value, msg string) {
	if raw == "" {
		return "", ""
	}
	var rest string
	switch raw[0] {
	case '\'':
		end := strings.IndexByte(raw[1:], '\'')
		if end < 0 {
			return "", "missing closing ' (values cannot span lines)"
		}
		value, rest = raw[1:1+end], raw[2+end:]
	case '"':
		var b strings.Builder
		i := 1
		for ; i < len(raw) && raw[i] != '"'; i++ {
			if raw[i] == '\\' && i+1 < len(raw) && (raw[i+1] == '"' || raw[i+1] == '\\') {
				i++
			}
			b.WriteByte(raw[i])
		}
		if i == len(raw) {
			return "", `missing closing " (values cannot span lines)`
		}
		value, rest = b.String(), raw[i+1:]
	default:
		return strings.TrimRight(raw, " \t"), ""
	}
	rest = strings.TrimLeft(rest, " \t")
	if rest != "" && rest[0] != '#' {
		return "", "unexpected text after the closing quote"
	}
	return value, ""
}
