package proc

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"testing"
)

// elfInterpStd is the same lookup through debug/elf, the reference.
func elfInterpStd(r io.ReaderAt) string {
	f, err := elf.NewFile(r)
	if err != nil {
		return ""
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
			if err != nil {
				return ""
			}
			return string(bytes.TrimRight(b, "\x00"))
		}
	}
	return ""
}

func TestElfInterpreterMatchesDebugElf(t *testing.T) {
	self, _ := os.Executable()
	seen := 0
	for _, path := range []string{"/bin/true", "/bin/sh", "/usr/bin/env", self} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		seen++
		got, want := elfInterpreter(bytes.NewReader(b)), elfInterpStd(bytes.NewReader(b))
		if got != want {
			t.Errorf("%s: PT_INTERP %q, debug/elf reads %q", path, got, want)
		}
	}
	if seen == 0 {
		t.Fatal("no ELF file to read")
	}
	if got := elfInterpreter(bytes.NewReader([]byte("#!/bin/sh\n"))); got != "" {
		t.Errorf("a script has PT_INTERP %q", got)
	}
}

// FuzzElfInterpreter: any bytes are read without a panic, and where
// debug/elf finds an interpreter, the same one is found.
func FuzzElfInterpreter(f *testing.F) {
	if b, err := os.ReadFile("/bin/true"); err == nil && len(b) > 4096 {
		f.Add(b[:4096])
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := elfInterpreter(bytes.NewReader(b))
		if want := elfInterpStd(bytes.NewReader(b)); want != "" && got != want {
			t.Fatalf("PT_INTERP %q, debug/elf reads %q", got, want)
		}
	})
}
