package config

import (
	"errors"
	"fmt"
	"math"
	"os/user"
	"strconv"
	"strings"
)

// resolveUser resolves a `user:` setting with the system user database:
//
//	name        the user's uid, primary gid and supplementary groups
//	uid         the same when uid is in the database; otherwise gid = uid
//	            and no supplementary groups (images often run as an
//	            arbitrary uid that has no passwd entry)
//	user:group  either part a name or a number; the group replaces the
//	            primary gid
//
// An unknown name is an error: podvisor never falls back to its own user.
func resolveUser(spec string) (*User, error) {
	userPart, groupPart, hasGroup := strings.Cut(spec, ":")
	if userPart == "" || (hasGroup && groupPart == "") {
		return nil, fmt.Errorf("invalid user %q: want name, uid, or uid:gid", spec)
	}
	u := &User{Spec: spec}
	var (
		entry *user.User
		err   error
	)
	if isDigits(userPart) {
		id, perr := parseID(userPart)
		if perr != nil {
			return nil, fmt.Errorf("invalid uid %s: %w", userPart, perr)
		}
		u.UID, u.GID = id, id
		entry, err = user.LookupId(userPart)
		var unknown user.UnknownUserIdError
		if errors.As(err, &unknown) {
			entry, err = nil, nil
		}
	} else {
		entry, err = user.Lookup(userPart)
		var unknown user.UnknownUserError
		if errors.As(err, &unknown) {
			return nil, fmt.Errorf("unknown user %q", userPart)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("look up user %q: %w", userPart, err)
	}
	if entry != nil {
		if err := fillFromEntry(u, entry); err != nil {
			return nil, err
		}
	}
	if hasGroup {
		gid, err := resolveGroup(groupPart)
		if err != nil {
			return nil, err
		}
		u.GID = gid
	}
	return u, nil
}

func fillFromEntry(u *User, entry *user.User) error {
	uid, err := parseID(entry.Uid)
	if err != nil {
		return fmt.Errorf("user %q has an invalid uid %q in the user database", entry.Username, entry.Uid)
	}
	gid, err := parseID(entry.Gid)
	if err != nil {
		return fmt.Errorf("user %q has an invalid gid %q in the user database", entry.Username, entry.Gid)
	}
	u.UID, u.GID, u.Name, u.Home = uid, gid, entry.Username, entry.HomeDir
	ids, err := entry.GroupIds()
	if err != nil {
		return fmt.Errorf("list groups of user %q: %w", entry.Username, err)
	}
	for _, s := range ids {
		g, err := parseID(s)
		if err != nil {
			return fmt.Errorf("user %q is in a group with an invalid gid %q", entry.Username, s)
		}
		u.Groups = append(u.Groups, g)
	}
	return nil
}

func resolveGroup(s string) (uint32, error) {
	if isDigits(s) {
		id, err := parseID(s)
		if err != nil {
			return 0, fmt.Errorf("invalid gid %s: %w", s, err)
		}
		return id, nil
	}
	g, err := user.LookupGroup(s)
	var unknown user.UnknownGroupError
	if errors.As(err, &unknown) {
		return 0, fmt.Errorf("unknown group %q", s)
	}
	if err != nil {
		return 0, fmt.Errorf("look up group %q: %w", s, err)
	}
	id, err := parseID(g.Gid)
	if err != nil {
		return 0, fmt.Errorf("group %q has an invalid gid %q in the group database", s, g.Gid)
	}
	return id, nil
}

// parseID parses a uid or gid. 2^32-1 is refused: it is (uid_t)-1, which the
// kernel reads as "leave unchanged".
func parseID(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v == math.MaxUint32 {
		return 0, errors.New("out of range")
	}
	return uint32(v), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
