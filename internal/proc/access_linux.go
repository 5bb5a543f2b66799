package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// searchableBy reports whether the user c can reach dir: search (x)
// permission on dir and on every directory above it, decided from the mode
// bits as the kernel would for that uid, gid and groups (ACLs and
// capabilities aside). The error names the first directory that stops the
// user.
func searchableBy(dir string, c Cred) error {
	if c.UID == 0 {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	p := "/"
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for i := 0; ; i++ {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if !allowsSearch(st, c) {
			return fmt.Errorf("not accessible to uid %d (gid %d): no search permission on %q (mode %s, owner %d:%d)",
				c.UID, c.GID, p, fi.Mode().Perm(), st.Uid, st.Gid)
		}
		if i == len(parts) || parts[i] == "" {
			return nil
		}
		p = filepath.Join(p, parts[i])
	}
}

// allowsSearch applies the owner, group, other rule to the x bit.
func allowsSearch(st *syscall.Stat_t, c Cred) bool {
	mode := st.Mode
	switch {
	case st.Uid == c.UID:
		return mode&0o100 != 0
	case st.Gid == c.GID || slices.Contains(c.Groups, st.Gid):
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}
