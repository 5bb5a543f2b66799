package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelpShowsEachDefaultOnce: a flag whose description already says its
// default ("$PODVISOR_CONFIG, else procs.yaml", "default: all") gets no
// second "(default X)".
func TestHelpShowsEachDefaultOnce(t *testing.T) {
	appended := regexp.MustCompile(` \(default [^)]*\)$`)
	own := regexp.MustCompile(`default|, else `)
	for _, c := range commands {
		for _, f := range flagHelp(c) {
			if loc := appended.FindStringIndex(f.usage); loc != nil && own.MatchString(f.usage[:loc[0]]) {
				t.Errorf("podvisor %s --help: %s states its default twice: %q", c.name, f.names, f.usage)
			}
		}
	}
}

// TestReferenceEnvironmentTable: every PODVISOR_ variable the commands read
// (a literal in os.Getenv or os.LookupEnv in this package, or in
// internal/app, which composes `run`) has a row in the reference's
// environment table.
func TestReferenceEnvironmentTable(t *testing.T) {
	table := chapter(t, readReference(t), "Environment variables")
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	appFiles, err := filepath.Glob("../../internal/app/*.go")
	if err != nil || len(appFiles) == 0 {
		t.Fatalf("internal/app's files: %v", err)
	}
	files = append(files, appFiles...)
	read := regexp.MustCompile(`os\.(?:Getenv|LookupEnv)\("(PODVISOR_[A-Z0-9_]+)"\)`)
	var vars []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(vars, m[1]) {
				vars = append(vars, m[1])
			}
		}
	}
	if len(vars) < 3 {
		t.Fatalf("found only %q: the search is broken", vars)
	}
	for _, v := range vars {
		if !strings.Contains(table, "| `"+v+"` |") {
			t.Errorf("docs/reference.md's environment table has no row for %s", v)
		}
	}
}

// TestReferenceSaysSIGHUPReloads: the reference's signal section says what
// SIGHUP does (it reloads; it was once "logged and ignored").
func TestReferenceSaysSIGHUPReloads(t *testing.T) {
	doc := readReference(t)
	_, sec, _ := strings.Cut(doc, "### Signals and PID 1\n")
	sec, _, _ = strings.Cut(sec, "\n### ")
	if !strings.Contains(sec, "SIGHUP reloads the config") || strings.Contains(doc, "SIGHUP is logged and ignored") {
		t.Errorf("the reference's Signals section does not say SIGHUP reloads:\n%s", sec)
	}
}

// TestReadmeNamesTestPackages: the README's paragraph on make test names
// every Debian package the Makefile installs for the tests and the image
// tests (TEST_DEBS, IMAGE_DEBS).
func TestReadmeNamesTestPackages(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Two commands\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var words []string
	for _, w := range regexp.MustCompile(`[a-z0-9][a-z0-9.+-]*`).FindAllString(section, -1) {
		words = append(words, strings.TrimRight(w, "."))
	}
	for _, list := range []string{"TEST_DEBS", "IMAGE_DEBS"} {
		m := regexp.MustCompile(`(?m)^` + list + ` :?= (.*)$`).FindStringSubmatch(string(mk))
		if m == nil {
			t.Fatalf("Makefile has no %s", list)
		}
		for _, pkg := range strings.Fields(m[1]) {
			if !slices.Contains(words, pkg) {
				t.Errorf("README's make test paragraph does not name %s (Makefile %s)", pkg, list)
			}
		}
	}
	if m := regexp.MustCompile(`(?m)^TEST_DEBS :?= (.*)$`).FindStringSubmatch(string(mk)); !slices.Contains(strings.Fields(m[1]), "gcc") {
		t.Errorf("TEST_DEBS lacks gcc, the C compiler go test -race needs")
	}
}
