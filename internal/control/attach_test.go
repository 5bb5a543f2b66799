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
		"unknown type": {0, 0, 0, 0, 0},
		"too long":     {FrameData, 0, 1, 0, 1},
		"short resize": {FrameResize, 0, 0, 0, 2, 0, 1},
		"cut payload":  {FrameData, 0, 0, 0, 5, 'a'},
	} {
		_, err := ReadFrame(bytes.NewReader(in))
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%s: err %v, want a refusal", name, err)
		}
	}
}
