package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// An httpGet preStop, as kube play writes it: one GET, whatever the answer,
// then on (the kubelet does not retry a hook).
func TestWaitOnceMakesOneAttempt(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	t0 := time.Now()
	code := realMain([]string{"wait", "--http", srv.URL, "--timeout", "10s", "--once"}, &out, &errb)
	if code != 1 || gets.Load() != 1 {
		t.Errorf("exit %d after %d GETs, want 1 after one; stderr %q", code, gets.Load(), errb.String())
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("took %v: --once must not wait for --timeout", d)
	}
}
