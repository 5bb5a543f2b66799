package testharness

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer collects output; it is safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the complete lines so far, without "\r" (a pty adds them).
func (b *Buffer) Lines() []string {
	s := b.String()
	i := strings.LastIndexByte(s, '\n')
	if i < 0 {
		return nil
	}
	lines := strings.Split(s[:i], "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// Contains reports whether the output so far contains s.
func (b *Buffer) Contains(s string) bool { return strings.Contains(b.String(), s) }
