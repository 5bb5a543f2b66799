package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

func TestVolumeFence(t *testing.T) {
	user := func(uid, gid uint32, groups ...uint32) *config.User {
		return &config.User{UID: uid, GID: gid, Groups: groups}
	}
	cfgOf := func(users map[string]*config.User) *config.Config {
		c := &config.Config{Processes: map[string]*config.Process{}}
		for n, u := range users {
			c.Processes[n] = &config.Process{Name: n, User: u}
		}
		return c
	}
	cases := []struct {
		name   string
		linked bool
		euid   int
		users  map[string]*config.User
		want   Fence
		err    string
	}{
		{name: "bound: only podvisor", euid: 0, users: map[string]*config.User{"a": user(1000, 1000)}, want: Fence{0, 0, 0o700}},
		{name: "linked as a user", linked: true, euid: 1000, users: map[string]*config.User{"a": nil}, want: Fence{1000, 0, 0o700}},
		{name: "linked, root processes", linked: true, users: map[string]*config.User{"a": nil, "b": user(0, 0)}, want: Fence{0, 0, 0o700}},
		{name: "linked, one uid", linked: true, users: map[string]*config.User{"a": user(1000, 1000), "a.post-start": user(1000, 1000), "r": nil},
			want: Fence{1000, 1000, 0o700}},
		{name: "linked, two uids, one gid", linked: true, users: map[string]*config.User{"a": user(1000, 500), "b": user(2000, 500)},
			want: Fence{0, 500, 0o750}},
		{name: "linked, a supplementary group in common", linked: true,
			users: map[string]*config.User{"a": user(1000, 1000, 7, 9), "b": user(2000, 9)}, want: Fence{0, 9, 0o750}},
		{name: "linked, no group in common", linked: true, users: map[string]*config.User{"a": user(1000, 1000), "b": user(2000, 2000)},
			err: "a (uid 1000, gid 1000), b (uid 2000, gid 2000) run as users who share no group"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := VolumeFence(cfgOf(c.users), c.linked, c.euid, 0)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "runAsGroup") {
					t.Fatalf("err = %v, want one saying %q and the fix", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("VolumeFence = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestMakeVolumeDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "volumes")
	f := Fence{UID: os.Geteuid(), GID: os.Getegid(), Mode: 0o750}
	if err := MakeVolumeDir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v %v, want 0700 before the fence", fi.Mode(), err)
	}
	if err := SetFence(dir, f); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("mode %v %v, want 0750", fi.Mode(), err)
	}
	if err := MakeVolumeDir(dir); err == nil {
		t.Error("an existing directory was taken as the run's volume directory")
	}
}
