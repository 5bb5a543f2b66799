package importer

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// systemd command lines (systemd.service(5), "Command lines"), converted so
// that the process gets the argv systemd would pass, whether podvisor execs
// it directly or through /bin/sh -c:
//
//   - The line is split into words at blanks; single and double quotes
//     group, and C-style backslash escapes (\n, \t, \xNN, \NNN octal,
//     \uNNNN...) are decoded inside and outside quotes. Nothing else is
//     special: a backtick, `|`, `>` or `*` is plain text.
//   - After that, per word: a word that is `$NAME` is replaced by the value
//     of NAME split at blanks (zero or more arguments; an unset NAME gives
//     none); in any other word `${NAME}` is replaced by the value as it is,
//     `$$` by `$`, and any other `$` is kept (so `$NAME` inside a word, or
//     `${NAME:-x}`, stays literal).
//
// A command whose words expand nothing is an argv. Otherwise it becomes a
// /bin/sh command in which every literal piece is single-quoted, `${NAME}`
// is "${NAME}" and a `$NAME` word is an unquoted $NAME with pathname
// expansion off (set -f), so /bin/sh splits its value at blanks and does
// nothing else with it.

// splitExecLine splits one command line (after specifiers and the prefixes)
// into its unquoted, unescaped words.
func splitExecLine(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote byte
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			n, err := unescapeC(s[i+1:], &cur)
			if err != nil {
				return nil, err
			}
			in = true
			i += n
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			if c == ';' && !in && (i+1 == len(s) || strings.IndexByte(" \t\n\r", s[i+1]) >= 0) {
				return nil, errors.New(`a lone ";" separates commands; write one ExecStart= (or ExecStartPre=...) per command, or \; for a literal ";"`)
			}
			in = true
			cur.WriteByte(c)
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// unescapeC decodes the escape after a backslash at the start of s into
// cur, and returns how many bytes of s it used.
func unescapeC(s string, cur *strings.Builder) (int, error) {
	if s == "" {
		return 0, errors.New("a backslash at the end of the line")
	}
	simple := map[byte]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
		'\\': '\\', '"': '"', '\'': '\'', 's': ' '}
	if b, ok := simple[s[0]]; ok {
		cur.WriteByte(b)
		return 1, nil
	}
	if strings.IndexByte(" \t\n\r;", s[0]) >= 0 {
		cur.WriteByte(s[0]) // an escaped separator
		return 1, nil
	}
	num := func(digits, base int) (rune, error) {
		if len(s) < 1+digits {
			return 0, fmt.Errorf(`\%s: too short`, s)
		}
		var v rune
		for _, d := range s[1 : 1+digits] {
			x := strings.IndexRune("0123456789abcdef", d|0x20)
			if d >= 'A' && d <= 'F' {
				x = int(d-'A') + 10
			}
			if x < 0 || x >= base {
				return 0, fmt.Errorf(`\%s: not a valid escape`, s[:1+digits])
			}
			v = v*rune(base) + rune(x)
		}
		if v == 0 {
			return 0, errors.New(`\0: a NUL cannot be in an argument`)
		}
		return v, nil
	}
	switch c := s[0]; {
	case c == 'x':
		v, err := num(2, 16)
		if err != nil {
			return 0, err
		}
		cur.WriteByte(byte(v))
		return 3, nil
	case c >= '0' && c <= '7': // \NNN, three octal digits
		v := 0
		for k := 0; k < 3; k++ {
			if k >= len(s) || s[k] < '0' || s[k] > '7' {
				return 0, fmt.Errorf(`\%s: an octal escape has three digits`, s[:min(len(s), 3)])
			}
			v = v*8 + int(s[k]-'0')
		}
		if v == 0 || v > 255 {
			return 0, fmt.Errorf(`\%s: not a byte other than NUL`, s[:3])
		}
		cur.WriteByte(byte(v))
		return 3, nil
	case c == 'u' || c == 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		v, err := num(n, 16)
		if err != nil {
			return 0, err
		}
		if !utf8.ValidRune(v) {
			return 0, fmt.Errorf(`\%s: not a Unicode character`, s[:1+n])
		}
		cur.WriteRune(v)
		return 1 + n, nil
	}
	_, size := utf8.DecodeRuneInString(s)
	return 0, fmt.Errorf(`\%s is not an escape systemd knows (write \\ for a backslash)`, s[:size])
}

// execWords is one systemd command converted.
type execWords struct {
	argv  []string // the argv, when nothing expands
	sh    string   // the words as /bin/sh text, for a command that expands
	env   bool     // a word expands from the environment: sh is needed
	split bool     // a `$NAME` word: sh must run with pathname expansion off
	odd   []string // variable names /bin/sh cannot name (always empty there)
}

// convertWords applies systemd's expansion rules to words (see above).
func convertWords(words []string) execWords {
	var x execWords
	var sh []string
	for _, w := range words {
		if len(w) >= 1 && w[0] == '$' && (len(w) == 1 || (w[1] != '{' && w[1] != '$')) {
			x.env = true
			if name := w[1:]; isShellName(name) {
				sh = append(sh, "$"+name)
				x.split = true
			} else if name != "" {
				x.odd = append(x.odd, name)
			}
			continue // an unset or impossible name: no argument at all
		}
		var lit, text strings.Builder
		value := ""
		flush := func() {
			if lit.Len() > 0 {
				text.WriteString(shQuote(lit.String()))
				value += lit.String()
				lit.Reset()
			}
		}
		for i := 0; i < len(w); {
			if w[i] == '$' && i+1 < len(w) {
				switch w[i+1] {
				case '$':
					lit.WriteByte('$')
					i += 2
					continue
				case '{':
					j := strings.IndexAny(w[i+2:], "}:")
					switch {
					case j >= 0 && w[i+2+j] == '}':
						name := w[i+2 : i+2+j]
						flush()
						x.env = true
						if isShellName(name) {
							text.WriteString(`"${` + name + `}"`)
						} else {
							x.odd = append(x.odd, name)
						}
						i += 3 + j
					case j >= 0: // ${NAME:...}: not expanded in command lines
						lit.WriteString(w[i : i+3+j])
						i += 3 + j
					default:
						lit.WriteString(w[i:])
						i = len(w)
					}
					continue
				}
			}
			lit.WriteByte(w[i])
			i++
		}
		flush()
		if text.Len() == 0 {
			text.WriteString("''")
		}
		sh = append(sh, text.String())
		x.argv = append(x.argv, value)
	}
	x.sh = strings.Join(sh, " ")
	if x.env {
		x.argv = nil
	}
	return x
}

// isShellName reports whether name can be written $name in /bin/sh.
func isShellName(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// shQuote quotes s as one /bin/sh word: bare when only safe characters,
// else single-quoted.
func shQuote(s string) string {
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_@%+=:,./-", c) >= 0
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
