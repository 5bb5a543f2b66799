package observe

import (
	"slices"
	"testing"
)

func TestFanout(t *testing.T) {
	if Fanout() != nil || Fanout(nil, nil) != nil {
		t.Error("Fanout of no hooks is not nil")
	}
	var got []string
	hook := func(name string) func(Event) {
		return func(e Event) { got = append(got, name+":"+e.Process) }
	}
	Fanout(nil, hook("a"))(Event{Process: "x"})
	Fanout(hook("a"), nil, hook("b"))(Event{Process: "y"})
	if want := []string{"a:x", "a:y", "b:y"}; !slices.Equal(got, want) {
		t.Errorf("calls = %v; want %v", got, want)
	}
}
