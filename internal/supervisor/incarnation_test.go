package supervisor

import (
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// TestIncarnationOf: an event reaches the incarnation it names (the current
// one or an overlap's old one) and nothing else; once the exit was heard
// only the reports kept with it (STATUS=, ERRNO=, seen) still apply.
func TestIncarnationOf(t *testing.T) {
	p := &config.Process{Name: "a", Watchdog: time.Second}
	r := newRecord(p, 0)
	s := &Supervisor{recs: []*record{r}}
	if r.cur == nil || r.cur.gen != 0 || r.cur.child != nil {
		t.Fatalf("a new record's incarnation is %+v, want a zero one", r.cur)
	}
	now := time.Now()
	first := spawn(p, 1, now)
	if first.gen != 1 || !first.watchdogDue.Equal(now.Add(time.Second)) {
		t.Fatalf("spawn: %+v", first)
	}
	first.child = &fakeChild{pid: 10}
	r.cur = first

	if _, inc := s.incarnationOf(readyEv{idx: 0, gen: 1}); inc != first {
		t.Errorf("an event of the current spawn found %p, want %p", inc, first)
	}
	if _, inc := s.incarnationOf(readyEv{idx: 0, gen: 0}); inc != nil {
		t.Errorf("an event of an earlier spawn found %+v", inc)
	}

	// An overlap restart: the old one serves while the next one spawns.
	r.old, r.cur = r.cur, &incarnation{gen: r.cur.gen}
	if _, inc := s.incarnationOf(exitedEv{idx: 0, gen: 1}); inc != first {
		t.Errorf("the old incarnation's exit found %p, want the old one %p", inc, first)
	}
	second := spawn(p, 2, now)
	second.child = &fakeChild{pid: 11}
	r.cur = second
	if _, inc := s.incarnationOf(exitedEv{idx: 0, gen: 1}); inc != first {
		t.Errorf("the old incarnation's exit after the new spawn found %p, want %p", inc, first)
	}
	if _, inc := s.incarnationOf(statusEv{idx: 0, gen: 2}); inc != second {
		t.Errorf("the new incarnation's status found %p, want %p", inc, second)
	}

	// Its exit heard: reports still apply, nothing else does.
	second.child = nil
	for _, ev := range []procEvent{statusEv{idx: 0, gen: 2}, errnoEv{idx: 0, gen: 2}, seenEv{idx: 0, gen: 2}} {
		if _, inc := s.incarnationOf(ev); inc != second {
			t.Errorf("%T after the exit found %p, want %p", ev, inc, second)
		}
	}
	for _, ev := range []procEvent{readyEv{idx: 0, gen: 2}, exitedEv{idx: 0, gen: 2}, liveEv{idx: 0, gen: 2}, watchdogEv{idx: 0, gen: 2}} {
		if _, inc := s.incarnationOf(ev); inc != nil {
			t.Errorf("%T after the exit found %+v, want none", ev, inc)
		}
	}
}
