package control

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// ProjectPath is the control socket of a run in the background (`podvisor
// run -d`) of the config at absConfig, when nothing names one: a name
// derived from the config's absolute path in DefaultPath's directory, so
// that two projects never share a socket and every terminal in a project
// finds its own (docs/operate.md#in-the-background).
func ProjectPath(euid int, getenv func(string) string, absConfig string) string {
	sum := sha256.Sum256([]byte(absConfig))
	return filepath.Join(filepath.Dir(DefaultPath(euid, getenv)), "project-"+hex.EncodeToString(sum[:8])+".sock")
}

// LogPath is where a run in the background writes its output: beside its
// socket, with .log for .sock.
func LogPath(socket string) string {
	return strings.TrimSuffix(socket, ".sock") + ".log"
}

// Find returns the socket a client talks to when neither --control nor
// $PODVISOR_CONTROL says: the project socket of config (the path of
// procs.yaml as run's -c takes it, relative to the working directory) when
// a socket is there, else DefaultPath.
func Find(euid int, getenv func(string) string, config string) string {
	if abs, err := filepath.Abs(config); err == nil {
		if _, err := os.Stat(abs); err == nil {
			p := ProjectPath(euid, getenv, abs)
			if fi, err := os.Lstat(p); err == nil && fi.Mode().Type() == os.ModeSocket {
				return p
			}
		}
	}
	return DefaultPath(euid, getenv)
}

// PrepareDir makes the directory of a socket at path as Listen does (0700,
// private in a shared parent), for a file put beside it.
func PrepareDir(path string) error { return prepareDir(filepath.Dir(path)) }
