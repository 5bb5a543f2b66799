package testharness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Event files: children append lines "NAME EVENT NANOS [rest]", NANOS from
// `date +%s%N` (wall clock, comparable with time.Now().UnixNano()). One
// short append is a single atomic write, so concurrent writers never
// interleave.

// Event is one line of an event file.
type Event struct {
	Name, Event string
	At          time.Time
	Rest        string
}

// Pid is the first word of Rest as a number (Stamp writes the shell's pid
// there), or 0.
func (e Event) Pid() int {
	f := strings.Fields(e.Rest)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// Stamp is a shell snippet appending "NAME EVENT NANOS PID" to the file
// named by $envVar, PID being the shell's. It is written for a podvisor
// config, where $$ stands for $: the shell sees $$.
func Stamp(envVar, name, event string) string {
	return fmt.Sprintf(`echo "%s %s $(date +%%s%%N) $$$$" >> "$%s"`, name, event, envVar)
}

// ParseEvents reads the events of data. A line of fewer than three fields is
// one still being written and is passed over; a line whose NANOS is not a
// number is passed over too, and the first such is returned as the error
// next to every event that could be read.
func ParseEvents(data []byte) ([]Event, error) {
	var evs []Event
	var bad error
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) < 3 {
			continue
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			if bad == nil {
				bad = fmt.Errorf("event line %q: %w", sc.Text(), err)
			}
			continue
		}
		e := Event{Name: f[0], Event: f[1], At: time.Unix(0, ns)}
		if len(f) == 4 {
			e.Rest = f[3]
		}
		evs = append(evs, e)
	}
	return evs, bad
}

// ReadEvents parses the event file at path; a missing file has no events.
func ReadEvents(path string) ([]Event, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseEvents(data)
}

// FindEvent returns the first event with name and event.
func FindEvent(evs []Event, name, event string) (Event, bool) {
	for _, e := range evs {
		if e.Name == name && e.Event == event {
			return e, true
		}
	}
	return Event{}, false
}

// FilterEvents returns every event with name and event, in file order.
func FilterEvents(evs []Event, name, event string) []Event {
	var out []Event
	for _, e := range evs {
		if e.Name == name && e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

// FirstTimes maps "NAME EVENT" to the NANOS of its first occurrence.
func FirstTimes(evs []Event) map[string]int64 {
	m := map[string]int64{}
	for _, e := range evs {
		k := e.Name + " " + e.Event
		if _, seen := m[k]; !seen {
			m[k] = e.At.UnixNano()
		}
	}
	return m
}
