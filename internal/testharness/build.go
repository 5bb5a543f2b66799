package testharness

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildArgs and buildEnv are the one way the suites build podvisor: the flags
// of Dockerfile.base's build (less -ldflags, which only the link step sees),
// so that the binary under test is the static one users run and
// test/examples' Dockerfile check reuses the compiled packages.
var (
	buildArgs = []string{"build", "-trimpath", "-o"}
	buildEnv  = []string{"CGO_ENABLED=0"}
)

// cacheMaxAge is how long an unused cached binary stays in the cache.
const cacheMaxAge = 24 * time.Hour

var binaryOnce = sync.OnceValues(func() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return buildCached(root, filepath.Join(os.TempDir(), fmt.Sprintf("podvisor-testharness-%d", os.Getuid())))
})

// Binary returns the path of a podvisor binary built from the source of the
// module around the working directory.
//
// The binary is built once per source tree, not once per package: it lives
// in os.TempDir()/podvisor-testharness-UID/KEY/podvisor, KEY being a hash of
// the source files, the Go version and the build flags, and a file lock lets
// the test binaries `go test ./test/...` runs side by side build it once
// between them. A later invocation on unchanged source reuses it. The
// directories are 0755, so a test may run the binary as another user.
// Binaries unused for a day are removed.
func Binary() (string, error) { return binaryOnce() }

// ModuleRoot returns the directory of the go.mod above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testharness: no go.mod above the working directory")
		}
		dir = parent
	}
}

// buildCached builds root's ./cmd/podvisor into cache unless a binary of the
// same source is there already, and returns its path.
func buildCached(root, cache string) (string, error) {
	key, err := SourceKey(root)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, key)
	if err := mkdirOpen(cache); err != nil {
		return "", err
	}
	if err := mkdirOpen(dir); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, "lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	bin := filepath.Join(dir, "podvisor")
	now := time.Now()
	_ = os.Chtimes(dir, now, now) // in use: keeps pruneCache away
	pruneCache(cache, key, now)
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	gobin, err := goCommand()
	if err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", bin, os.Getpid())
	cmd := exec.Command(gobin, append(append([]string(nil), buildArgs...), tmp, "./cmd/podvisor")...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), buildEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("go build podvisor: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// mkdirOpen makes dir (if needed) traversable by every user.
func mkdirOpen(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755) // MkdirAll's mode is masked by the umask
}

// lockFile takes an exclusive flock on path; the returned func releases it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file drops the lock
}

// pruneCache removes the cached binaries other than keep that nobody has
// taken for cacheMaxAge (Binary touches its directory each time), so that a
// directory in use by a slow run elsewhere is left alone.
func pruneCache(cache, keep string, now time.Time) {
	ents, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name() == keep || !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < cacheMaxAge {
			continue
		}
		_ = os.RemoveAll(filepath.Join(cache, e.Name()))
	}
}

// goCommand finds the go command: PATH first, then $GOROOT/bin (go test
// sets GOROOT for the test binary).
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); isExecutable(p) {
			return p, nil
		}
	}
	return "", errors.New("testharness: no go command in PATH or $GOROOT/bin to build podvisor with")
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// SourceKey hashes what the podvisor binary is built from: go.mod, go.sum
// and every file (test files aside) of each package of the module that
// ./cmd/podvisor imports, directly or not, which takes in the files a
// //go:embed names; plus the Go version and the build flags. Packages of
// other modules are pinned by go.sum.
func SourceKey(root string) (string, error) {
	gobin, err := goCommand()
	if err != nil {
		return "", err
	}
	list := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./cmd/podvisor")
	list.Dir = root
	list.Env = append(os.Environ(), buildEnv...)
	out, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("go list ./cmd/podvisor: %v\n%s", err, stderrOf(err))
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", runtime.Version(), strings.Join(buildArgs, " "), strings.Join(buildEnv, " "))
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	for _, dir := range strings.Fields(string(out)) {
		if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
			continue // another module's package
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), "_test.go") {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(files)
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s\x00", rel)
		if err := hashFile(h, f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func hashFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	fmt.Fprintf(w, "\x00%d\x00", n)
	return err
}
