package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// H13: a default never makes an explicit value invalid.
func TestLongBackoffRaisesDefaultMax(t *testing.T) {
	cfg, err := Parse("p.yaml", []byte("processes:\n  a: {command: [a], restart: {backoff: 1m}}\n"), nil)
	if err != nil {
		t.Fatalf("backoff 1m refused: %v", err)
	}
	if r := cfg.Processes["a"].Restart; r.Backoff != time.Minute || r.MaxBackoff != time.Minute {
		t.Errorf("restart = %+v, want backoff and max_backoff 1m", r)
	}
	// An explicit max below the backoff is still an error.
	_, err = Parse("p.yaml", []byte("processes:\n  a: {command: [a], restart: {backoff: 1m, max_backoff: 30s}}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "max_backoff 30s is less than backoff 1m") {
		t.Errorf("err = %v", err)
	}
}

// The process count is capped with an error that names the limit.
func TestProcessCountCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("processes:\n")
	for i := range MaxProcesses + 1 {
		fmt.Fprintf(&b, "  p%d: {command: [x]}\n", i)
	}
	_, err := Parse("p.yaml", []byte(b.String()), nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d processes defined; the limit is %d", MaxProcesses+1, MaxProcesses)) {
		t.Errorf("err = %v", err)
	}
}
