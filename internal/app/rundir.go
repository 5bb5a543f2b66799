package app

import (
	"fmt"
	"os"
	"sync"

	"github.com/podvisor/podvisor/internal/config"
)

// runtimeDir is podvisor's runtime directory, made on first use (a notify
// socket, or the start when the config has a process that needs one) and
// removed at exit if it was made. A run without notify sockets writes
// nothing to the filesystem and spends no mkdir at start nor rmdir at exit
// (0.1-0.3 ms of a job's exit, issue 30).
type runtimeDir struct {
	once sync.Once
	mu   sync.Mutex
	dir  string
	err  error
}

// get makes the directory the first time and returns it.
func (r *runtimeDir) get() (string, error) {
	r.once.Do(func() {
		dir, err := makeRuntimeDir()
		r.mu.Lock()
		r.dir, r.err = dir, err
		r.mu.Unlock()
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dir, r.err
}

// remove removes the directory if it was made; later calls to get return
// the removed path's error.
func (r *runtimeDir) remove() {
	r.once.Do(func() { r.err = fmt.Errorf("runtime directory: podvisor is exiting") })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir != "" {
		os.RemoveAll(r.dir)
		r.dir, r.err = "", fmt.Errorf("runtime directory: podvisor is exiting")
	}
}

// makeRuntimeDir creates podvisor's private directory for notify sockets
// under $TMPDIR (default /tmp). It is the one thing `podvisor run` writes to
// the filesystem, so on a read-only root filesystem with nothing writable the
// error says what is needed and which setting moves it.
func makeRuntimeDir() (string, error) {
	dir, err := os.MkdirTemp("", "podvisor-")
	if err == nil {
		// 0711: a child running as another user must reach its socket (by
		// its unguessable name) but not list or create anything here;
		// senders are checked by pid.
		if err = os.Chmod(dir, 0o711); err != nil {
			os.RemoveAll(dir)
		}
	}
	if err != nil {
		return "", fmt.Errorf("cannot create the runtime directory for notify sockets: %w; "+
			"podvisor needs one writable directory: set TMPDIR to one (default /tmp; "+
			"on a read-only root filesystem mount a tmpfs or an emptyDir volume there)", err)
	}
	return dir, nil
}

// needsRuntimeDir reports whether a process of cfg gets a notify socket:
// systemd readiness, or an fd store (see ProcLauncher.notifySocket).
func needsRuntimeDir(cfg *config.Config) bool {
	for _, p := range cfg.Processes {
		if p.Ready != nil && p.Ready.Kind == config.ProbeNotifySystemd || p.FDStoreMax > 0 {
			return true
		}
	}
	return false
}
