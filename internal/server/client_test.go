package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDialAddr(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{":9464", "127.0.0.1:9464", false},
		{"127.0.0.1:9464", "127.0.0.1:9464", false},
		{"10.0.0.7:80", "10.0.0.7:80", false},
		{"[::1]:9464", "[::1]:9464", false},
		{"localhost:1", "localhost:1", false},
		{"9464", "", true},
		{"host:", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := DialAddr(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("DialAddr(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFetchStatusRoundTrip(t *testing.T) {
	src := newFakeSource(fourStates())
	srv := httptest.NewServer(New(src, NewMetrics(), Options{}))
	t.Cleanup(srv.Close)

	st, raw, err := FetchStatus(context.Background(), srv.Client(), srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	want := NewStatus(src.Snapshot())
	// Compare through JSON: times decoded from the wire lose the monotonic
	// reading and location pointer, which DeepEqual would trip over.
	gotJSON, _ := json.Marshal(st)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("decoded status:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}
	if !strings.HasPrefix(string(raw), `{"phase":"starting"`) {
		t.Errorf("raw body %q", raw)
	}
	if !st.Processes[2].StartedAt.Equal(t0) || !reflect.DeepEqual(st.Processes[0].WaitingFor, []string{"db: ready", "migrate: completed"}) {
		t.Errorf("fields lost in transit: %+v", st.Processes)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestFetchStatusNothingListening(t *testing.T) {
	addr := closedAddr(t)
	_, _, err := FetchStatus(context.Background(), &http.Client{Timeout: 2 * time.Second}, addr)
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	if want := "no podvisor answering at " + addr + ": connection refused"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v does not match ECONNREFUSED", err)
	}
}

func TestFetchStatusTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	_, _, err := FetchStatus(context.Background(), &http.Client{Timeout: 100 * time.Millisecond}, addr)
	if err == nil || err.Error() != "no podvisor answering at "+addr+": timeout" {
		t.Errorf("error %v, want a timeout naming %s", err, addr)
	}
}

func TestFetchStatusSomethingElseAnswers(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"404", http.NotFound, "unexpected answer from ADDR: 404 Not Found"},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>hi</html>")) },
			"unexpected answer from ADDR: not a podvisor status: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			addr := srv.Listener.Addr().String()
			_, _, err := FetchStatus(context.Background(), srv.Client(), addr)
			want := strings.ReplaceAll(tt.want, "ADDR", addr)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %v, want prefix %q", err, want)
			}
		})
	}
}
