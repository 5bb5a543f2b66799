package launch

import (
	"log/slog"
	"os"
	"sync"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
	"golang.org/x/sys/unix"
)

// FDStore keeps the fds processes hand to podvisor over their notify socket
// (FDSTORE=1 with FDNAME=, sd_pid_notify_with_fds(3)) and gives them back to
// each next incarnation after the process's sockets, with their names in
// LISTEN_FDNAMES: state that survives a restart or a crash, such as
// connections a server does not want to drop. At most fd_store_max fds per
// process; one already stored (same file) is not stored twice, so a server
// may hand back what it received. FDSTOREREMOVE=1 drops the fds of a name.
// The store lives for the run; a reload drops the fds of a process that is
// gone or has fd_store_max 0.
type FDStore struct {
	mu     sync.Mutex
	byProc map[string][]storedFD
	log    *slog.Logger
}

type storedFD struct {
	name     string
	f        *os.File
	dev, ino uint64
}

// NewFDStore returns an empty store logging refusals to log.
func NewFDStore(log *slog.Logger) *FDStore {
	return &FDStore{byProc: map[string][]storedFD{}, log: log}
}

// handleOrClose is handle on a store that may be nil (no store: the fds
// are closed).
func (st *FDStore) handleOrClose(p *config.Process, req *health.StoreRequest, warn func(msg string, args ...any)) {
	if st == nil {
		for _, f := range req.Files {
			f.Close()
		}
		return
	}
	st.handle(p, req, warn)
}

// handle applies one store request of p; it owns req.Files. Refusals go to
// warn (the incarnation's throttled warnings), or to the store's log when
// warn is nil.
func (st *FDStore) handle(p *config.Process, req *health.StoreRequest, warn func(msg string, args ...any)) {
	if warn == nil {
		warn = st.log.Warn
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	list := st.byProc[p.Name]
	if req.Remove {
		kept := list[:0]
		for _, s := range list {
			if s.name == req.Name {
				s.f.Close()
				continue
			}
			kept = append(kept, s)
		}
		st.byProc[p.Name] = kept
		return
	}
	for _, f := range req.Files {
		var stt unix.Stat_t
		switch {
		case !config.ValidFDName(req.Name):
			warn("fd store: invalid FDNAME; fd closed", "process", p.Name)
		case unix.Fstat(int(f.Fd()), &stt) != nil:
		case stored(list, stt):
		case len(list) >= p.FDStoreMax:
			warn("fd store full; fd closed", "process", p.Name, "name", req.Name, "fd_store_max", p.FDStoreMax)
		default:
			list = append(list, storedFD{name: req.Name, f: f, dev: stt.Dev, ino: stt.Ino})
			continue
		}
		f.Close()
	}
	st.byProc[p.Name] = list
}

func stored(list []storedFD, stt unix.Stat_t) bool {
	for _, s := range list {
		if s.dev == stt.Dev && s.ino == stt.Ino {
			return true
		}
	}
	return false
}

// files returns p's stored fds and their names, in the order stored.
func (st *FDStore) files(p *config.Process) ([]*os.File, []string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	list := st.byProc[p.Name]
	files, names := make([]*os.File, len(list)), make([]string, len(list))
	for i, s := range list {
		files[i], names[i] = s.f, s.name
	}
	return files, names
}

// Count returns how many fds name has stored.
func (st *FDStore) Count(name string) int {
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byProc[name])
}

// Retain drops the fds of processes cfg no longer has, or whose
// fd_store_max is now 0 (a lower non-zero bound keeps what is stored).
func (st *FDStore) Retain(cfg *config.Config) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for name, list := range st.byProc {
		if p := cfg.Processes[name]; p == nil || p.FDStoreMax == 0 {
			for _, s := range list {
				s.f.Close()
			}
			delete(st.byProc, name)
		}
	}
}

// Close closes every stored fd.
func (st *FDStore) Close() {
	st.Retain(&config.Config{})
}
