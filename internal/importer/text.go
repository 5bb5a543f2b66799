package importer

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// splitWords splits s as a POSIX shell would split a simple command
// (Python's shlex.split, which supervisord uses): single quotes are
// literal, double quotes allow \" \\ \$ \`, a backslash outside quotes
// escapes the next character. It reports an unterminated quote.
func splitWords(s string) ([]string, error) {
	words, err := splitWordsPartial(s)
	if err != nil {
		return nil, err
	}
	return words, nil
}

// splitWordsPartial is splitWords, but on an unterminated quote it also
// returns the words before it: systemd keeps the assignments of an
// Environment= line up to a syntax error and ignores the rest.
func splitWordsPartial(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\\':
			in = true
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
			}
		case c == '\'':
			in = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return words, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			in = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return words, errors.New("unterminated double quote")
			}
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// parseBool reads the booleans supervisord and systemd accept.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// parseSeconds reads a whole or fractional number of seconds.
func parseSeconds(s string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || f > 1e6 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)).Round(time.Millisecond), true
}

// signalName normalises a signal name or number to podvisor's SIGNAME,
// or "" when it is not one podvisor knows.
func signalName(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		for name, num := range signalNumbers {
			if num == n {
				return name
			}
		}
		return ""
	}
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	if _, ok := signalNumbers[s]; ok {
		return s
	}
	return ""
}

var signalNumbers = map[string]int{
	"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGKILL": 9, "SIGUSR1": 10, "SIGUSR2": 12,
	"SIGTERM": 15, "SIGCONT": 18, "SIGSTOP": 19, "SIGWINCH": 28, "SIGPWR": 30, "SIGALRM": 14,
	"SIGABRT": 6,
}

// sanitizeName turns a name from another tool into a podvisor process
// name: 1-63 of A-Za-z0-9_.-, starting alphanumeric.
func sanitizeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.TrimLeft(b.String(), "_.-")
	if out == "" {
		out = "proc"
	}
	if len(out) > 63 {
		out = out[:63]
	}
	return out
}

// uniqueNames renames processes whose names collide (also in case) by
// appending -2, -3, ..., and reports each rename.
func uniqueNames(m *Model, r *Report) {
	seen := map[string]bool{}
	for _, p := range m.Processes {
		base := p.Name
		name := base
		for n := 2; seen[strings.ToLower(name)]; n++ {
			suffix := "-" + strconv.Itoa(n)
			name = suffixName(base, suffix) // names are at most 63
		}
		if name != base {
			r.Approx(p.Written.Origin, p.Name, "renamed to "+name+": another process has the same name")
			p.Name = name
		}
		seen[strings.ToLower(name)] = true
	}
}

// lines splits data into lines without their end-of-line characters.
func lines(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.TrimPrefix(s, "\ufeff")
	return strings.Split(s, "\n")
}

// dirLike reports whether a log file path names a directory, as podvisor's
// loader judges it ("/", "logs/", "x/.", ".."): such a path cannot become
// log.file.
func dirLike(v string) bool {
	return v == "." || v == ".." || strings.HasSuffix(v, "/") || strings.HasSuffix(v, "/.") || strings.HasSuffix(v, "/..")
}

// suffixName appends suffix to the process name name, cutting name so that
// the whole stays within podvisor's 63 characters.
func suffixName(name, suffix string) string {
	return name[:min(len(name), max(0, 63-len(suffix)))] + suffix
}
