package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSectionsCoverLoader parses this package's source and checks that every
// key list the loader passes to fields() feeds a Section, so that a mapping
// added to the loader cannot be missing from Sections (and so from the
// reference and the schema, whose tests compare against Sections).
func TestSectionsCoverLoader(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var used []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "fields" || len(call.Args) != 3 {
				return true
			}
			id, ok := call.Args[2].(*ast.Ident)
			if !ok {
				t.Errorf("%s: fields() called with %T; pass a named key list so Sections can use it", fset.Position(call.Pos()), call.Args[2])
				return true
			}
			used = append(used, id.Name)
			return true
		})
	}
	// The key lists Sections is built from, by variable name. Sections
	// itself is checked against them below, by content.
	lists := map[string][]string{
		"topKeys": topKeys, "logKeys": logKeys, "processKeys": processKeys, "dependencyKeys": dependencyKeys,
		"probeKeys": probeKeys, "readyProbeKeys": readyProbeKeys, "restartKeys": restartKeys, "stopKeys": stopKeys, "outputKeys": outputKeys, "uiKeys": uiKeys, "socketKeys": socketKeys,
		"ruleKeys": ruleKeys, "exitCodeKeys": exitCodeKeys, "scheduleKeys": scheduleKeys, "watchKeys": watchKeys, "daemonKeys": daemonKeys, "reloadKeys": reloadKeys,
		"resourcesKeys": resourcesKeys, "memoryKeys": memoryKeys, "cpuKeys": cpuKeys, "pidsKeys": pidsKeys,
	}
	if len(used) < len(lists) {
		t.Fatalf("found only %d fields() calls (%v): the source scan is broken", len(used), used)
	}
	for _, name := range used {
		keys, ok := lists[name]
		if !ok {
			t.Errorf("the loader checks keys against %s, which no Section uses: add it to Sections (keys.go) and to this test", name)
			continue
		}
		found := false
		for _, s := range Sections() {
			found = found || isSubset(keys, s.Keys)
		}
		if !found {
			t.Errorf("no Section holds the keys of %s: %v", name, keys)
		}
	}
	// Every accepted ready key is in ready; live and startup drop only the
	// kinds they refuse.
	var ready, live, startup []string
	for _, s := range Sections() {
		switch s.Path {
		case "processes.NAME.ready":
			ready = s.Keys
		case "processes.NAME.live":
			live = s.Keys
		case "processes.NAME.startup":
			startup = s.Keys
		}
	}
	if !isSubset(readyProbeKeys, ready) || !isSubset(ready, readyProbeKeys) {
		t.Errorf("ready keys %v, want the ready probe keys %v", ready, readyProbeKeys)
	}
	for _, k := range probeKeys {
		if slices.Contains(live, k) == (slices.Contains(readyKinds, k) && !slices.Contains(liveKinds, k)) {
			t.Errorf("live and key %q disagree with liveKinds %v", k, liveKinds)
		}
		if slices.Contains(startup, k) != slices.Contains(live, k) {
			t.Errorf("startup and live disagree on key %q", k)
		}
	}
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// TestSectionKeysAccepted loads a config with each key of each Section set
// and checks the loader takes it as known (no "unknown key" error), and that
// a key outside the lists is refused: Sections says what the loader does.
func TestSectionKeysAccepted(t *testing.T) {
	for _, s := range Sections() {
		for _, k := range append(slices.Clone(s.Keys), "not_a_key") {
			src := sectionProbe(s.Path, k)
			_, err := Parse(testFile, []byte(src), env(nil))
			unknown := err != nil && strings.Contains(err.Error(), "unknown key")
			if want := k == "not_a_key"; unknown != want {
				t.Errorf("%s.%s: unknown-key error %v, want %v\n%s\n%v", s.Path, k, unknown, want, src, err)
			}
		}
	}
}

// sectionProbe returns a config with key k (given a dummy value) in the
// mapping at path.
func sectionProbe(path, k string) string {
	kv := "{" + k + ": ~}"
	switch path {
	case "":
		return k + ": ~\nprocesses: {a: {command: x}}\n"
	case "log", "ui":
		return path + ": " + kv + "\nprocesses: {a: {command: x}}\n"
	case "processes.NAME":
		return "processes: {a: " + kv + "}\n"
	case "processes.NAME.depends_on.NAME":
		return "processes: {b: {command: x}, a: {command: x, depends_on: {b: " + kv + "}}}\n"
	case "processes.NAME.restart.rules": // each element of the list
		return "processes: {a: {command: x, restart: {rules: [" + kv + "]}}}\n"
	case "processes.NAME.resources.memory", "processes.NAME.resources.cpu", "processes.NAME.resources.pids":
		return "processes: {a: {command: x, resources: {" + path[strings.LastIndex(path, ".")+1:] + ": " + kv + "}}}\n"
	case "processes.NAME.restart.rules.exit_codes":
		return "processes: {a: {command: x, restart: {rules: [{exit_codes: " + kv + ", action: stop}]}}}\n"
	}
	last := path[strings.LastIndex(path, ".")+1:]
	if list, ok := strings.CutSuffix(last, "[]"); ok {
		return "processes: {a: {command: x, " + list + ": [" + kv + "]}}\n"
	}
	return "processes: {a: {command: x, " + last + ": " + kv + "}}\n"
}
