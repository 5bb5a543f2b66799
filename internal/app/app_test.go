package app

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
)

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("procs.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRunJobExitCode: a run of one job ends with the job's code, and its
// output and podvisor's last line reach stdout.
func TestRunJobExitCode(t *testing.T) {
	cfg := parse(t, "processes:\n  j:\n    type: job\n    command: [sh, -c, 'echo hello; exit 3']\n")
	var out, errOut bytes.Buffer
	code, err := Run(Begin(), Options{Config: cfg, Listen: "off", Control: control.Off, Stdout: &out, Stderr: &errOut})
	if err != nil || code != 3 {
		t.Fatalf("Run = %d, %v; want 3, nil\nstdout:\n%s\nstderr:\n%s", code, err, &out, &errOut)
	}
	for _, want := range []string{"hello", "exiting"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, &out)
		}
	}
}

// TestRunPortInUseStartsNothing: a busy HTTP port fails the run before any
// process is started, and the log says so.
func TestRunPortInUseStartsNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := parse(t, "processes:\n  j:\n    type: job\n    command: [sh, -c, 'echo started']\n")
	var out, errOut bytes.Buffer
	_, err = Run(Begin(), Options{Config: cfg, Listen: ln.Addr().String(), Control: control.Off, Stdout: &out, Stderr: &errOut})
	if !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Run error %v, want ErrNotStarted", err)
	}
	if !strings.Contains(out.String(), "cannot serve HTTP; nothing was started") || strings.Contains(out.String(), "started\n") {
		t.Errorf("stdout:\n%s", &out)
	}
}

// TestRunTeardownWarningSaysWarningOnce: the teardown chain's warning is a
// WARN line whose message does not start with "warning: " again (issue 35).
func TestRunTeardownWarningSaysWarningOnce(t *testing.T) {
	cfg := parse(t, "shutdown_timeout: 1s\nprocesses:\n  j:\n    type: job\n    command: [\"true\"]\n    stop: {timeout: 5s}\n")
	var out, errOut bytes.Buffer
	if _, err := Run(Begin(), Options{Config: cfg, Listen: "off", Control: control.Off, Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatalf("Run: %v\nstdout:\n%s\nstderr:\n%s", err, &out, &errOut)
	}
	const want = `level=WARN msg="stop timeouts along the longest teardown chain j add up to 5s, more than shutdown_timeout 1s"`
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), `msg="warning: `) {
		t.Errorf("stdout lacks %s (or says warning twice):\n%s", want, &out)
	}
}
