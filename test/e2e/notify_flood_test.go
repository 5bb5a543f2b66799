package e2e

import (
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// notifyFloodEnv selects the notify flood helper mode of the test binary:
// it sends notifyFlood malformed datagrams to $NOTIFY_SOCKET, then READY=1
// (read after all of them: one socket, one queue), and exits 0 on SIGTERM.
const notifyFloodEnv = "E2E_NOTIFY_FLOOD"

const notifyFlood = 3000

func init() {
	if os.Getenv(notifyFloodEnv) == "1" {
		notifyFloodHelper()
	}
}

func notifyFloodHelper() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	send := notifySender()
	for i := range notifyFlood + 1 {
		msg := "no key-value line " + strconv.Itoa(i) // malformed: no '='
		if i == notifyFlood {
			msg = "READY=1"
		}
		send(msg, nil)
	}
	<-term
	os.Exit(0)
}

// notifySender returns a function that sends one datagram (with oob, such
// as fds) to $NOTIFY_SOCKET, for the helper children of this package; a
// failure ends the child with exit 1.
func notifySender() func(msg string, oob []byte) {
	sock, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		os.Exit(1)
	}
	to := &unix.SockaddrUnix{Name: os.Getenv("NOTIFY_SOCKET")}
	return func(msg string, oob []byte) {
		if err := unix.Sendmsg(sock, []byte(msg), oob, to, 0); err != nil {
			fmt.Fprintln(os.Stderr, "sendmsg:", err)
			os.Exit(1)
		}
	}
}

// TestNotifyRejectsThrottled: 3,000 refused sd_notify datagrams made 3,000
// warning lines (issue 34 item 15). Now the first is logged in full, the
// rest are summed up with a count, and the lines account for every one.
func TestNotifyRejectsThrottled(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := startPodvisor(t, fmt.Sprintf(`
processes:
  flood:
    command: [%s]
    env: {%s: "1"}
    ready: {notify: systemd}
`, self, notifyFloodEnv))
	// READY=1 came after the flood: once it is read, so is every bad one.
	r.Stdout.WaitFor(t, `msg=ready process=flood`, scaled(30*time.Second))
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(scaled(20 * time.Second)); code != 0 {
		t.Fatalf("exit code %d\n%s", code, r.Stdout)
	}
	var lines []string
	for _, l := range strings.Split(r.Stdout.String(), "\n") {
		if strings.Contains(l, `msg="notify message rejected"`) {
			lines = append(lines, l)
		}
	}
	// One in full, at most one summary per 10 s (a slow machine may take
	// a few intervals to send them all), one at exit.
	if len(lines) > 20 {
		t.Fatalf("%d warning lines for %d bad datagrams, want a handful", len(lines), notifyFlood)
	}
	re := regexp.MustCompile(`suppressed=(\d+)`)
	total := 0
	for _, l := range lines {
		n := 1
		if m := re.FindStringSubmatch(l); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		total += n
	}
	if total != notifyFlood {
		t.Errorf("the warning lines account for %d bad datagrams, want %d:\n%s", total, notifyFlood, strings.Join(lines, "\n"))
	}
}
