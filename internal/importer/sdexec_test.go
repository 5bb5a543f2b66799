package importer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/podvisor/podvisor/internal/config"
)

// systemdArgv is what systemd passes for the unquoted words of a command
// line in environment env: a word that is $NAME becomes NAME's value split
// at blanks (none when unset); in any other word ${NAME} becomes the value
// as it is and $$ a $ (systemd.service(5), "Command lines"). Written as a
// state machine over each word, apart from the importer's code. The values
// used here hold no quotes or backslashes, which systemd would honour in
// the split.
func systemdArgv(words []string, env map[string]string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, "$") && !strings.HasPrefix(w, "${") && !strings.HasPrefix(w, "$$") {
			if v, ok := env[w[1:]]; ok {
				out = append(out, strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(" \t\n\r", r) })...)
			}
			continue
		}
		const (
			word = iota
			curly
			variable
		)
		state, start, r := word, 0, ""
		for i := 0; i < len(w); i++ {
			c := w[i]
			switch state {
			case word:
				if c == '$' {
					state = curly
				}
			case curly:
				switch c {
				case '{':
					r += w[start : i-1]
					start, state = i-1, variable
				case '$':
					r += w[start:i]
					start, state = i+1, word
				default:
					state = word
				}
			case variable:
				switch c {
				case '}':
					r += env[w[start+2:i]]
					start, state = i+1, word
				case ':':
					state = word
				}
			}
		}
		out = append(out, r+w[start:])
	}
	return out
}

// quoteSystemd writes words as a systemd command line: each in double
// quotes, with \ " and control characters escaped and % doubled.
func quoteSystemd(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		for j := 0; j < len(w); j++ {
			switch c := w[j]; {
			case c == '\\' || c == '"':
				b.WriteString(`\` + string(c))
			case c == '%':
				b.WriteString("%%")
			case c < 0x20 || c == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}

// printfLine is the start of a command that prints its arguments, each
// followed by a NUL; BEGIN makes sure there is one.
const printfLine = `/usr/bin/printf %%s\\0 BEGIN `

// runImported imports unit, loads the procs.yaml import wrote as podvisor
// does, and runs the command of process name (its stop command with stop)
// in env. It returns the arguments after BEGIN.
func runImported(t *testing.T, unit, name string, stop bool, env map[string]string) []string {
	t.Helper()
	p, out := importUnit(t, unit, name)
	argv := p.Command
	if stop {
		argv = p.Stop.Command
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q: %v\n%s\n--- procs.yaml\n%s", argv, err, stderr.String(), out)
	}
	got := strings.Split(stdout.String(), "\x00")
	if len(got) < 2 || got[0] != "BEGIN" {
		t.Fatalf("%q printed %q\n--- procs.yaml\n%s", argv, stdout.String(), out)
	}
	return got[1 : len(got)-1]
}

// Backticks, >, |, globs and $(...) are plain text to systemd; only $VAR
// words, ${VAR} and $$ expand (issue 34 item 9). Pasted into /bin/sh -c
// unquoted they ran as shell syntax: the backtick ran touch, > made a
// file, * globbed.
func TestSystemdExecHostileWords(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	env := map[string]string{"VAR": "one  two", "EMPTY": ""}
	line := printfLine + "$VAR `touch " + marker + "` $(touch " + marker + ") a>" + marker + " 'c|d' * \"${VAR}\" '$$HOME' ${VAR:-x} a$VAR $EMPTY ${UNSET} \\; x\\ty"
	// "$(touch" is a word that starts with $: systemd takes it for the
	// variable "(touch", unset, and passes no argument for it.
	want := []string{"one", "two", "`touch", marker + "`", marker + ")", "a>" + marker, "c|d", "*", "one  two", "$HOME",
		"${VAR:-x}", "a$VAR", "", ";", "x\ty"}
	for _, c := range []struct {
		key, name string
		stop      bool
		env       map[string]string
	}{
		{"ExecStart", "x", false, env},
		{"ExecStartPre", "x-pre1", false, env},
		{"ExecStartPost", "x-post1", false, env},
		{"ExecStop", "x", true, env},
	} {
		t.Run(c.key, func(t *testing.T) {
			unit := "[Service]\nExecStart=/bin/sleep 1\n"
			if c.key == "ExecStart" {
				unit = ""
			}
			unit = "[Service]\n" + strings.TrimPrefix(unit, "[Service]\n") + c.key + "=" + line + "\n"
			got := runImported(t, unit, c.name, c.stop, c.env)
			if !slices.Equal(got, want) {
				t.Errorf("argv after BEGIN:\n got %q\nwant %q", got, want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("a word of the command line ran as shell syntax")
			}
		})
	}
	// Without any variable the command is an argv, still with every word
	// as systemd splits it.
	got := runImported(t, "[Service]\nExecStartPre=-"+printfLine+"a>"+marker+" 'x y' `id`\nExecStart=/bin/sleep 1\n", "x-pre1", false, nil)
	if want := []string{"a>" + marker, "x y", "`id`"}; !slices.Equal(got, want) {
		t.Errorf("ExecStartPre=- without variables: got %q, want %q", got, want)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a word of an ExecStartPre= ran as shell syntax")
	}
}

// checkExecWords is the property: for any words and environment, the
// command import makes of the systemd line, run by podvisor (through
// /bin/sh -c when it expands variables), gets the argv systemd would pass.
func checkExecWords(t *testing.T, words []string, env map[string]string) {
	t.Helper()
	unit := "[Service]\nExecStart=" + printfLine + quoteSystemd(words) + "\n"
	want := systemdArgv(words, env)
	got := runImported(t, unit, "x", false, env)
	if !slices.Equal(got, want) {
		t.Fatalf("words %q env %q:\n got %q\nwant %q\n--- unit\n%s", words, env, got, want, unit)
	}
}

// wordPieces are what the random words are made of: shell syntax that
// systemd passes as text, and what systemd itself expands.
var wordPieces = []string{"a", "b c", "'", "\"", "\\", "`", "$", "$$", "${", "}", ":", ":-", "$(", ")", "|", ">", "<", "&", ";", "*", "?", "[a]", "~",
	"#", "\t", "\n", "%", "=", "$A", "${A}", "$B", "${B}", "${U}", "$U", "${A:-x}", "é", "\x01", "!", "{", "$1", "${1}", "$*", "$@"}

func TestSystemdExecProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 9))
	for i := 0; i < 200; i++ {
		var words []string
		for range rng.IntN(5) {
			var w strings.Builder
			for range rng.IntN(4) {
				w.WriteString(wordPieces[rng.IntN(len(wordPieces))])
			}
			words = append(words, w.String())
		}
		if rng.IntN(3) == 0 { // a whole-word variable
			words = append(words, []string{"$A", "$B", "$U", "$"}[rng.IntN(4)])
		}
		env := map[string]string{
			"A": []string{"x", "two words", " lead  trail ", "*", "`id`", "$B", "", "a\tb"}[rng.IntN(8)],
			"B": []string{"|", "$(id)", ">f", "y"}[rng.IntN(4)],
		}
		checkExecWords(t, words, env)
	}
}

// FuzzSystemdExec: the property over words the fuzzer makes (NUL-separated;
// a NUL cannot be in an argument) and a value for $A.
func FuzzSystemdExec(f *testing.F) {
	f.Add("`touch x`\x00a>b\x00$A\x00${A}x\x00$$A", "one two")
	f.Add("*\x00'\x00\"\x00\\\x00${A:-d}\x00$\x00%i", "")
	f.Add("a$A\x00${A}${A}\x00$(id)\x00;", "*")
	f.Fuzz(func(t *testing.T, data, a string) {
		if !utf8.ValidString(data) || !utf8.ValidString(a) || len(data) > 200 {
			return // import refuses a unit that is not UTF-8
		}
		if strings.ContainsAny(a, "'\"\\\x00\r") {
			return // systemd honours quotes and escapes in a split value, and splits at CR; /bin/sh does not (documented)
		}
		words := strings.Split(data, "\x00")
		if data == "" {
			words = nil
		}
		for _, w := range words {
			if w == ";" {
				return // a lone ; separates commands: refused, tested elsewhere
			}
		}
		checkExecWords(t, words, map[string]string{"A": a})
	})
}

// importUnit imports the systemd unit x.service and loads the procs.yaml it
// wrote as podvisor does; it returns process name and the file's text.
func importUnit(t *testing.T, unit, name string) (*config.Process, string) {
	t.Helper()
	m, r, err := ConvertSystemd([]Source{{Path: "x.service", Data: []byte(unit)}}, Options{})
	if err != nil || r.Failed() {
		var rep bytes.Buffer
		if r != nil {
			r.WriteReport(&rep)
		}
		t.Fatalf("import failed: %v\n%s\n--- unit\n%s", err, rep.String(), unit)
	}
	out := config.Write(m)
	cfg, _, err := config.ParsePortable(filepath.Join(t.TempDir(), "procs.yaml"), out, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("import wrote a file that does not load: %v\n%s", err, out)
	}
	p := cfg.Processes[name]
	if p == nil {
		t.Fatalf("no process %s in\n%s", name, out)
	}
	return p, string(out)
}

// TestSdUnescape checks %I's unescaping against what systemd-escape
// --unescape printed for the same names (systemd 252).
func TestSdUnescape(t *testing.T) {
	for in, want := range map[string]string{"mail-in": "mail/in", `a\x2db`: "a-b", "plain": "plain"} {
		if got := sdUnescape(in); got != want {
			t.Errorf("sdUnescape(%q) = %q, want %q", in, got, want)
		}
	}
}
