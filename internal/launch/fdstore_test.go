package launch

import (
	"log/slog"
	"os"
	"strconv"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
)

func TestFDStoreBoundsDedupsAndRemoves(t *testing.T) {
	st := NewFDStore(slog.New(slog.DiscardHandler))
	defer st.Close()
	p := &config.Process{Name: "web", FDStoreMax: 2}
	pipe := func() *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return r
	}
	a, b, c := pipe(), pipe(), pipe()
	dup, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(a.Fd()))) // the same pipe again
	if err != nil {
		t.Fatal(err)
	}
	st.handle(p, &health.StoreRequest{Name: "x", Files: []*os.File{a, dup}}, nil)
	st.handle(p, &health.StoreRequest{Name: "y", Files: []*os.File{b, c}}, nil) // c: over the bound
	files, names := st.files(p)
	if len(files) != 2 || names[0] != "x" || names[1] != "y" || st.Count("web") != 2 {
		t.Fatalf("stored %v %v", files, names)
	}
	if dup.Fd() != ^uintptr(0) || c.Fd() != ^uintptr(0) {
		t.Fatal("the duplicate and the fd over the bound were not closed")
	}
	st.handle(p, &health.StoreRequest{Remove: true, Name: "x"}, nil)
	if _, names := st.files(p); len(names) != 1 || names[0] != "y" {
		t.Fatalf("after remove: %v", names)
	}
	st.handle(p, &health.StoreRequest{Name: "bad:name", Files: []*os.File{pipe()}}, nil)
	if st.Count("web") != 1 {
		t.Fatal("an invalid FDNAME was stored")
	}
	st.Retain(&config.Config{Processes: map[string]*config.Process{"web": {Name: "web"}}})
	if st.Count("web") != 0 || b.Fd() != ^uintptr(0) {
		t.Fatal("fd_store_max 0 after a reload kept the fds")
	}
}
