package timeline

import (
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/observe"
)

// TestOnEvent: the events the supervisor reports make the same timeline as
// the recorder's own methods.
func TestOnEvent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	procs := []Proc{{Name: "db", Type: "service"}, {Name: "app", Type: "service", DependsOn: []Dep{{Name: "db"}}}}
	direct, viaEvents := New(procs, DefaultKeep, t0), New(procs, DefaultKeep, t0)

	direct.Spawned("db", 1, at(1))
	direct.Started("db", 1, 42, at(2))
	direct.Ready("db", 1, at(3))
	direct.TeardownBegan("app: exited", 10*time.Second, at(4))
	direct.TeardownCause("app")
	direct.StopRequested("db", 1, "teardown", at(5))
	direct.StopCommand("db", 1, false, nil, at(5))
	direct.StopCommand("db", 1, true, errors.New("exit 1"), at(6))
	direct.Signalled("db", 1, syscall.SIGTERM, at(7))
	direct.Signalled("db", 1, syscall.SIGKILL, at(8))
	direct.Exited("db", 1, 137, false, "OOMKilled", at(9))
	direct.TeardownEnded(at(10))

	for _, e := range []observe.Event{
		{Kind: observe.Spawned, Process: "db", Gen: 1, At: at(1)},
		{Kind: observe.Started, Process: "db", Gen: 1, Pid: 42, At: at(2)},
		{Kind: observe.Ready, Process: "db", Gen: 1, At: at(3)},
		{Kind: observe.TeardownBegan, Why: "app: exited", Budget: 10 * time.Second, At: at(4)},
		{Kind: observe.TeardownCause, Process: "app"},
		{Kind: observe.StopRequested, Process: "db", Gen: 1, Why: "teardown", At: at(5)},
		{Kind: observe.StopCommand, Process: "db", Gen: 1, At: at(5)},
		{Kind: observe.StopCommand, Process: "db", Gen: 1, Ended: true, Err: errors.New("exit 1"), At: at(6)},
		{Kind: observe.Signalled, Process: "db", Gen: 1, Signal: syscall.SIGTERM, At: at(7)},
		{Kind: observe.Signalled, Process: "db", Gen: 1, Signal: syscall.SIGKILL, At: at(8)},
		{Kind: observe.Exited, Process: "db", Gen: 1, Code: 137, Why: "OOMKilled", At: at(9)},
		{Kind: observe.Probe, Process: "db", Probe: "ready", Took: time.Millisecond}, // not the timeline's
		{Kind: observe.TeardownEnded, At: at(10)},
	} {
		viaEvents.OnEvent(e)
	}
	want, _ := json.Marshal(direct.Doc(at(11)))
	got, _ := json.Marshal(viaEvents.Doc(at(11)))
	if string(got) != string(want) {
		t.Errorf("timeline from events:\n%s\nwant:\n%s", got, want)
	}
}
