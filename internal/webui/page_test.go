package webui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/server"
)

// The page is served with the state of the moment, escaped.
func TestPageServedWithItsFirstState(t *testing.T) {
	started := time.Now().Add(-65 * time.Second)
	st := server.Status{Phase: "running", Ready: true, Generation: 2, Processes: []server.ProcessStatus{
		{Name: "web", Type: "service", State: "pending", WaitingFor: []string{"db: ready"}},
		{Name: "db<b>", Type: "service", State: "running", Pid: 42, Ready: true, StartedAt: &started, Reason: "x & y"},
	}}
	h := New(Options{Status: func() server.Status { return st }})
	body := do(h, "GET", "/", "", "").Body.String()
	body = regexp.MustCompile(`<td>1m\d+s</td>`).ReplaceAllString(body, "<td>UPTIME</td>") // 65 s ago, at least
	for _, want := range []string{
		`<span id="phase" class="badge">running</span>`,
		`config generation 2`,
		`<tr data-name="db&lt;b&gt;"><td>db&lt;b&gt;</td><td>service</td><td class="s-running">running</td><td>yes</td><td>42</td><td>UPTIME</td><td>0</td><td>-</td><td>-</td><td>-</td><td class="detail">x &amp; y</td></tr>`,
		`<td class="detail">waiting for db: ready</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	if strings.Index(body, `data-name="db`) > strings.Index(body, `data-name="web"`) {
		t.Errorf("rows not sorted by name")
	}
}
