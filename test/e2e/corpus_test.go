package e2e

// TestImportCorpus measures podvisor import on a held-out corpus of real
// configurations from public repositories (docs/import.md, "Measured on real
// configs"). The corpus is other people's code and is not in this
// repository: testdata/corpus-manifest.tsv lists where each file came from
// (repository, path, commit), and PODVISOR_CORPUS names the directory that
// holds the files, laid out as the manifest says. Without it the test skips;
// an entry whose files are not all there is skipped and counted in the log.
//
// For every entry it runs `podvisor import` and then `podvisor check
// --portable` on the written file, and requires each format to reach
// PODVISOR_CORPUS_MIN percent (default 95). With PODVISOR_CORPUS_REPORT set,
// it writes one line per entry there (format, entry, import exit, check exit,
// first error line) for reading the failures.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// corpusEntry is one configuration of the corpus: a file, or an image tree
// (s6, or a supervisord.conf whose [include]s name absolute paths).
type corpusEntry struct {
	format string
	dir    string   // relative to the corpus root
	first  string   // the entry's first file, relative to dir
	files  []string // every file the manifest lists for it, relative to dir
}

// present says whether every file of e is in the corpus.
func (e corpusEntry) present(corpus string) bool {
	for _, f := range e.files {
		if _, err := os.Stat(filepath.Join(corpus, e.dir, f)); err != nil {
			return false
		}
	}
	return true
}

// readCorpusManifest reads the manifest's rows (format, entry, file, repo,
// path, commit) and groups them by entry, in manifest order.
func readCorpusManifest(t *testing.T, path string) []corpusEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []corpusEntry
	seen := map[string]int{} // entry directory -> index in entries
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 6 {
			t.Fatalf("%s:%d: want 6 tab-separated columns (format, entry, file, repo, path, commit), got %d", path, n, len(cols))
		}
		for _, c := range cols[1:3] {
			if filepath.IsAbs(c) || strings.Contains(c, "..") {
				t.Fatalf("%s:%d: %q must be a relative path inside the corpus", path, n, c)
			}
		}
		if _, ok := seen[cols[1]]; !ok {
			seen[cols[1]] = len(entries)
			entries = append(entries, corpusEntry{format: cols[0], dir: cols[1], first: cols[2]})
		}
		e := &entries[seen[cols[1]]]
		e.files = append(e.files, cols[2])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

// input is what import is given for e, and the --root it reads absolute
// paths under: an s6 tree is given whole; a file is given with its entry
// directory (or the entry's root/, an image's file system) as root, so that
// nothing is read from this machine.
func (e corpusEntry) input(corpus string) (path, root string) {
	dir := filepath.Join(corpus, e.dir)
	if e.format == "s6" {
		return filepath.Join(dir, "root"), filepath.Join(dir, "root")
	}
	root = dir
	if strings.HasPrefix(e.first, "root/") {
		root = filepath.Join(dir, "root")
	}
	return filepath.Join(dir, e.first), root
}

type corpusResult struct {
	entry                 corpusEntry
	importCode, checkCode int
	first                 string
}

func (r corpusResult) ok() bool { return r.importCode == 0 && r.checkCode == 0 }

// firstError is the first line of out that says what went wrong: a line
// under a "not converted" heading, or else the first line not a note.
func firstError(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "not converted") && i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "note:") {
			return l
		}
	}
	return ""
}

func runCorpusEntry(t *testing.T, corpus string, e corpusEntry) corpusResult {
	in, root := e.input(corpus)
	out := filepath.Join(t.TempDir(), "procs.yaml")
	res := corpusResult{entry: e, checkCode: -1}
	imp := exec.Command(podvisorBin, "import", "--from", e.format, "--root", root, "-o", out, in)
	var stderr strings.Builder
	imp.Stderr = &stderr
	err := imp.Run()
	res.importCode = exitCode(imp.ProcessState, err)
	if res.importCode != 0 {
		res.first = firstError(stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		return res
	}
	chk := exec.Command(podvisorBin, "check", "--portable", "-c", out)
	var cerr strings.Builder
	chk.Stderr = &cerr
	err = chk.Run()
	res.checkCode = exitCode(chk.ProcessState, err)
	if res.checkCode != 0 && res.first == "" {
		res.first = firstError(cerr.String())
	}
	return res
}

func TestImportCorpus(t *testing.T) {
	corpus := os.Getenv("PODVISOR_CORPUS")
	if corpus == "" {
		t.Skip("PODVISOR_CORPUS is not set: give the directory holding the files testdata/corpus-manifest.tsv lists")
	}
	min := 95.0
	if v := os.Getenv("PODVISOR_CORPUS_MIN"); v != "" {
		var err error
		if min, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("PODVISOR_CORPUS_MIN=%q: want a percentage such as 95", v)
		}
	}
	entries := readCorpusManifest(t, filepath.Join("testdata", "corpus-manifest.tsv"))
	var results []corpusResult
	total, pass, missing := map[string]int{}, map[string]int{}, map[string]int{}
	for _, e := range entries {
		// A partial corpus (one rebuilt for some formats only, or a file no
		// longer to be had) measures what it holds: an entry whose files are
		// not all there is skipped and counted, never guessed at.
		if !e.present(corpus) {
			missing[e.format]++
			continue
		}
		r := runCorpusEntry(t, corpus, e)
		results = append(results, r)
		total[e.format]++
		if r.ok() {
			pass[e.format]++
		}
	}
	if p := os.Getenv("PODVISOR_CORPUS_REPORT"); p != "" {
		var b strings.Builder
		for _, r := range results {
			fmt.Fprintf(&b, "%s\t%s\t%d\t%d\t%s\n", r.entry.format, r.entry.dir, r.importCode, r.checkCode, r.first)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	formats := make([]string, 0, len(total))
	for f := range total {
		formats = append(formats, f)
	}
	for f := range missing {
		if total[f] == 0 {
			t.Logf("%-16s skipped: none of its %d entries is in PODVISOR_CORPUS=%s", f, missing[f], corpus)
		}
	}
	if len(formats) == 0 {
		t.Fatalf("PODVISOR_CORPUS=%s holds none of the entries testdata/corpus-manifest.tsv lists (laid out as ENTRY/FILE)", corpus)
	}
	sort.Strings(formats)
	for _, f := range formats {
		rate := 100 * float64(pass[f]) / float64(total[f])
		skipped := ""
		if missing[f] > 0 {
			skipped = fmt.Sprintf(" (%d entries skipped: files missing)", missing[f])
		}
		t.Logf("%-16s %3d/%-3d %5.1f%%%s", f, pass[f], total[f], rate, skipped)
		if rate < min {
			for _, r := range results {
				if r.entry.format == f && !r.ok() {
					t.Logf("  %s: import %d, check %d: %s", r.entry.dir, r.importCode, r.checkCode, r.first)
				}
			}
			t.Errorf("%s: %d of %d convert and check (%.1f%%), below %.0f%%", f, pass[f], total[f], rate, min)
		}
	}
}
