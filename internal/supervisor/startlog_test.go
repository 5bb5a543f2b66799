package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// TestStartIsLoggedAtInfo: podvisor logs each spawn ("started", the process
// and its pid) at info level, in text and in JSON, so the start order of a
// process without a readiness check shows in the log.
func TestStartIsLoggedAtInfo(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var buf testharness.Buffer
				opts := &slog.HandlerOptions{Level: slog.LevelInfo}
				var handler slog.Handler = slog.NewTextHandler(&buf, opts)
				if format == "json" {
					handler = slog.NewJSONHandler(&buf, opts)
				}
				f := newFake(nil)
				sup, err := New(Options{Config: parse(t, chain3), Launcher: f, Checkers: f.checkers, Log: slog.New(handler)})
				watchTransitions(t, sup)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				sigs, out := make(chan os.Signal, 1), make(chan Outcome, 1)
				go func() { out <- sup.Run(ctx, sigs) }()
				synctest.Wait()
				pids := map[string]int{}
				for _, p := range sup.Snapshot().Processes {
					pids[p.Name] = p.Pid
				}
				sigs <- syscall.SIGTERM
				select {
				case <-out:
				case <-time.After(time.Minute):
					t.Fatal("no outcome")
				}
				var started []string
				for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					switch format {
					case "text":
						if strings.Contains(line, "msg=started ") {
							if !strings.Contains(line, "level=INFO") {
								t.Errorf("not at info level: %s", line)
							}
							started = append(started, line[strings.Index(line, "msg=started "):])
						}
					case "json":
						var rec struct {
							Level, Msg, Process string
							Pid                 int
						}
						if err := json.Unmarshal([]byte(line), &rec); err != nil {
							t.Fatalf("%v: %s", err, line)
						}
						if rec.Msg == "started" {
							if rec.Level != "INFO" {
								t.Errorf("not at info level: %s", line)
							}
							started = append(started, fmt.Sprintf("msg=started process=%s pid=%d", rec.Process, rec.Pid))
						}
					}
				}
				var want []string
				for _, n := range []string{"db", "other", "app", "web"} {
					want = append(want, fmt.Sprintf("msg=started process=%s pid=%d", n, pids[n]))
				}
				slices.Sort(started)
				slices.Sort(want)
				if !slices.Equal(started, want) {
					t.Errorf("start lines:\n%s\nwant (in any order):\n%s\nlog:\n%s", strings.Join(started, "\n"), strings.Join(want, "\n"), buf.String())
				}
			})
		})
	}
}
