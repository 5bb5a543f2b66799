package control

import (
	"encoding/json"
	"testing"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// TestResponseOf: the wire form of a supervisor's answer is the JSON the
// control protocol has always sent, empty fields left out.
func TestResponseOf(t *testing.T) {
	cases := []struct {
		in   supervisor.Response
		want string
	}{
		{supervisor.Response{}, `{"ok":false}`},
		{supervisor.Response{OK: true, Results: []supervisor.Result{{Name: "a", OK: true, Message: "restarted (pid 1, then 2)"}, {Name: "b"}}},
			`{"ok":true,"results":[{"name":"a","ok":true,"message":"restarted (pid 1, then 2)"},{"name":"b","ok":false,"message":""}]}`},
		{supervisor.Response{Error: "the config has errors; nothing was changed", Errors: []string{"x.yaml:1:1 bad"}, Plan: []string{"restart a"}, Generation: 3},
			`{"ok":false,"error":"the config has errors; nothing was changed","errors":["x.yaml:1:1 bad"],"plan":["restart a"],"generation":3}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(responseOf(c.in))
		if err != nil || string(b) != c.want {
			t.Errorf("responseOf(%+v) = %s, %v; want %s", c.in, b, err, c.want)
		}
	}
}
