package main

import (
	"fmt"
	"os"
)

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
