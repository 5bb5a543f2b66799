package supervisor

import (
	"sync"
	"testing"
)

// watchTransitions makes every state change of sup that is not in the
// transition table (state.go) fail t. The loop tests, the reload and
// command tests and the invariant test all run with it.
func watchTransitions(t testing.TB, sup *Supervisor) {
	if sup == nil {
		return
	}
	var once sync.Once
	sup.onTransition = func(name string, from, to State) {
		if !allowed(from, to) {
			once.Do(func() {
				t.Errorf("process %s moved %s -> %s, which the transition table in state.go does not have", name, from, to)
			})
		}
	}
}

// Every state has a row in the table, and the table only names states.
func TestTransitionTableCoversEveryState(t *testing.T) {
	for s := Pending; s <= Failed; s++ {
		if len(transitions[s]) == 0 {
			t.Errorf("state %s has no transitions out", s)
		}
		for _, to := range transitions[s] {
			if to > Failed || to == s {
				t.Errorf("%s -> %v: not a move", s, to)
			}
		}
	}
}
