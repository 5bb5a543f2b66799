package control

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadFrame: no input panics or allocates beyond MaxFrame, and a frame
// that decodes encodes back to the same bytes.
func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	_ = WriteFrame(&b, FrameData, []byte("hello"))
	_ = WriteFrame(&b, FrameResize, ResizePayload(24, 80))
	f.Add(b.Bytes())
	f.Add([]byte{FrameResize, 0, 0, 0, 3, 1, 2, 3})
	f.Add([]byte{FrameData, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{9, 0, 0, 0, 0})
	b.Reset()
	_ = WriteFrame(&b, FrameStderr, []byte("oops\n"))
	_ = WriteFrame(&b, FrameEOF, nil)
	_ = WriteFrame(&b, FrameExit, []byte(`{"exit_code":7}`))
	f.Add(b.Bytes())
	f.Add([]byte{FrameEOF, 0, 0, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			start := len(in) - r.Len()
			fr, err := ReadFrame(r)
			if err != nil {
				return
			}
			var out bytes.Buffer
			if err := WriteFrame(&out, fr.Type, fr.Payload); err != nil {
				t.Fatal(err)
			}
			if end := len(in) - r.Len(); !bytes.Equal(out.Bytes(), in[start:end]) {
				t.Fatalf("re-encoded %q, read %q", out.Bytes(), in[start:end])
			}
		}
	})
}

func TestReadFrameRefuses(t *testing.T) {
	for name, in := range map[string][]byte{
		"unknown type":  {0, 0, 0, 0, 0},
		"too long":      {FrameData, 0, 1, 0, 1},
		"short resize":  {FrameResize, 0, 0, 0, 2, 0, 1},
		"cut payload":   {FrameData, 0, 0, 0, 5, 'a'},
		"EOF with data": {FrameEOF, 0, 0, 0, 1, 'x'},
		"type 8":        {8, 0, 0, 0, 0},
	} {
		_, err := ReadFrame(bytes.NewReader(in))
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%s: err %v, want a refusal", name, err)
		}
	}
}

// FuzzParseExit: no exit frame's payload panics, and a code it accepts is
// one a process can exit with.
func FuzzParseExit(f *testing.F) {
	for _, s := range []string{`{"exit_code":7}`, `{"exit_code":127,"error":"not found"}`, `{"exit_code":-1}`, `{"exit_code":256}`, `{}`, `{"pid":3}`, `{"exit_code":1e3}`, `null`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		code, _, err := ParseExit(in)
		if err == nil && (code < 0 || code > 255) {
			t.Fatalf("accepted exit code %d from %q", code, in)
		}
		if err != nil && code != 1 {
			t.Fatalf("refusal of %q with code %d, want 1", in, code)
		}
	})
}

func TestParseExit(t *testing.T) {
	for in, want := range map[string]struct {
		code int
		why  string
		ok   bool
	}{
		`{"exit_code":7}`:                     {7, "", true},
		`{"exit_code":127,"error":"no such"}`: {127, "no such", true},
		`{"exit_code":300}`:                   {1, "", false},
		`{"stream":"stdout"}`:                 {1, "", false},
		`{"exit_code":0,"nosuch":1}`:          {1, "", false},
	} {
		code, why, err := ParseExit([]byte(in))
		if code != want.code || why != want.why || (err == nil) != want.ok {
			t.Errorf("ParseExit(%s) = %d, %q, %v; want %d, %q, ok %v", in, code, why, err, want.code, want.why, want.ok)
		}
	}
}
