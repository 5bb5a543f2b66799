package vm

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// entry is one file of the initramfs: a directory, a regular file, a
// symbolic link or a character device.
type entry struct {
	name  string // without a leading "/"
	mode  uint32 // type and permission bits, as in st_mode
	data  []byte // a file's contents, or a link's target
	major uint32 // a device's numbers
	minor uint32
}

const (
	sIFDIR = 0o040000
	sIFREG = 0o100000
	sIFLNK = 0o120000
	sIFCHR = 0o020000
)

// writeCpio writes es as a cpio archive in the "newc" format, the one the
// kernel unpacks into its rootfs (Documentation/driver-api/early-userspace/
// buffer-format.rst): a 110-byte header of hexadecimal fields, the name,
// the data, each padded to 4 bytes, and a TRAILER!!! entry.
func writeCpio(w io.Writer, es []entry) error {
	var buf bytes.Buffer
	pad := func() {
		for buf.Len()%4 != 0 {
			buf.WriteByte(0)
		}
	}
	write := func(ino int, e entry) {
		nlink := 1
		if e.mode&0o170000 == sIFDIR {
			nlink = 2
		}
		fmt.Fprintf(&buf, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, e.mode, 0, 0, nlink, 0, len(e.data), 0, 0, e.major, e.minor, len(e.name)+1, 0)
		buf.WriteString(e.name)
		buf.WriteByte(0)
		pad()
		buf.Write(e.data)
		pad()
	}
	for i, e := range es {
		if e.name == "" || strings.HasPrefix(e.name, "/") || path.Clean(e.name) != e.name || strings.HasPrefix(e.name, "..") {
			return fmt.Errorf("cpio: entry name %q: want a clean relative path", e.name)
		}
		write(i+1, e)
	}
	write(0, entry{name: "TRAILER!!!"})
	_, err := w.Write(buf.Bytes())
	return err
}

// TestCpioReadsBackWithGNUCpio checks writeCpio against GNU cpio's reader
// (the kernel's is the other reader: the VM test boots from it).
func TestCpioReadsBackWithGNUCpio(t *testing.T) {
	cpio, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("needs GNU cpio: ", err)
	}
	es := []entry{
		{name: "bin", mode: sIFDIR | 0o755},
		{name: "bin/a", mode: sIFREG | 0o755, data: []byte("abc")},
		{name: "bin/b", mode: sIFLNK | 0o777, data: []byte("a")},
		{name: "dev", mode: sIFDIR | 0o755},
		{name: "dev/console", mode: sIFCHR | 0o600, major: 5, minor: 1},
		{name: "etc/five", mode: sIFREG | 0o644, data: []byte("12345")},
	}
	var archive bytes.Buffer
	if err := writeCpio(&archive, es); err != nil {
		t.Fatal(err)
	}
	if archive.Len()%4 != 0 {
		t.Errorf("archive of %d bytes, not a multiple of 4", archive.Len())
	}
	cmd := exec.Command(cpio, "-it", "--quiet")
	cmd.Stdin = bytes.NewReader(archive.Bytes())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -it: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	want := []string{"bin", "bin/a", "bin/b", "dev", "dev/console", "etc/five"}
	if !slices.Equal(got, want) {
		t.Errorf("cpio -it lists %q, want %q", got, want)
	}
	dir := t.TempDir()
	cmd = exec.Command(cpio, "-id", "--quiet", "--make-directories")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(archive.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -id: %v\n%s", err, out)
	}
	for name, want := range map[string]string{"bin/a": "abc", "etc/five": "12345"} {
		if b, err := os.ReadFile(dir + "/" + name); err != nil || string(b) != want {
			t.Errorf("%s reads %q, %v; want %q", name, b, err, want)
		}
	}
	if target, err := os.Readlink(dir + "/bin/b"); err != nil || target != "a" {
		t.Errorf("bin/b links to %q, %v; want a", target, err)
	}
	if fi, err := os.Stat(dir + "/bin/a"); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/a: %v, %v; want mode 0755", fi, err)
	}
}

func TestCpioRefusesNamesOutsideTheRoot(t *testing.T) {
	for _, name := range []string{"", "/etc/x", "../x", "a/../../x", "a//b"} {
		if err := writeCpio(io.Discard, []entry{{name: name, mode: sIFREG | 0o644}}); err == nil {
			t.Errorf("name %q: no error", name)
		}
	}
}
