package config

import (
	"fmt"
	"path/filepath"
	"testing"
)

func TestOutputRejects(t *testing.T) {
	runErrCases(t, []errCase{
		{name: "unknown destination", src: "processes:\n  a:\n    command: x\n    log: {stdout: fil}\n",
			pos: "procs.yaml:4:19", path: "processes.a.log.stdout", msg: `unknown log destination "fil"`, hint: `did you mean "file"?`},
		{name: "file without a path", src: "processes:\n  a:\n    command: x\n    log: {stdout: file}\n",
			pos: "procs.yaml:4:10", path: "processes.a.log", msg: "stdout goes to a file but no log.file is set"},
		{name: "default file without a path", src: "log: {stderr: file}\nprocesses:\n  a:\n    command: x\n",
			pos: "procs.yaml:3:3", path: "processes.a.log", msg: "stderr goes to a file but neither"},
		{name: "top-level file without name", src: "log: {stdout: file, file: /var/log/all.log}\nprocesses:\n  a: {command: x}\n",
			pos: "procs.yaml:1:27", path: "log.file", msg: "must contain {name}"},
		{name: "max_size too small", src: "processes:\n  a:\n    command: x\n    log: {max_size: 512KiB}\n",
			pos: "procs.yaml:4:21", path: "processes.a.log.max_size", msg: "below 1MiB"},
		{name: "max_size unit", src: "processes:\n  a:\n    command: x\n    log: {max_size: 10XB}\n",
			pos: "procs.yaml:4:21", path: "processes.a.log.max_size", msg: `unknown unit "XB"`},
		{name: "max_size mapping", src: "processes:\n  a:\n    command: x\n    log: {max_size: {a: 1}}\n",
			pos: "procs.yaml:4:21", path: "processes.a.log.max_size", msg: "expected a size"},
		{name: "max_files 1", src: "processes:\n  a:\n    command: x\n    log: {max_files: 1}\n",
			pos: "procs.yaml:4:22", path: "processes.a.log.max_files", msg: "out of range 2-1000"},
		{name: "compress not a bool", src: "processes:\n  a:\n    command: x\n    log: {compress: yes please}\n",
			pos: "procs.yaml:4:21", path: "processes.a.log.compress", msg: "expected true or false"},
		{name: "unknown key", src: "processes:\n  a:\n    command: x\n    log: {max_file: 3}\n",
			pos: "procs.yaml:4:11", path: "processes.a.log", msg: `unknown key "max_file"`, hint: `"max_files"`},
		{name: "tail is global", src: "processes:\n  a:\n    command: x\n    log: {tail: 3}\n",
			pos: "procs.yaml:4:11", path: "processes.a.log", msg: `unknown key "tail"`},
		{name: "a directory", src: "processes:\n  a:\n    command: x\n    log: {stdout: file, file: /var/log/}\n",
			pos: "procs.yaml:4:31", path: "processes.a.log.file", msg: "is a directory"},
		{name: "two processes one file", src: "processes:\n  a:\n    command: x\n    log: {stdout: file, file: /l/x.log}\n  b:\n    command: x\n    log: {stdout: file, file: /l/x.log}\n",
			pos: "procs.yaml:7:10", path: "processes.b.log", msg: `log file /l/x.log is also "a"'s`},
	})
}

func TestOutputResolved(t *testing.T) {
	cfg := mustParse(t, `log:
  format: json
  stdout: file
  file: logs/{name}.log
  max_size: 20MiB
processes:
  plain: {command: x, log: {stdout: inherit}}
  both:
    command: x
    log: {stderr: file, compress: true, max_files: 3, format: text, timestamps: true}
  split:
    command: x
    log: {stderr: file, stderr_file: "/var/log/{name}.err", max_size: 1048576}
  quiet: {command: x, log: {stdout: "off", stderr: "off"}}
`, nil)
	dir := cfg.Dir
	cases := map[string]Output{
		"plain": {Stdout: DestInherit, Stderr: DestInherit, MaxSize: 20 << 20, MaxFiles: 5, Format: "json"},
		"both": {Stdout: DestFile, Stderr: DestFile, File: filepath.Join(dir, "logs/both.log"), StderrFile: filepath.Join(dir, "logs/both.log"),
			MaxSize: 20 << 20, MaxFiles: 3, Compress: true, Format: "text", Timestamps: true},
		"split": {Stdout: DestFile, Stderr: DestFile, File: filepath.Join(dir, "logs/split.log"), StderrFile: "/var/log/split.err",
			MaxSize: 1 << 20, MaxFiles: 5, Format: "json"},
		"quiet": {Stdout: DestOff, Stderr: DestOff, MaxSize: 20 << 20, MaxFiles: 5, Format: "json"},
	}
	for name, want := range cases {
		if got := cfg.Processes[name].Log; got != want {
			t.Errorf("%s: got %+v\nwant %+v", name, got, want)
		}
	}
	if got := cfg.Processes["both"].Log.Files(); len(got) != 1 {
		t.Errorf("merged streams: files %v, want one", got)
	}
	if got := cfg.Processes["split"].Log.Files(); len(got) != 2 {
		t.Errorf("split streams: files %v, want two", got)
	}
	if cfg.Log.Format != "json" || cfg.Log.Default.Stdout != DestFile {
		t.Errorf("top level: %+v", cfg.Log)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "10MiB": 10 << 20, "10MB": 10 << 20, "10m": 10 << 20, "1GiB": 1 << 30, "512 KiB": 512 << 10, "7B": 7} {
		if got, err := parseSize(in); err != "" || got != want {
			t.Errorf("parseSize(%q) = %d, %q; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1MiB", "1.5MiB", "99999999999999GiB", "2TiB"} {
		if _, err := parseSize(in); err == "" {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// A process whose log changes restarts on reload: its pipes are wired at
// its start.
func TestSpawnDiffLog(t *testing.T) {
	src := "processes:\n  a:\n    command: x\n    log: {stdout: %s, file: /l/a.log}\n"
	old := mustParse(t, fmt.Sprintf(src, "inherit"), nil).Processes["a"]
	same := mustParse(t, fmt.Sprintf(src, "inherit"), nil).Processes["a"]
	changed := mustParse(t, fmt.Sprintf(src, "file"), nil).Processes["a"]
	if d := SpawnDiff(old, same); d != "" {
		t.Errorf("same log: %q", d)
	}
	if d := SpawnDiff(old, changed); d != "log changed" {
		t.Errorf("changed log: %q, want log changed", d)
	}
}
