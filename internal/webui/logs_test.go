package webui

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/logs"
)

// tailsBackend keeps a tail per process, as the supervisor does.
type tailsBackend struct {
	fakeBackend
	tails map[string]*logs.Tail
}

func (b *tailsBackend) Tail(name string) (*logs.Tail, error) {
	if t, ok := b.tails[name]; ok {
		return t, nil
	}
	return nil, os.ErrNotExist
}
func (b *tailsBackend) LogNames() []string            { return []string{"api", "db"} }
func (b *tailsBackend) LogFile(string) (string, bool) { return "", false }
func (b *tailsBackend) ReopenLogs() int               { return 0 }

// Without a name, the output is every process's, interleaved by time and
// prefixed with the name (what `podvisor ui`'s L shows over --http).
func TestLogsOfEveryProcessInterleaveByTime(t *testing.T) {
	b := &tailsBackend{tails: map[string]*logs.Tail{"api": logs.NewTail(100, 1<<20), "db": logs.NewTail(100, 1<<20)}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var want strings.Builder
	for k := 1; k <= 6; k++ {
		name := []string{"api", "db"}[k%2]
		b.tails[name].Add("stdout", []byte(fmt.Sprintf("line %d", k)), t0.Add(time.Duration(k)*time.Second))
		fmt.Fprintf(&want, "%-3s | line %d\n", name, k)
	}
	h := New(Options{Backend: b, Logs: true})
	w := do(h, "GET", "/ui/api/logs?tail=200", "", "")
	if w.Code != http.StatusOK || w.Body.String() != want.String() {
		t.Fatalf("GET /ui/api/logs: %d\n%s\nwant\n%s", w.Code, w.Body, want.String())
	}
	if w := do(h, "GET", "/ui/api/logs?tail=2&name=db", "", ""); w.Body.String() != "line 3\nline 5\n" {
		t.Errorf("one process: %q", w.Body)
	}
}
