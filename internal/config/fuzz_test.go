package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addSeeds adds every procs.yaml under examples/ and every YAML file in
// testdata/ to the corpus.
func addSeeds(f *testing.F) {
	f.Helper()
	var files []string
	_ = filepath.WalkDir("../../examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "procs.yaml" {
			files = append(files, p)
		}
		return nil
	})
	more, _ := filepath.Glob("testdata/*.yaml")
	files = append(files, more...)
	if len(files) < 2 {
		f.Fatalf("too few seed files: %v", files)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("processes: {a: {command: x}}\n"))
	f.Add([]byte("listen_hosts: [a.example, \"*.b.example\", c.]\nprocesses: {a: {command: x}}\n"))
	f.Add([]byte("processes: {a: {command: x, profiles: [dev, debug]}, b: {command: y, depends_on: [a], profiles: [\"x.y-z\"]}}\n"))
	f.Add([]byte("processes: {a: {command: x, user: \"0:0\", ready: {notify: \"fd:3\"}}}\n"))
}

// FuzzParse: Parse never panics, and returns either a Config or an error
// whose every line starts with the file name.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	lookup := env(map[string]string{"HOME": "/root", "EMPTY": "", "APP_BIN": "/bin/app"})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(testFile, data, lookup)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", cfg != nil, err)
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, testFile) {
					t.Fatalf("error line without the file name: %q", line)
				}
			}
			return
		}
		if len(cfg.Names) == 0 || cfg.Graph == nil || cfg.Graph.Len() != len(cfg.Names) {
			t.Fatalf("accepted config without processes or graph: %+v", cfg)
		}
		for _, name := range cfg.Names {
			p := cfg.Processes[name]
			if !validName(name) || len(p.Command) == 0 || strings.TrimSpace(p.Command[0]) == "" {
				t.Fatalf("accepted invalid process %q: %+v", name, p)
			}
		}
		_ = cfg.TeardownWarning()
	})
}

// FuzzInterpolate: no panic; without ${ only $$ changes; an unset variable
// without default is always an error.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "${A:-d}", "$$", "$${A}", "$HOME", "${", "${A", "${1}", "${B:-${A}}"} {
		f.Add(s)
	}
	lookup := env(map[string]string{"A": "x", "EMPTY": ""})
	f.Fuzz(func(t *testing.T, s string) {
		got, err := interpolate(s, lookup)
		if !strings.Contains(s, "${") {
			if want := strings.ReplaceAll(s, "$$", "$"); err != nil || got != want {
				t.Fatalf("interpolate(%q) = %q, %v; want %q", s, got, err, want)
			}
		}
		if err == nil && strings.Contains(strings.ReplaceAll(s, "$$", ""), "${UNSET}") {
			t.Fatalf("interpolate(%q) = %q: unset variable accepted", s, got)
		}
	})
}

// FuzzLiteral: interpolation gives back whatever Literal wrote, and text
// without "${" or "$$" is written as it is.
func FuzzLiteral(f *testing.F) {
	for _, s := range []string{"", "plain", "$HOME", "${A}", "$$", "a$", "$", "$${A}", "cost $5 ${", "$$$"} {
		f.Add(s)
	}
	lookup := env(map[string]string{"A": "x"})
	f.Fuzz(func(t *testing.T, s string) {
		w := Literal(s)
		if got, err := interpolate(w, lookup); err != nil || got != s {
			t.Fatalf("interpolate(Literal(%q) = %q) = %q, %v", s, w, got, err)
		}
		if !strings.Contains(s, "${") && !strings.Contains(s, "$$") && w != s {
			t.Fatalf("Literal(%q) = %q: escaped text that needs none", s, w)
		}
	})
}

// FuzzEnvFile: no panic; errors name the file on every line; accepted
// entries have valid keys, no NUL, and survive a round trip through
// single-quoted form when they contain no quote or newline.
func FuzzEnvFile(f *testing.F) {
	for _, s := range []string{"A=1\n", "export A='x'\n", "A=\"a\\\"b\"\n", "# c\n\nB=2\r\n", "1A=x\n", "A='x\n", "A=\"x\" y\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseEnvFile(".env", data)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, ".env:") {
					t.Fatalf("error line without the file name: %q", line)
				}
			}
			return
		}
		var again strings.Builder
		for _, kv := range entries {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !validEnvName(k) || strings.ContainsAny(v, "\x00\n") {
				t.Fatalf("bad entry %q", kv)
			}
			if strings.ContainsAny(v, "'\r") {
				return
			}
			again.WriteString(k + "='" + v + "'\n")
		}
		back, err := ParseEnvFile(".env", []byte(again.String()))
		if err != nil || strings.Join(back, "\n") != strings.Join(entries, "\n") {
			t.Fatalf("round trip of %q: %q, %v", entries, back, err)
		}
	})
}
