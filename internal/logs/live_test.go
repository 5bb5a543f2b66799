package logs

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestSetFormatSwitchesLive(t *testing.T) {
	var out bytes.Buffer
	s := NewSink(&out, Options{Width: 4, Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	log := s.Logger().With("k", "v")
	log.Info("before")
	<-s.Attach("web", "stdout", strings.NewReader("one\n"), nil)
	s.SetFormat("json", false)
	log.Info("after", "process", "web")
	<-s.Attach("web", "stdout", strings.NewReader("two\n"), nil)
	s.SetFormat("text", true)
	<-s.Attach("web", "stdout", strings.NewReader("three\n"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`podvisor | level=INFO msg=before k=v`,
		`web  | one`,
		`{"time":"2026-01-02T03:04:05.000Z","process":"podvisor","level":"INFO","msg":"after","k":"v","subject":"web"}`,
		`{"time":"2026-01-02T03:04:05.000Z","process":"web","stream":"stdout","line":"two"}`,
		`2026-01-02T03:04:05.000Z web  | three`,
	}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", out.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want[i])
		}
	}
}
