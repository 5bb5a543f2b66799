package launch

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
	"golang.org/x/sys/unix"
)

// Sockets holds the listening sockets of every process (its `sockets:`) for
// the whole run. They are bound before the first start and passed to every
// incarnation, so a restart, a crash or a reload that changes the command
// refuses no connection: while no incarnation accepts, the kernel queues
// connections in the socket's backlog. A socket is identified by what is
// bound (config.Socket.Key), so a reload that keeps it keeps the same fd.
type Sockets struct {
	mu    sync.Mutex
	bound map[string]*boundSocket
}

type boundSocket struct {
	s config.Socket
	f *os.File
}

// NewSockets returns an empty set.
func NewSockets() *Sockets { return &Sockets{bound: map[string]*boundSocket{}} }

// BindAll binds every socket of cfg not bound yet. It binds all or none:
// on any failure it closes what it bound in this call and returns every
// failure, each at its place in the file.
func (ss *Sockets) BindAll(cfg *config.Config) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var (
		errs  []error
		fresh []string
	)
	for _, name := range cfg.Names {
		for i, s := range cfg.Processes[name].Sockets {
			k := s.Key()
			if ss.bound[k] != nil {
				continue
			}
			f, err := bind(s)
			if err != nil {
				errs = append(errs, &config.Error{Pos: s.Pos, Path: "processes." + name + ".sockets[" + strconv.Itoa(i) + "]", Msg: err.Error()})
				continue
			}
			ss.bound[k] = &boundSocket{s, f}
			fresh = append(fresh, k)
		}
	}
	if len(errs) > 0 {
		for _, k := range fresh {
			ss.bound[k].close()
			delete(ss.bound, k)
		}
		return errors.Join(errs...)
	}
	return nil
}

// Files returns p's sockets in order, binding any not bound yet (a process
// a reload added or changed).
func (ss *Sockets) Files(p *config.Process) ([]*os.File, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]*os.File, 0, len(p.Sockets))
	for _, s := range p.Sockets {
		b := ss.bound[s.Key()]
		if b == nil {
			f, err := bind(s)
			if err != nil {
				return nil, fmt.Errorf("socket %s: %w", s.Listen, err)
			}
			b = &boundSocket{s, f}
			ss.bound[s.Key()] = b
		}
		// The previous incarnation may have made the shared file
		// description non-blocking (Go's runtime does); a server doing
		// blocking accept(2) needs it blocking again. No incarnation of p
		// is alive at this point (a start follows the previous exit),
		// except with overlap, where the old one may be a Go server
		// whose accept must not turn blocking under it.
		if !p.Restart.Overlap {
			if err := unix.SetNonblock(int(b.f.Fd()), false); err != nil {
				return nil, fmt.Errorf("socket %s: %w", s.Listen, err)
			}
		}
		out = append(out, b.f)
	}
	return out, nil
}

// Retain closes the sockets no process of cfg has any more (after a
// reload). A running incarnation keeps its own copy of the fd, so a removed
// socket stays open until that incarnation exits.
func (ss *Sockets) Retain(cfg *config.Config) {
	keep := map[string]bool{}
	for _, p := range cfg.Processes {
		for _, s := range p.Sockets {
			keep[s.Key()] = true
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, b := range ss.bound {
		if !keep[k] {
			b.close()
			delete(ss.bound, k)
		}
	}
}

// Close closes every socket and removes the unix socket files.
func (ss *Sockets) Close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, b := range ss.bound {
		b.close()
		delete(ss.bound, k)
	}
}

func (b *boundSocket) close() {
	b.f.Close()
	if b.s.Network == "unix" {
		os.Remove(b.s.Address)
	}
}

func bind(s config.Socket) (*os.File, error) {
	o := proc.ListenOptions{Backlog: s.Backlog, ReusePort: s.ReusePort, Mode: s.Mode, UID: -1, GID: -1}
	if s.Owner != nil {
		o.UID, o.GID = int(s.Owner.UID), int(s.Owner.GID)
	}
	return proc.Bind(s.Network, s.Address, o)
}

// listenFiles returns what an incarnation of p gets from fd 3 up: its
// sockets, then the fds it stored (fdstore.go), and their names.
func listenFiles(ss *Sockets, st *FDStore, p *config.Process) ([]*os.File, []string, error) {
	var (
		files []*os.File
		names []string
	)
	if len(p.Sockets) > 0 && ss != nil {
		f, err := ss.Files(p)
		if err != nil {
			return nil, nil, err
		}
		files = f
		for _, s := range p.Sockets {
			names = append(names, s.Name)
		}
	}
	if p.FDStoreMax > 0 && st != nil {
		f, n := st.files(p)
		files, names = append(files, f...), append(names, n...)
	}
	return files, names, nil
}

// listenEnv is the systemd protocol's environment for fds named names; the
// spawner adds LISTEN_PID in the child.
func listenEnv(names []string) []string {
	return []string{"LISTEN_FDS=" + strconv.Itoa(len(names)), "LISTEN_FDNAMES=" + strings.Join(names, ":")}
}
