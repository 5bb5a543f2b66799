package health

import (
	"bytes"
	"os"
	"strconv"
)

// StoreRequest is an fd store message (sd_pid_notify_with_fds(3)):
// FDSTORE=1 hands Files to the supervisor, to be given back to the next
// incarnation under Name; FDSTOREREMOVE=1 drops every fd stored under Name.
type StoreRequest struct {
	Remove bool
	Name   string     // FDNAME=, "stored" when absent (systemd's default)
	Files  []*os.File // FDSTORE=1: the passed fds, now the receiver's to close
}

// DefaultFDName is the name of a stored fd sent without FDNAME=.
const DefaultFDName = "stored"

// parseStore reads the fd store assignments of a well-formed message. It
// returns nil when the message has neither FDSTORE=1 nor FDSTOREREMOVE=1,
// or FDSTORE=1 without fds.
func parseStore(b []byte, fds []int) *StoreRequest {
	var store, remove bool
	name := DefaultFDName
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		k, v, _ := bytes.Cut(line, []byte("="))
		switch string(k) {
		case "FDSTORE":
			store = string(v) == "1"
		case "FDSTOREREMOVE":
			remove = string(v) == "1"
		case "FDNAME":
			name = string(v)
		}
	}
	switch {
	case remove:
		return &StoreRequest{Remove: true, Name: name}
	case store && len(fds) > 0:
		files := make([]*os.File, len(fds))
		for i, fd := range fds {
			files[i] = os.NewFile(uintptr(fd), "fdstore:"+name+":"+strconv.Itoa(i))
		}
		return &StoreRequest{Name: name, Files: files}
	}
	return nil
}
