package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/importer"
)

type importOpts struct {
	from          *string
	output        *string
	format        *output
	priorityOrder *bool
	releaseFirst  *bool
	root          *string
}

// importFlags defines import's flags (cmdImport and the command table share it).
func importFlags(fs *flag.FlagSet) importOpts {
	var o importOpts
	o.from = fs.String("from", "", "input `FORMAT`: supervisord, process-compose, procfile, s6 or systemd (default: detected)")
	o.output = fs.String("o", "", "write procs.yaml to `FILE` (default: stdout); -o json or -o text is the output format instead (a file named json: -o ./json)")
	fs.StringVar(o.output, "output", "", "write procs.yaml to `FILE` (same as -o)")
	f := outputText
	o.format = &f
	fs.Var(o.format, "output-format", "`FORMAT`: text, or json (the report as the API's ImportReport, with procs.yaml in it unless -o FILE; docs/api.md)")
	o.priorityOrder = fs.Bool("priority-order", false, "supervisord: turn priority levels into started dependencies")
	o.releaseFirst = fs.Bool("release-first", false, "Procfile: every other process waits for release to complete")
	o.root = fs.String("root", "", "read the absolute paths the files name (systemd's EnvironmentFile=) under `DIR`, an image's root file system; nothing outside it is read")
	return o
}

// importArgs reorders args so that flags may follow the paths
// (podvisor import supervisord.conf -o procs.yaml).
func importArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return paths, nil
		}
		rest := fs.Args()
		if rest[0] == "--" {
			return append(paths, rest[1:]...), nil
		}
		paths = append(paths, rest[0])
		args = rest[1:]
	}
}

// cmdImport converts another supervisor's configuration into procs.yaml,
// prints what changed meaning on stderr, and checks the result with
// check --portable.
func cmdImport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("import", io.Discard)
	o := importFlags(fs)
	paths, err := importArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fs.Usage()
		return exitUsage
	}
	if err != nil {
		// A flag after the paths is parsed here, not by dispatch: report
		// it the way dispatch does.
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			name = strings.TrimLeft(name, "-")
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			msg = "unknown flag " + dashed(name) + suggestion(name, names, "flag")
		}
		fmt.Fprintf(stderr, "podvisor import: %s\nRun 'podvisor import --help' for usage.\n", msg)
		return exitUsage
	}
	if v := output(*o.output); v == outputJSON || v == outputText { // -o json: the format, as on every command
		*o.format, *o.output = v, ""
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "podvisor import: give the file or directory to convert (podvisor import supervisord.conf)")
		return exitUsage
	}
	from := importer.Format(*o.from)
	if from != "" && !isFormat(from) {
		fmt.Fprintf(stderr, "podvisor import: unknown format %q for --from (want supervisord, process-compose, procfile, s6 or systemd)\n", from)
		return exitUsage
	}
	opt := importer.Options{
		PriorityOrder: *o.priorityOrder,
		ReleaseFirst:  *o.releaseFirst,
	}
	if *o.root != "" {
		if st, err := os.Stat(*o.root); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "podvisor import: --root %s: not a directory; give the unpacked image's root (the directory holding etc/ and usr/)\n", *o.root)
			return exitUsage
		}
		opt.ReadFile = importer.RootReader(*o.root)
		opt.Root = *o.root
	}
	m, rep, format, err := importer.Load(paths, from, opt)
	if err != nil {
		// Unreadable input: every error, one per line, starting with its
		// file:line as config errors do; one without a place is prefixed
		// with the command's name.
		var list importer.ParseErrors
		var one *importer.ParseError
		switch {
		case errors.As(err, &list):
			fmt.Fprintln(stderr, list.Error())
		case errors.As(err, &one) && one.Pos != "":
			fmt.Fprintln(stderr, one.Error())
		default:
			fmt.Fprintf(stderr, "podvisor import: %v\n", err)
		}
		return exitUsage
	}
	outName := *o.output
	if outName == "" {
		outName = "procs.yaml" // where a redirected stdout usually goes
	}
	outDir, _ := filepath.Abs(filepath.Dir(outName))
	if format == importer.Procfile {
		relocateEnvFiles(m, outDir)
	}
	data := config.Write(m)
	r := importReport{Format: string(format), Processes: len(m.Processes), Report: []string{}, Notes: []string{}, Errors: []string{}}
	var rb strings.Builder
	rep.WriteReport(&rb)
	if t := strings.TrimRight(rb.String(), "\n"); t != "" {
		r.Report = strings.Split(t, "\n")
	}
	code := exitOK
	if len(m.Processes) == 0 {
		code = 1 // nothing to write or check; the report says why
	} else {
		_, notes, checkErr := config.ParsePortable(filepath.Join(outDir, filepath.Base(outName)), data, os.LookupEnv)
		for _, n := range notes {
			r.Notes = append(r.Notes, n.Error())
		}
		if checkErr != nil {
			r.Errors = strings.Split(strings.TrimRight(checkErr.Error(), "\n"), "\n")
			code = 1
		}
		if rep.Failed() {
			code = 1
		}
	}
	r.OK = code == exitOK
	if *o.format == outputJSON {
		return writeImportJSON(r, data, *o.output, code, stdout, stderr)
	}
	fmt.Fprintf(stderr, "podvisor import: %s, %s\n", format, count(len(m.Processes), "process", "processes"))
	io.WriteString(stderr, rb.String())
	if len(m.Processes) == 0 {
		return code
	}
	for _, n := range r.Notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(stderr, "check --portable of the result failed:\n%s\n", strings.Join(r.Errors, "\n"))
	} else {
		fmt.Fprintln(stderr, "check --portable: ok")
	}
	return writeImported(data, *o.output, code, stdout, stderr)
}

// importReport is import's report; -o json prints it (schema/openapi.json's
// ImportReport).
type importReport struct {
	OK        bool     `json:"ok"`               // converted, and the result passed check --portable
	Format    string   `json:"format"`           // the input's format
	Processes int      `json:"processes"`        // processes written
	Report    []string `json:"report"`           // what changed meaning, one line each
	Notes     []string `json:"notes"`            // check --portable's notes: what depends on this machine
	Errors    []string `json:"errors"`           // check --portable's errors
	Output    string   `json:"output,omitempty"` // the file procs.yaml was written to
	Config    string   `json:"config,omitempty"` // procs.yaml, when not written to a file
}

// writeImportJSON writes procs.yaml to file (if one is named) and prints
// the report.
func writeImportJSON(r importReport, data []byte, file string, code int, stdout, stderr io.Writer) int {
	if r.Processes > 0 {
		if file == "" {
			r.Config = string(data)
		} else if err := os.WriteFile(file, data, 0o644); err != nil {
			fmt.Fprintf(stderr, "podvisor import: %v\n", err)
			return 1
		} else {
			r.Output = file
		}
	}
	if err := writeJSON(stdout, r); err != nil {
		fmt.Fprintf(stderr, "podvisor import: %v\n", err)
		return 1
	}
	return code
}

// writeImported writes procs.yaml to file, or to stdout without one.
func writeImported(data []byte, file string, code int, stdout, stderr io.Writer) int {
	if file == "" {
		if _, err := stdout.Write(data); err != nil {
			fmt.Fprintf(stderr, "podvisor import: write: %v\n", err)
			return 1
		}
		return code
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "podvisor import: %v\n", err)
		return 1
	}
	return code
}

func isFormat(f importer.Format) bool {
	for _, g := range importer.Formats {
		if f == g {
			return true
		}
	}
	return false
}

// relocateEnvFiles rewrites env_file paths found on this machine (a
// Procfile's .env) relative to the directory procs.yaml is written to.
func relocateEnvFiles(m *importer.Model, outDir string) {
	for _, p := range m.Processes {
		files := p.Notes().EnvFile
		for i, f := range files {
			abs, err := filepath.Abs(f)
			if err != nil {
				continue
			}
			if rel, err := filepath.Rel(outDir, abs); err == nil && !strings.HasPrefix(rel, "../../../") {
				files[i] = rel
			} else {
				files[i] = abs
			}
		}
	}
}

func formatWords() []string {
	var w []string
	for _, f := range importer.Formats {
		w = append(w, string(f))
	}
	return w
}
