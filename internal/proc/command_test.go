package proc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testproc"
)

func TestRunCommand(t *testing.T) {
	r := newReaper(t)
	ctx := context.Background()
	tests := []struct {
		name string
		argv []string
		max  int
		code int
		out  string
	}{
		{"output and code", []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, 100, 3, "out\nerr\n"},
		{"signal", []string{"sh", "-c", "kill -TERM $$"}, 100, 143, ""},
		{"stdin is /dev/null", []string{"cat"}, 100, 0, ""},
		{"no output kept", []string{"echo", "hi"}, 0, 0, ""},
	}
	for _, tt := range tests {
		code, out, err := r.RunCommand(ctx, tt.argv, nil, "", tt.max)
		if err != nil || code != tt.code || string(out) != tt.out {
			t.Errorf("%s: code %d out %q err %v; want code %d out %q", tt.name, code, out, err, tt.code, tt.out)
		}
	}
}

// Output beyond maxOutput is drained, not left to block the command.
func TestRunCommandBoundsOutput(t *testing.T) {
	r := newReaper(t)
	code, out, err := r.RunCommand(context.Background(), []string{"head", "-c", "10000000", "/dev/zero"}, nil, "", 1000)
	if err != nil || code != 0 || len(out) != 1000 {
		t.Fatalf("code %d, %d bytes, err %v; want 0, 1000 bytes", code, len(out), err)
	}
}

// C2: a background child holding the output pipe does not delay the result,
// and is killed with the command's group.
func TestRunCommandDoesNotWaitForBackgroundChildren(t *testing.T) {
	r := newReaper(t)
	start := time.Now()
	code, out, err := r.RunCommand(context.Background(), []string{"sh", "-c", "sleep 1000 & echo $!; exit 1"}, nil, "", 100)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v", took)
	}
	if err != nil || code != 1 {
		t.Fatalf("code %d err %v, want 1", code, err)
	}
	bg := mustAtoi(t, string(out))
	testproc.Eventually(t, 5*time.Second, "background sleep killed", func() bool { return gone(bg) })
}

// C1: on ctx expiry the whole group is killed and RunCommand returns promptly.
func TestRunCommandTimeoutKillsGroup(t *testing.T) {
	r := newReaper(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	code, out, err := r.RunCommand(ctx, []string{"sh", "-c", "sleep 1000 & echo $!; sleep 1000"}, nil, dir, 100)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want DeadlineExceeded", err)
	}
	if code != 137 {
		t.Errorf("code %d, want 137", code)
	}
	if took > 2*time.Second*testproc.Slowdown() {
		t.Errorf("returned after %v", took)
	}
	bg := mustAtoi(t, string(out))
	testproc.Eventually(t, 5*time.Second, "background sleep killed", func() bool { return gone(bg) })
}

func TestRunCommandSpawnError(t *testing.T) {
	r := newReaper(t)
	code, _, err := r.RunCommand(context.Background(), []string{"podvisor-no-such-probe"}, nil, "", 100)
	var se *SpawnError
	if !errors.As(err, &se) || code != 127 || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("code %d err %v, want 127 and a *SpawnError", code, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := r.RunCommand(ctx, []string{"true"}, nil, "", 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: err %v", err)
	}
}

// The interface internal/health expects.
var _ interface {
	RunCommand(ctx context.Context, argv []string, env []string, dir string, maxOutput int) (int, []byte, error)
} = (*Reaper)(nil)
