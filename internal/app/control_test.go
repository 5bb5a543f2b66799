package app

import (
	"os"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
)

// TestControlPath: the flag outranks the config, the config the
// environment, and only the default is not explicit.
func TestControlPath(t *testing.T) {
	t.Setenv("PODVISOR_CONTROL", "/env.sock")
	for _, c := range []struct {
		flag, cfg, want string
		explicit        bool
	}{
		{"/flag.sock", "/cfg.sock", "/flag.sock", true},
		{"", "/cfg.sock", "/cfg.sock", true},
		{"", "", "/env.sock", true},
	} {
		got, explicit := ControlPath(c.flag, &config.Config{Control: c.cfg})
		if got != c.want || explicit != c.explicit {
			t.Errorf("ControlPath(%q, control: %q) = %q, %v; want %q, %v", c.flag, c.cfg, got, explicit, c.want, c.explicit)
		}
	}
	t.Setenv("PODVISOR_CONTROL", "")
	got, explicit := ControlPath("", &config.Config{})
	if want := control.DefaultPath(os.Geteuid(), os.Getenv); got != want || explicit {
		t.Errorf("ControlPath default = %q, %v; want %q, false", got, explicit, want)
	}
}
