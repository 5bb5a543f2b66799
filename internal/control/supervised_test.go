package control

import (
	"encoding/json"
	"testing"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// TestResponseOf: the wire form of a supervisor's answer is the JSON the
// control protocol has always sent, empty fields left out.
func TestResponseOf(t *testing.T) {
	results := []supervisor.Result{{Name: "a", OK: true, Message: "restarted (pid 1, then 2)"}, {Name: "b"}}
	refused := supervisor.Response{Error: "the config has errors", Errors: []string{"x.yaml:1:1 bad"}, Plan: []string{"restart a"}, Generation: 3}
	want := map[string]supervisor.Response{
		`{"ok":false}`: {},
		`{"ok":true,"results":[{"name":"a","ok":true,"message":"restarted (pid 1, then 2)"},{"name":"b","ok":false,"message":""}]}`: {OK: true, Results: results},
		`{"ok":false,"error":"the config has errors","errors":["x.yaml:1:1 bad"],"plan":["restart a"],"generation":3}`:              refused,
	}
	for wire, in := range want {
		if b, err := json.Marshal(responseOf(in)); err != nil || string(b) != wire {
			t.Errorf("responseOf(%+v) = %s, %v; want %s", in, b, err, wire)
		}
	}
}
