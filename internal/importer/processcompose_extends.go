package importer

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// process-compose's top-level extends: names another project file that
// this one builds on (src/loader/loader.go, www/docs/merge.md). It loads
// as if both were given with -f, the base first: the path is relative to
// the extending file's directory (absolute as it is), the base may extend
// another, a file met twice is refused, and the .env is the one of the
// working directory for every file of the chain (never the base's own).
// Before the merge every process of a base file gets the base's directory
// as its working_dir (joined before a relative one). The merge is mergo's
// (src/loader/merger.go): pcMerge below.

// pcLayer is one file of an extends chain.
type pcLayer struct {
	src  Source
	root *yaml.Node
	// image: src.Path is a path of the image (read under --root)
	image bool
	// wdDir: the directory process-compose gives the file's processes,
	// relative to the main file's directory ("" for the main file)
	wdDir string
}

// maxExtends bounds a chain; process-compose has no bound but a cycle.
const maxExtends = 64

// extend returns root merged over the files its extends: chain names,
// and records the file of every node that comes from a base in c.origin.
func (c *pcConv) extend(root *yaml.Node, opt Options) (*yaml.Node, error) {
	chain := []pcLayer{{src: c.src, root: root}}
	c.origin = map[*yaml.Node]string{}
	seen := map[string]string{pcFileKey(c.src.Path, false): c.src.Path}
	for cur := chain[0]; ; {
		ext := get(cur.root, "extends")
		if ext != nil && ext.Kind != yaml.ScalarNode {
			return nil, perr(cur.src.Path, ext.Line, "extends: want the path of the file this one extends, not a %s", kindName(ext))
		}
		val := strings.TrimSpace(scalar(ext))
		if ext == nil || val == "" {
			break
		}
		if len(chain) > maxExtends {
			return nil, perr(cur.src.Path, ext.Line, "extends: a chain of more than %d files; merge some of them", maxExtends)
		}
		p, image, err := pcExtendsPath(cur, val, opt.Root)
		if err != nil {
			return nil, perr(cur.src.Path, ext.Line, "extends %q: %v", val, err)
		}
		key := pcFileKey(p, image)
		if _, ok := seen[key]; ok {
			var names []string
			for _, l := range chain {
				names = append(names, l.src.Path)
			}
			return nil, perr(cur.src.Path, ext.Line, "extends %q: a cycle (%s extends %s): process-compose refuses to load it (\"already specified in files to load\"); remove the extends: that closes the loop", val, strings.Join(names, " extends "), p)
		}
		seen[key] = p
		read := readFile
		if image && opt.ReadFile != nil {
			read = opt.ReadFile
		}
		src, err := read(p)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				err = errors.New(strings.TrimPrefix(pe.Msg, "cannot read: "))
			}
			return nil, perr(cur.src.Path, ext.Line, "extends %q: cannot read %s: %v; the path is relative to this file's directory: correct it, or remove extends: and copy in the settings it inherits", val, p, err)
		}
		base, err := decodeYAML(src)
		if err != nil {
			return nil, err
		}
		wd := path.Dir(val)
		if !path.IsAbs(val) {
			wd = path.Join(cur.wdDir, wd)
		}
		c.mark(base, src.Path)
		cur = pcLayer{src: src, root: base, image: image, wdDir: wd}
		chain = append(chain, cur)
		c.r.AsIs(c.pos(ext), "extends "+val+" ("+src.Path+" merged under this file as process-compose merges it)")
	}
	if len(chain) == 1 {
		return root, nil
	}
	merged := c.withWorkingDir(chain[len(chain)-1])
	for i := len(chain) - 2; i >= 0; i-- {
		over := chain[i].root
		if i > 0 {
			over = c.withWorkingDir(chain[i])
		}
		merged = pcMergeMap(merged, over, pcProjectRules)
	}
	return pcWithout(merged, "extends"), nil
}

// pcFileKey names a file for cycle detection: the absolute path on this
// machine, or the image's path.
func pcFileKey(p string, image bool) string {
	if image {
		return "image:" + path.Clean(p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// pcExtendsPath resolves an extends: value written in cur. Under --root
// (root != "") an absolute path, or a relative one from a file inside the
// root, is a path of the image, read through the --root reader (which
// refuses symbolic links that leave it); a relative path that climbs out
// of the root is refused.
func pcExtendsPath(cur pcLayer, val, root string) (string, bool, error) {
	if cur.image {
		if path.IsAbs(val) {
			return path.Clean(val), true, nil
		}
		return path.Join(path.Dir(cur.src.Path), val), true, nil
	}
	if path.IsAbs(val) {
		return path.Clean(val), root != "", nil
	}
	p := filepath.Join(filepath.Dir(cur.src.Path), val)
	if root == "" {
		return p, false, nil
	}
	absRoot, err1 := filepath.Abs(root)
	absCur, err2 := filepath.Abs(cur.src.Path)
	absP, err3 := filepath.Abs(p)
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", false, err
	}
	if !pcUnder(absRoot, absCur) {
		return p, false, nil // a file outside the image: its neighbours are read from here
	}
	if !pcUnder(absRoot, absP) {
		return "", false, fmt.Errorf("%s %w %s: \"..\" climbs out of it; copy the base file into the image, or import without --root", p, ErrOutsideRoot, root)
	}
	rel, _ := filepath.Rel(absRoot, absP)
	return "/" + filepath.ToSlash(rel), true, nil
}

func pcUnder(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// mark records the file of every node of a base file, for positions.
func (c *pcConv) mark(n *yaml.Node, file string) {
	if n == nil || c.origin[n] != "" {
		return
	}
	c.origin[n] = file
	for _, k := range n.Content {
		c.mark(k, file)
	}
	if n.Kind == yaml.AliasNode {
		c.mark(n.Alias, file)
	}
}

// withWorkingDir returns a base file's root with its directory given to
// every process's working_dir, as process-compose does before merging
// (copyWorkingDirToProcesses): set when absent, joined before a relative
// one.
func (c *pcConv) withWorkingDir(l pcLayer) *yaml.Node {
	procs := get(l.root, "processes")
	if procs == nil || procs.Kind != yaml.MappingNode {
		return l.root
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: procs.Line, Column: procs.Column}
	for _, kv := range pairs(procs) {
		body := kv[1]
		if body == nil || body.Kind != yaml.MappingNode {
			out.Content = append(out.Content, kv[0], body)
			continue
		}
		wd := get(body, "working_dir")
		val := strings.TrimSpace(scalar(wd))
		switch {
		case val == "":
			val = l.wdDir
		case !path.IsAbs(val) && !strings.HasPrefix(val, "$"):
			val = path.Join(l.wdDir, val)
		}
		line := body.Line
		if wd != nil {
			line = wd.Line
		}
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "working_dir", Line: line}
		nb := pcWithout(body, "working_dir")
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val, Line: line}
		c.origin[key], c.origin[v] = l.src.Path, l.src.Path
		nb.Content = append(nb.Content, key, v)
		out.Content = append(out.Content, kv[0], nb)
	}
	return pcReplace(l.root, "processes", out)
}

// pcWithout returns a copy of mapping n (aliases and merge keys resolved)
// without key.
func pcWithout(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for _, kv := range pairs(n) {
		if kv[0].Value != key {
			out.Content = append(out.Content, kv[0], kv[1])
		}
	}
	return out
}

// pcReplace returns a copy of mapping n with key's value v.
func pcReplace(n *yaml.Node, key string, v *yaml.Node) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for _, kv := range pairs(n) {
		if kv[0].Value == key {
			kv[1] = v
		}
		out.Content = append(out.Content, kv[0], kv[1])
	}
	return out
}

// pcRule is how one key merges, beside the default of mergo with
// WithOverride and WithAppendSlice: mappings (structs, pointers to structs
// and maps) key by key, lists appended, a scalar replaced unless it is
// empty (null, "", false, 0: mergo keeps the base's value then).
type pcRule int

const (
	pcDeep     pcRule = iota // the default
	pcEnv                    // KEY=value lists: by key, the override's value wins, sorted
	pcReplaced               // replaced whole when the override is not empty
	pcEntries                // a map whose entries are replaced whole (depends_on)
	pcProcs                  // processes: by name, each merged by pcProcessRules
)

var pcProjectRules = map[string]pcRule{
	"environment": pcEnv,
	"processes":   pcProcs,
}

var pcProcessRules = map[string]pcRule{
	"environment": pcEnv,
	"namespace":   pcReplaced,
	"depends_on":  pcEntries,
}

// pcMergeMap merges mapping over into base (both left as they are).
func pcMergeMap(base, over *yaml.Node, rules map[string]pcRule) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: base.Line, Column: base.Column}
	idx := map[string]int{}
	for _, kv := range pairs(base) {
		idx[kv[0].Value] = len(out.Content)
		out.Content = append(out.Content, kv[0], kv[1])
	}
	for _, kv := range pairs(over) {
		i, ok := idx[kv[0].Value]
		if !ok {
			idx[kv[0].Value] = len(out.Content)
			out.Content = append(out.Content, kv[0], kv[1])
			continue
		}
		if v := pcMergeValue(out.Content[i+1], kv[1], kv[0].Value, rules); v != out.Content[i+1] {
			out.Content[i], out.Content[i+1] = kv[0], v
		}
	}
	return out
}

// pcMergeValue merges the value of key over into the base's b.
func pcMergeValue(b, o *yaml.Node, key string, rules map[string]pcRule) *yaml.Node {
	b, o = deref(b), deref(o)
	if pcEmpty(o) {
		return b
	}
	if pcEmpty(b) {
		return o
	}
	switch rules[key] {
	case pcEnv:
		return pcMergeEnv(b, o)
	case pcReplaced:
		return o
	case pcProcs:
		if b.Kind != yaml.MappingNode || o.Kind != yaml.MappingNode {
			return o
		}
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: b.Line, Column: b.Column}
		idx := map[string]int{}
		for _, kv := range pairs(b) {
			idx[kv[0].Value] = len(out.Content)
			out.Content = append(out.Content, kv[0], kv[1])
		}
		for _, kv := range pairs(o) {
			if i, ok := idx[kv[0].Value]; ok && deref(out.Content[i+1]).Kind == yaml.MappingNode && kv[1].Kind == yaml.MappingNode {
				out.Content[i+1] = pcMergeMap(out.Content[i+1], kv[1], pcProcessRules)
				continue
			} else if ok {
				out.Content[i+1] = kv[1]
				continue
			}
			out.Content = append(out.Content, kv[0], kv[1])
		}
		return out
	case pcEntries:
		if b.Kind == yaml.MappingNode && o.Kind == yaml.MappingNode {
			return pcMergeMap(b, o, map[string]pcRule{"*": pcReplaced}) // entries: see pcMergeMap's "*"
		}
		return o
	}
	if rules["*"] == pcReplaced {
		return o
	}
	switch {
	case b.Kind == yaml.MappingNode && o.Kind == yaml.MappingNode:
		// watch: paths are replaced, as process-compose's special case
		return pcMergeMap(b, o, map[string]pcRule{"paths": pcReplaced})
	case b.Kind == yaml.SequenceNode && o.Kind == yaml.SequenceNode:
		out := &yaml.Node{Kind: yaml.SequenceNode, Tag: b.Tag, Line: b.Line, Column: b.Column}
		out.Content = append(append(out.Content, b.Content...), o.Content...)
		return out
	}
	return o
}

// pcEmpty reports whether n decodes to Go's zero value, which mergo does
// not copy over the base's value.
func pcEmpty(n *yaml.Node) bool {
	if n == nil {
		return true
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return true
		case "!!bool":
			b, err := strconv.ParseBool(n.Value)
			return err == nil && !b
		case "!!int":
			i, err := strconv.ParseInt(n.Value, 0, 64)
			return err == nil && i == 0
		}
		return n.Value == ""
	case yaml.MappingNode, yaml.SequenceNode:
		return len(n.Content) == 0
	}
	return false
}

// pcMergeEnv merges two environment: values (lists of KEY=value, or
// mappings) by key: the override's value wins, and the result is sorted,
// as process-compose's merger writes it.
func pcMergeEnv(b, o *yaml.Node) *yaml.Node {
	byKey := map[string]*yaml.Node{}
	for _, n := range []*yaml.Node{b, o} {
		switch n.Kind {
		case yaml.SequenceNode:
			for _, it := range n.Content {
				k, _, _ := strings.Cut(scalar(it), "=")
				byKey[k] = it
			}
		case yaml.MappingNode:
			for _, kv := range pairs(n) {
				byKey[kv[0].Value] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[0].Value + "=" + scalar(kv[1]), Line: kv[0].Line}
			}
		}
	}
	out := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: b.Line, Column: b.Column}
	for _, n := range byKey {
		out.Content = append(out.Content, n)
	}
	sort.Slice(out.Content, func(i, j int) bool { return scalar(out.Content[i]) < scalar(out.Content[j]) })
	return out
}

// processExtends resolves process-compose's process-level extends: (its
// src/loader/extends.go, after the files are merged): a process naming
// another gets that process's settings (resolved first, for chains),
// merged under its own by the same rules as a file's; an unknown name,
// a process naming itself and a cycle are refused, as process-compose
// refuses to load them.
func (c *pcConv) processExtends(root *yaml.Node) (*yaml.Node, error) {
	procs := get(root, "processes")
	if procs == nil || procs.Kind != yaml.MappingNode {
		return root, nil
	}
	bodies := map[string]*yaml.Node{}
	var names []string
	for _, kv := range pairs(procs) {
		bodies[kv[0].Value] = kv[1]
		names = append(names, kv[0].Value)
	}
	const inProgress, done = 1, 2
	state := map[string]int{}
	found := false
	var resolve func(name string) error
	resolve = func(name string) error {
		switch state[name] {
		case done:
			return nil
		case inProgress:
			ext := get(bodies[name], "extends")
			return perr(c.file(ext), ext.Line, "process %s: extends %q: a cycle of process extends; process-compose refuses to load it: remove one of them", name, scalar(ext))
		}
		body := bodies[name]
		ext := get(body, "extends")
		parent := strings.TrimSpace(scalar(ext))
		if ext == nil || body.Kind != yaml.MappingNode || parent == "" {
			state[name] = done
			return nil
		}
		found = true
		switch {
		case ext.Kind != yaml.ScalarNode:
			return perr(c.file(ext), ext.Line, "process %s: extends: want the name of another process, not a %s", name, kindName(ext))
		case parent == name:
			return perr(c.file(ext), ext.Line, "process %s: extends itself; process-compose refuses to load it: remove extends: or name another process", name)
		case bodies[parent] == nil:
			return perr(c.file(ext), ext.Line, "process %s: extends %q: no process of that name; process-compose refuses to load it: name one of the file's processes", name, parent)
		}
		state[name] = inProgress
		if err := resolve(parent); err != nil {
			return err
		}
		pb := bodies[parent]
		if pb.Kind != yaml.MappingNode {
			pb = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		bodies[name] = pcWithout(pcMergeMap(pcWithout(pb, "extends"), body, pcProcessRules), "extends")
		c.r.AsIs(c.pos(ext), name+".extends "+parent+" (its settings merged under this process's, as process-compose does)")
		state[name] = done
		return nil
	}
	for _, name := range names {
		if err := resolve(name); err != nil {
			return nil, err
		}
	}
	if !found {
		return root, nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: procs.Line, Column: procs.Column}
	for _, kv := range pairs(procs) {
		out.Content = append(out.Content, kv[0], bodies[kv[0].Value])
	}
	return pcReplace(root, "processes", out), nil
}
