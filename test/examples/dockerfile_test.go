package examples

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// No container engine runs on our machines, so Dockerfile.base is checked
// here instead: its instructions are parsed, held to what the base image
// must provide and to hadolint-style rules, and its build stage is replayed
// (the COPYs into a scratch directory, then its RUN lines) to show that the
// binary it makes is static and version-stamped.

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Line  int    // where it starts, 1-based
	Cmd   string // upper case: FROM, RUN, ...
	Args  string
	Stage int // index of the FROM it belongs to; -1 before the first FROM
}

// exec returns the exec (JSON array) form of the arguments, or nil for the
// shell form.
func (in instruction) exec() []string {
	var argv []string
	if json.Unmarshal([]byte(in.Args), &argv) != nil {
		return nil
	}
	return argv
}

// flags splits leading --name=value options (COPY --from=build, HEALTHCHECK
// --interval=10s) from the rest of the arguments.
func (in instruction) flags() (map[string]string, string) {
	f := map[string]string{}
	rest := in.Args
	for strings.HasPrefix(rest, "--") {
		opt, after, _ := strings.Cut(rest, " ")
		k, v, _ := strings.Cut(strings.TrimPrefix(opt, "--"), "=")
		f[k] = v
		rest = strings.TrimLeft(after, " ")
	}
	return f, rest
}

// parseDockerfile reads the instructions of a Dockerfile: comments and blank
// lines are skipped (also inside continuations, as BuildKit does), a line
// ending in a backslash continues on the next, and ARGs before the first
// FROM are expanded in FROM lines with their default values.
func parseDockerfile(src string) ([]instruction, error) {
	var out []instruction
	stage := -1
	globalArgs := map[string]string{}
	var cur *instruction
	for i, raw := range strings.Split(src, "\n") {
		text := strings.TrimSpace(raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		more := strings.HasSuffix(text, `\`)
		text = strings.TrimSpace(strings.TrimSuffix(text, `\`))
		if cur != nil {
			cur.Args = strings.TrimSpace(cur.Args + " " + text)
		} else {
			cmd, args, _ := strings.Cut(text, " ")
			cmd = strings.ToUpper(cmd)
			if !instructionName.MatchString(cmd) {
				return nil, fmt.Errorf("line %d: not an instruction: %q", i+1, text)
			}
			if cmd == "FROM" {
				stage++
				// FROM sees the ARGs declared before the first FROM, with
				// their defaults (what a build without --build-arg uses).
				args = os.Expand(args, func(name string) string { return globalArgs[name] })
			}
			if cmd == "ARG" && stage < 0 {
				name, def, _ := strings.Cut(strings.TrimSpace(args), "=")
				globalArgs[name] = def
			}
			cur = &instruction{Line: i + 1, Cmd: cmd, Args: strings.TrimSpace(args), Stage: stage}
		}
		if !more {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: continuation at the end of the file", cur.Line)
	}
	return out, nil
}

// stageNames returns the FROM ... AS name of each stage ("" when unnamed).
func stageNames(ins []instruction) []string {
	var names []string
	for _, in := range ins {
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			name := ""
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				name = f[len(f)-1]
			}
			names = append(names, name)
		}
	}
	return names
}

// fromImage returns the image of a FROM, without --platform and AS.
func fromImage(in instruction) string {
	_, rest := in.flags()
	image, _, _ := strings.Cut(rest, " ")
	return image
}

var (
	instructionName = regexp.MustCompile(`^[A-Z]+$`)
	aptInstall      = regexp.MustCompile(`\bapt-get\s+(\S+\s+)*install\b`)
	aptYes          = regexp.MustCompile(`\s(-y|--yes|--assume-yes|-[a-z]*y[a-z]*)\b`)
)

// command matches name run as a command in a shell line: at the start or
// after ;, & or |.
func command(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[;&|]\s*)` + regexp.QuoteMeta(name) + `\s`)
}

// earlierStage reports whether COPY --from=from in stage refers to an earlier
// stage (by name or index) or to an image (name:tag).
func earlierStage(from string, stage int, names []string) bool {
	if n, err := strconv.Atoi(from); err == nil {
		return n >= 0 && n < stage
	}
	return slices.Contains(names[:max(stage, 0)], from) || strings.Contains(from, ":")
}

// finding is a rule violation.
type finding struct {
	Line int
	Rule string
	Msg  string
}

func (f finding) String() string { return fmt.Sprintf("line %d: %s %s", f.Line, f.Rule, f.Msg) }

// lintDockerfile applies hadolint's rules that matter for these images
// (their hadolint codes, so a reader can look them up).
func lintDockerfile(ins []instruction) []finding {
	var fs []finding
	add := func(in instruction, rule, format string, args ...any) {
		fs = append(fs, finding{in.Line, rule, fmt.Sprintf(format, args...)})
	}
	names := stageNames(ins)
	lastUser := map[int]instruction{}
	seen := map[string]map[int]int{}
	workdir := map[int]bool{}
	pipefail := map[int]bool{}
	for _, in := range ins {
		if seen[in.Cmd] == nil {
			seen[in.Cmd] = map[int]int{}
		}
		seen[in.Cmd][in.Stage]++
		switch in.Cmd {
		case "FROM":
			image := fromImage(in)
			if image == "scratch" || slices.Contains(names[:in.Stage], image) {
				break
			}
			ref := image[strings.LastIndex(image, "/")+1:]
			_, tag, hasTag := strings.Cut(ref, ":")
			switch {
			case strings.Contains(image, "@sha256:"):
			case !hasTag:
				add(in, "DL3006", "image %s has no tag: pin one", image)
			case tag == "latest":
				add(in, "DL3007", "image %s uses latest: pin a version", image)
			}
		case "CMD", "ENTRYPOINT":
			if in.exec() == nil {
				add(in, "DL3025", "%s in shell form: use the JSON exec form, so that signals reach the program", in.Cmd)
			}
			if seen[in.Cmd][in.Stage] > 1 {
				add(in, "DL4003", "more than one %s in a stage: only the last counts", in.Cmd)
			}
		case "RUN":
			args := in.Args
			if command("sudo").MatchString(args) {
				add(in, "DL3004", "sudo in RUN: the build runs as root already")
			}
			if command("apt").MatchString(args) {
				add(in, "DL3027", "apt is for people: use apt-get")
			}
			if command("cd").MatchString(args) {
				add(in, "DL3003", "cd in RUN: use WORKDIR")
			}
			if aptInstall.MatchString(args) {
				if !strings.Contains(args, "--no-install-recommends") {
					add(in, "DL3015", "apt-get install without --no-install-recommends")
				}
				if !aptYes.MatchString(args) {
					add(in, "DL3014", "apt-get install without -y")
				}
				if !strings.Contains(args, "rm -rf /var/lib/apt/lists/*") {
					add(in, "DL3009", "apt-get lists left in the layer: end the RUN with rm -rf /var/lib/apt/lists/*")
				}
			}
			if strings.Contains(args, " | ") && !pipefail[in.Stage] {
				add(in, "DL4006", "a pipe in RUN without SHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]: a failing stage would go unnoticed")
			}
		case "SHELL":
			if strings.Contains(in.Args, "pipefail") {
				pipefail[in.Stage] = true
			}
		case "ADD":
			add(in, "DL3020", "ADD: use COPY for files and directories")
		case "COPY":
			f, rest := in.flags()
			if from, ok := f["from"]; ok && !earlierStage(from, in.Stage, names) {
				add(in, "DL3022", "COPY --from=%s: no earlier stage of that name", from)
			}
			args := strings.Fields(rest)
			if dest := args[len(args)-1]; !path.IsAbs(dest) && !workdir[in.Stage] {
				add(in, "DL3045", "COPY to the relative %s without a WORKDIR", dest)
			}
		case "WORKDIR":
			workdir[in.Stage] = true
			if !path.IsAbs(in.Args) && !strings.HasPrefix(in.Args, "$") {
				add(in, "DL3000", "WORKDIR %s: use an absolute path", in.Args)
			}
		case "USER":
			lastUser[in.Stage] = in
		case "MAINTAINER":
			add(in, "DL4000", "MAINTAINER is deprecated: use LABEL")
		}
	}
	if u, ok := lastUser[len(names)-1]; ok && (u.Args == "root" || u.Args == "0") {
		add(u, "DL3002", "the last USER is root: leave it unset or name the user")
	}
	slices.SortFunc(fs, func(a, b finding) int { return a.Line - b.Line })
	return fs
}

func readDockerfile(t *testing.T) []instruction {
	t.Helper()
	ins, err := parseDockerfile(readFile(t, filepath.Join(repoRoot, "Dockerfile.base")))
	if err != nil {
		t.Fatalf("Dockerfile.base: %v", err)
	}
	return ins
}

// TestDockerfileLintRules shows that each rule catches what it is for and
// leaves a conforming file alone.
func TestDockerfileLintRules(t *testing.T) {
	good := "FROM golang:1.26 AS build\nWORKDIR /src\nCOPY . .\nRUN go build -o /out/x .\n" +
		"FROM debian:12-slim\nSHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]\n" +
		"RUN apt-get update \\\n  && apt-get install -y --no-install-recommends nginx \\\n  && rm -rf /var/lib/apt/lists/*\n" +
		"RUN echo a | cat\nCOPY --from=build /out/x /usr/local/bin/x\nUSER nobody\nENTRYPOINT [\"x\"]\n"
	for _, tc := range []struct{ rule, src string }{
		{"", good},
		{"DL3006", "FROM debian\n"},
		{"DL3007", "FROM debian:latest\n"},
		{"DL3025", "FROM debian:12\nENTRYPOINT podvisor run\n"},
		{"DL3025", "FROM debian:12\nCMD podvisor run\n"},
		{"DL4003", "FROM debian:12\nCMD [\"a\"]\nCMD [\"b\"]\n"},
		{"DL3004", "FROM debian:12\nRUN sudo apt-get update\n"},
		{"DL3027", "FROM debian:12\nRUN apt install -y --no-install-recommends x && rm -rf /var/lib/apt/lists/*\n"},
		{"DL3003", "FROM debian:12\nRUN cd /tmp && make\n"},
		{"DL3015", "FROM debian:12\nRUN apt-get update && apt-get install -y nginx && rm -rf /var/lib/apt/lists/*\n"},
		{"DL3014", "FROM debian:12\nRUN apt-get install --no-install-recommends nginx && rm -rf /var/lib/apt/lists/*\n"},
		{"DL3009", "FROM debian:12\nRUN apt-get update && apt-get install -y --no-install-recommends nginx\n"},
		{"DL4006", "FROM debian:12\nRUN curl -s x | sh\n"},
		{"DL3020", "FROM debian:12\nADD procs.yaml /etc/podvisor/\n"},
		{"DL3022", "FROM debian:12\nCOPY --from=builder /x /x\n"},
		{"DL3045", "FROM debian:12\nCOPY x ./\n"},
		{"DL3000", "FROM debian:12\nWORKDIR src\n"},
		{"DL3002", "FROM debian:12\nUSER root\n"},
		{"DL4000", "FROM debian:12\nMAINTAINER me\n"},
	} {
		ins, err := parseDockerfile(tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		var rules []string
		for _, f := range lintDockerfile(ins) {
			rules = append(rules, f.Rule)
		}
		want := []string{tc.rule}
		if tc.rule == "" {
			want = nil
		}
		if !slices.Equal(rules, want) {
			t.Errorf("%q: findings %v, want %v", tc.src, rules, want)
		}
	}
}

func TestParseDockerfile(t *testing.T) {
	ins, err := parseDockerfile("# syntax=docker/dockerfile:1\nARG C=c:2\nFROM a:1 AS b\n\nRUN x \\\n  # a comment\n  y\nfrom ${C}\nCMD [\"p\", \"q\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []instruction{
		{Line: 2, Cmd: "ARG", Args: "C=c:2", Stage: -1},
		{Line: 3, Cmd: "FROM", Args: "a:1 AS b", Stage: 0},
		{Line: 5, Cmd: "RUN", Args: "x y", Stage: 0},
		{Line: 8, Cmd: "FROM", Args: "c:2", Stage: 1},
		{Line: 9, Cmd: "CMD", Args: `["p", "q"]`, Stage: 1},
	}
	if !slices.Equal(ins, want) {
		t.Errorf("got %+v\nwant %+v", ins, want)
	}
	if got := ins[4].exec(); !slices.Equal(got, []string{"p", "q"}) {
		t.Errorf("exec form %q", got)
	}
	if _, err := parseDockerfile("FROM a:1\nRUN x \\\n"); err == nil {
		t.Error("a dangling continuation parsed")
	}
}

// TestDockerfileBase holds Dockerfile.base to what the base image promises:
// a multi-stage build of a static, trimmed, version-stamped podvisor, and a
// slim Debian image that runs `podvisor run` on /etc/podvisor/procs.yaml,
// stops with SIGTERM and reports health through `podvisor wait --ready`.
func TestDockerfileBase(t *testing.T) {
	ins := readDockerfile(t)
	for _, f := range lintDockerfile(ins) {
		t.Errorf("Dockerfile.base %s", f)
	}
	names := stageNames(ins)
	if len(names) < 2 || names[0] != "build" {
		t.Fatalf("stages %q: want a first stage named build and a final one", names)
	}
	final := len(names) - 1
	in := func(stage int, cmd string) []instruction {
		var out []instruction
		for _, i := range ins {
			if i.Stage == stage && i.Cmd == cmd {
				out = append(out, i)
			}
		}
		return out
	}
	one := func(stage int, cmd string) instruction {
		t.Helper()
		got := in(stage, cmd)
		if len(got) != 1 {
			t.Fatalf("stage %d: %d %s instructions, want 1", stage, len(got), cmd)
		}
		return got[0]
	}

	// Build stage: a Go image at least as new as go.mod asks for.
	buildImage := fromImage(one(0, "FROM"))
	goMod := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readFile(t, filepath.Join(repoRoot, "go.mod")))
	imageGo := regexp.MustCompile(`^golang:(\d+(?:\.\d+)*)`).FindStringSubmatch(buildImage)
	if goMod == nil || imageGo == nil || compareVersions(imageGo[1], goMod[1]) < 0 {
		t.Errorf("build image %s: want golang:<version>-... with version >= go.mod's %v", buildImage, goMod)
	}
	build := goBuildRun(t, ins)
	for _, want := range []string{"CGO_ENABLED=0", "go build", "-trimpath", "-ldflags", "-s -w", "-X main.version=${VERSION}", "./cmd/podvisor"} {
		if !strings.Contains(build.Args, want) {
			t.Errorf("build RUN %q lacks %q", build.Args, want)
		}
	}

	// Final stage.
	if image := fromImage(one(final, "FROM")); !regexp.MustCompile(`^debian:[\w.]+-slim$`).MatchString(image) {
		t.Errorf("final image %s: want a slim Debian", image)
	}
	var copied bool
	for _, c := range in(final, "COPY") {
		f, rest := c.flags()
		if f["from"] == "build" && strings.HasSuffix(rest, " /usr/local/bin/podvisor") {
			copied = true
		}
	}
	if !copied {
		t.Error("no COPY --from=build ... /usr/local/bin/podvisor in the final stage")
	}
	if got := one(final, "ENTRYPOINT").exec(); !slices.Equal(got, []string{"podvisor", "run"}) {
		t.Errorf("ENTRYPOINT %q, want [\"podvisor\", \"run\"]", one(final, "ENTRYPOINT").Args)
	}
	if got := one(final, "STOPSIGNAL").Args; got != "SIGTERM" {
		t.Errorf("STOPSIGNAL %q, want SIGTERM", got)
	}
	hc := one(final, "HEALTHCHECK")
	_, hcCmd := hc.flags()
	argv := instruction{Args: strings.TrimSpace(strings.TrimPrefix(hcCmd, "CMD"))}.exec()
	if !strings.HasPrefix(hcCmd, "CMD ") || len(argv) < 4 || !slices.Equal(argv[:3], []string{"podvisor", "wait", "--ready"}) {
		t.Errorf("HEALTHCHECK %q: want CMD [\"podvisor\", \"wait\", \"--ready\", ADDR, ...]", hc.Args)
	}
	var config bool
	for _, e := range in(final, "ENV") {
		if strings.Contains(" "+e.Args+" ", " PODVISOR_CONFIG=/etc/podvisor/procs.yaml ") {
			config = true
		}
	}
	if !config {
		t.Error("no ENV PODVISOR_CONFIG=/etc/podvisor/procs.yaml in the final stage")
	}
}

// goBuildRun returns the build stage's RUN that runs go build.
func goBuildRun(t *testing.T, ins []instruction) instruction {
	t.Helper()
	for _, in := range ins {
		if in.Stage == 0 && in.Cmd == "RUN" && strings.Contains(in.Args, "go build") {
			return in
		}
	}
	t.Fatal("no RUN ... go build in the build stage")
	return instruction{}
}

// compareVersions compares dotted numeric versions: "1.26" < "1.26.8".
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// TestDockerfileBuildsStaticBinary replays the build stage: its COPYs into a
// scratch directory standing for WORKDIR, then its RUN lines with the ARG
// defaults (VERSION set to a test value), the output directory /out mapped
// to a temporary one. The binary must be static (file, ldd) and say the
// version it was stamped with.
func TestDockerfileBuildsStaticBinary(t *testing.T) {
	needPrograms(t, "file", "file")
	needPrograms(t, "libc-bin", "ldd")
	ins := readDockerfile(t)
	ctx, out := t.TempDir(), t.TempDir()
	workdir := "/"
	version := "v0.0.0-examples-test"
	env := os.Environ()
	for _, in := range ins {
		if in.Stage != 0 {
			continue
		}
		switch in.Cmd {
		case "WORKDIR":
			workdir = in.Args
		case "ARG":
			name, def, _ := strings.Cut(in.Args, "=")
			if name == "VERSION" {
				def = version
			}
			env = append(env, name+"="+def)
		case "ENV":
			t.Fatalf("ENV in the build stage is not replayed: %s", in.Args)
		case "COPY":
			_, rest := in.flags()
			args := strings.Fields(rest)
			dest := filepath.Join(ctx, path.Join(workdir, args[len(args)-1]))
			for _, src := range args[:len(args)-1] {
				copyInto(t, filepath.Join(repoRoot, src), dest, len(args) > 2 || strings.HasSuffix(args[len(args)-1], "/"))
			}
		case "RUN":
			_, script := in.flags() // --mount=type=cache: the host's own build cache stands in
			script = strings.ReplaceAll(script, "/out/", out+"/")
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = filepath.Join(ctx, workdir)
			cmd.Env = env
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("Dockerfile.base:%d RUN %s: %v\n%s", in.Line, script, err, b)
			}
		}
	}
	bin := filepath.Join(out, "podvisor")
	b, err := exec.Command("file", bin).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "ELF") || !strings.Contains(string(b), "statically linked") {
		t.Errorf("file %s: %s %v; want a statically linked ELF", bin, b, err)
	}
	// ldd exits 1 on a static binary, so only its words count.
	b, _ = exec.Command("ldd", bin).CombinedOutput()
	if s := string(b); !strings.Contains(s, "not a dynamic executable") && !strings.Contains(s, "statically linked") {
		t.Errorf("ldd %s: %s; want no dynamic dependencies", bin, s)
	}
	b, err = exec.Command(bin, "version").CombinedOutput()
	// The first line is "podvisor VERSION"; commit and Go version follow.
	if first, _, _ := strings.Cut(string(b), "\n"); err != nil || first != "podvisor "+version {
		t.Errorf("%s version: %q %v; want %q", bin, b, err, "podvisor "+version)
	}
}

// copyInto copies src as COPY does: a file to dest (or into dest when
// intoDir), a directory's contents into dest.
func copyInto(t *testing.T, src, dest string, intoDir bool) {
	t.Helper()
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatalf("COPY source: %v", err)
	}
	if fi.IsDir() {
		if err := os.CopyFS(dest, os.DirFS(src)); err != nil {
			t.Fatalf("COPY %s: %v", src, err)
		}
		return
	}
	if intoDir {
		dest = filepath.Join(dest, filepath.Base(src))
	}
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dest), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dest, data, 0o644)
	}
	if err != nil {
		t.Fatalf("COPY %s: %v", src, err)
	}
}

// TestBaseImageDocDockerfile holds the fat image in docs/base-image.md to the
// same rules: it is examples/fat-container/Dockerfile (which test/image
// builds) as it is, lints clean, builds FROM the base image, copies what
// exists, and the config it copies passes `podvisor check` (its RUN step).
func TestBaseImageDocDockerfile(t *testing.T) {
	doc := readFile(t, filepath.Join(repoRoot, "docs", "base-image.md"))
	blocks := regexp.MustCompile("(?s)```dockerfile\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no ```dockerfile block in docs/base-image.md")
	}
	fat := readFile(t, filepath.Join(repoRoot, "examples", "fat-container", "Dockerfile"))
	if !slices.ContainsFunc(blocks, func(b []string) bool { return b[1] == fat }) {
		t.Error("docs/base-image.md does not show examples/fat-container/Dockerfile as it is")
	}
	for _, b := range blocks {
		ins, err := parseDockerfile(b[1])
		if err != nil {
			t.Fatalf("docs/base-image.md: %v", err)
		}
		for _, f := range lintDockerfile(ins) {
			t.Errorf("docs/base-image.md Dockerfile %s", f)
		}
		first := slices.IndexFunc(ins, func(in instruction) bool { return in.Cmd == "FROM" })
		if first < 0 {
			t.Fatal("docs/base-image.md: a Dockerfile without FROM")
		}
		if image := fromImage(ins[first]); !strings.HasPrefix(image, "podvisor-base:") {
			t.Errorf("FROM %s: want the base image", image)
		}
		for _, in := range ins {
			if in.Cmd != "COPY" {
				continue
			}
			args := strings.Fields(in.Args)
			for _, src := range args[:len(args)-1] {
				if !fileExists(filepath.Join(repoRoot, src)) {
					t.Errorf("COPY %s: no such file in the repository", src)
				}
			}
			if dest := args[len(args)-1]; dest == "/etc/podvisor/" {
				cmd := exec.Command(podvisorBin, "check", "-c", filepath.Join(repoRoot, args[0], "procs.yaml"))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("podvisor check of the copied config: %v\n%s", err, out)
				}
			}
		}
	}
}

// TestExampleDockerfiles holds the examples' Dockerfiles (which test/image
// builds with podman) to the same rules, FROM the base image.
func TestExampleDockerfiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "Dockerfile"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/*/Dockerfile: %v", err)
	}
	for _, f := range files {
		ins, err := parseDockerfile(readFile(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, finding := range lintDockerfile(ins) {
			t.Errorf("%s %s", f, finding)
		}
		first := slices.IndexFunc(ins, func(in instruction) bool { return in.Cmd == "FROM" })
		if first < 0 || !strings.HasPrefix(fromImage(ins[first]), "podvisor-base:") {
			t.Errorf("%s: want FROM the base image (podvisor-base:...)", f)
		}
	}
}
