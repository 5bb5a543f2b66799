package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/logs"
)

type fakeBackend struct{ ops []string }

func (f *fakeBackend) Command(_ context.Context, op string, req control.Request) control.Response {
	f.ops = append(f.ops, op+" "+strings.Join(req.Names, " "))
	return control.Response{OK: true}
}

func (f *fakeBackend) Tail(string) (*logs.Tail, error) { return nil, os.ErrNotExist }

const token = "0123456789abcdef-token"

func do(h http.Handler, method, path, auth, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestActionsNeedTheToken(t *testing.T) {
	b := &fakeBackend{}
	readOnly := New(Options{Backend: b})
	if w := do(readOnly, "POST", "/ui/api/restart", "Bearer "+token, `{"names":["db"]}`); w.Code != http.StatusForbidden {
		t.Errorf("no token configured: %d %s", w.Code, w.Body)
	}
	h := New(Options{Backend: b, Token: []byte(token)})
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, token} {
		if w := do(h, "POST", "/ui/api/restart", auth, `{"names":["db"]}`); w.Code != http.StatusUnauthorized {
			t.Errorf("authorization %q: %d", auth, w.Code)
		}
	}
	if len(b.ops) != 0 {
		t.Fatalf("refused requests reached the backend: %v", b.ops)
	}
	if w := do(h, "POST", "/ui/api/restart", "Bearer "+token, `{"names":["db"]}`); w.Code != http.StatusOK || len(b.ops) != 1 || b.ops[0] != "restart db" {
		t.Errorf("with the token: %d %s, backend saw %v", w.Code, w.Body, b.ops)
	}
	if w := do(h, "POST", "/ui/api/restart", "Bearer "+token, `{}`); w.Code != http.StatusBadRequest {
		t.Errorf("restart without names: %d", w.Code)
	}
	if w := do(h, "POST", "/ui/api/format-disk", "Bearer "+token, `{}`); w.Code != http.StatusNotFound {
		t.Errorf("unknown op: %d", w.Code)
	}
}

func TestPageAndLogsGate(t *testing.T) {
	h := New(Options{Backend: &fakeBackend{}})
	w := do(h, "GET", "/", "", "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "/ui/static/app.js") || !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("page: %d %q", w.Code, w.Header())
	}
	for _, f := range []string{"/ui/static/app.js", "/ui/static/app.css"} {
		if w := do(h, "GET", f, "", ""); w.Code != http.StatusOK {
			t.Errorf("%s: %d", f, w.Code)
		}
	}
	if w := do(h, "GET", "/ui/api/logs?name=db", "", ""); w.Code != http.StatusForbidden {
		t.Errorf("logs without ui.logs: %d", w.Code)
	}
	if w := do(h, "GET", "/ui/api/config", "", ""); strings.TrimSpace(w.Body.String()) != `{"actions":false,"logs":false}` {
		t.Errorf("config: %s", w.Body)
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tok")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(p); err == nil || !strings.Contains(err.Error(), "mode 0644") || strings.Contains(err.Error(), token) {
		t.Errorf("mode 0644: %v", err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadToken(p); err != nil || string(tok) != token {
		t.Errorf("mode 0600: %q %v", tok, err)
	}
	if err := os.WriteFile(p, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(p); err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("short token: %v", err)
	}
}

// Issue 34 item 14: a FIFO at the token path is refused at once (opening
// it used to wait for a writer forever), and so is a file too big to hold
// one token (it used to be cut at 4096 bytes without a word).
func TestReadTokenNeverWaits(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadToken(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), fifo) {
			t.Errorf("FIFO: %v, want an error naming it a named pipe", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadToken waited on a FIFO")
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", MaxTokenFile+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(big); err == nil || !strings.Contains(err.Error(), "at most 4096 bytes") {
		t.Errorf("a %d-byte file: %v", MaxTokenFile+1, err)
	}
}

// TestAssetsSelfContained: the page loads nothing from elsewhere (it must
// work offline and under a strict CSP) and stays small.
func TestAssetsSelfContained(t *testing.T) {
	total := 0
	for _, name := range []string{"index.html", "app.js", "app.css"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		total += len(b)
		s := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "") // a namespace, not a load
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "fonts.googleapis"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s refers to %q: the page must load only its own files", name, bad)
			}
		}
	}
	if total > 32<<10 {
		t.Errorf("assets take %d bytes; keep the page under 32 KiB", total)
	}
}
