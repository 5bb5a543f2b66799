package launch

import (
	"slices"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
	"golang.org/x/sys/unix"
)

// The config's names must reach the kernel as the right numbers.
func TestPrivilegeNames(t *testing.T) {
	for _, n := range config.LimitNames {
		if _, ok := proc.RlimitResource(n); !ok {
			t.Errorf("limit %q has no resource", n)
		}
	}
	for name, num := range map[string]int{"CAP_CHOWN": unix.CAP_CHOWN, "CAP_NET_BIND_SERVICE": unix.CAP_NET_BIND_SERVICE, "CAP_SYS_ADMIN": unix.CAP_SYS_ADMIN,
		"CAP_SYS_RESOURCE": unix.CAP_SYS_RESOURCE, "CAP_AUDIT_READ": unix.CAP_AUDIT_READ, "CAP_PERFMON": unix.CAP_PERFMON, "CAP_BPF": unix.CAP_BPF,
		"CAP_CHECKPOINT_RESTORE": unix.CAP_CHECKPOINT_RESTORE} {
		if got := slices.Index(config.CapabilityNames, name); got != num {
			t.Errorf("%s is number %d in the config's table, %d in the kernel's", name, got, num)
		}
	}
	mask := uint32(0o027)
	var spec proc.Spec
	withPrivileges(&spec, &config.Process{Limits: []config.Rlimit{{Name: "nofile", Soft: 1, Hard: 2}}, Umask: &mask, NoNewPrivs: true, AmbientCaps: []string{"CAP_NET_RAW"}})
	if len(spec.Rlimits) != 1 || spec.Rlimits[0].Resource != unix.RLIMIT_NOFILE || spec.Rlimits[0].Soft != 1 || spec.Rlimits[0].Hard != 2 ||
		*spec.Umask != mask || !spec.NoNewPrivs || !slices.Equal(spec.AmbientCaps, []uintptr{unix.CAP_NET_RAW}) {
		t.Errorf("spec %+v", spec)
	}
}
