package health

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

func TestNewChecker(t *testing.T) {
	tests := []struct {
		probe config.Probe
		want  string // the checker's type, or "error"
	}{
		{config.Probe{Kind: config.ProbeHTTP, Target: "http://127.0.0.1:8080/healthz"}, "*health.httpChecker"},
		{config.Probe{Kind: config.ProbeTCP, Target: "127.0.0.1:5432"}, "*health.tcpChecker"},
		{config.Probe{Kind: config.ProbeExec, Command: []string{"true"}}, "*health.execChecker"},
		{config.Probe{Kind: config.ProbeFile, Target: "/run/ready"}, "*health.fileChecker"},
		{config.Probe{Kind: config.ProbeHTTP, Target: "127.0.0.1:8080"}, "error"},
		{config.Probe{Kind: config.ProbeExec}, "error"},
		{config.Probe{Kind: config.ProbeLog, Regexp: regexp.MustCompile("x")}, "error"},
		{config.Probe{Kind: config.ProbeNotifySystemd}, "error"},
		{config.Probe{Kind: config.ProbeNotifyFD, FD: 3}, "error"},
	}
	for _, tt := range tests {
		c, err := NewChecker(&tt.probe, reaper, nil, "", time.Now())
		got := fmt.Sprintf("%T", c)
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("NewChecker(%s %q) = %s (%v), want %s", tt.probe.Kind, tt.probe.Target, got, err, tt.want)
		}
	}
	if _, err := NewChecker(nil, nil, nil, "", time.Time{}); err == nil {
		t.Error("NewChecker(nil) succeeded")
	}
}

// The file checker NewChecker builds ignores files older than since.
func TestNewCheckerFileSince(t *testing.T) {
	p := config.Probe{Kind: config.ProbeFile, Target: t.TempDir()} // exists, created before since
	c, err := NewChecker(&p, nil, nil, "", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := attempt(c, time.Second); r.OK {
		t.Errorf("a file older than since counted: %+v", r)
	}
}

// An attempt that begins after its deadline (a starved caller) says so
// instead of reporting a negative budget.
func TestCheckAfterDeadline(t *testing.T) {
	c, err := NewTCPChecker("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	r := c.Check(ctx)
	if r.OK || r.Detail != "timeout: the deadline had passed before the attempt started" {
		t.Errorf("got %+v", r)
	}
}
