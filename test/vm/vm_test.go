// Package vm tests podvisor on cgroup v2 with every controller delegated,
// which this host (cgroup v1 hybrid) cannot give: it boots a Debian kernel
// under qemu-system-x86_64 (software emulation, no KVM) from an initramfs
// the test builds, with podvisor as the VM's PID 1 and a scenario program
// (./guest) as its job. The scenarios are docs/resources.md's, as
// test/e2e/resources_test.go runs them on v1. One boot per run, as the
// emulation is slow. They run only with PODVISOR_VM_TESTS=1 (`make
// test-vm`, which installs qemu-system-x86, linux-image-cloud-amd64 and
// busybox-static).
package vm

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// scenarios are the VMRESULT names the guest must report, each ok.
var scenarios = []string{
	"pid1", "pid1-reaps", "pid1-cgroup", "leaf", "cpu", "accounting",
	"oom", "oom-group", "forkbomb", "escape", "bench",
}

func needVM(t *testing.T) (qemu, kernel, busybox string) {
	t.Helper()
	if os.Getenv("PODVISOR_VM_TESTS") == "" {
		t.Skip("set PODVISOR_VM_TESTS=1 (make test-vm)")
	}
	if os.Geteuid() != 0 {
		t.Skip("reading /boot's kernel needs root")
	}
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Fatalf("qemu-system-x86_64: %v (apt-get install qemu-system-x86; make test-vm does)", err)
	}
	kernel = os.Getenv("PODVISOR_VM_KERNEL")
	if kernel == "" {
		ks, _ := filepath.Glob("/boot/vmlinuz-*-cloud-amd64")
		if len(ks) == 0 {
			t.Fatal("no /boot/vmlinuz-*-cloud-amd64 (apt-get install linux-image-cloud-amd64; make test-vm does), or set PODVISOR_VM_KERNEL")
		}
		slices.Sort(ks)
		kernel = ks[len(ks)-1]
	}
	busybox, err = exec.LookPath("busybox")
	if err != nil {
		t.Fatalf("busybox: %v (apt-get install busybox-static; make test-vm does)", err)
	}
	if err := static(busybox); err != nil {
		t.Fatalf("%s: %v (apt-get install busybox-static; make test-vm does)", busybox, err)
	}
	return qemu, kernel, busybox
}

// static fails unless path is an ELF executable without an interpreter:
// the initramfs has no libc.
func static(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked: the initramfs has no libc")
		}
	}
	return nil
}

// initScript mounts what a system has (proc, sys, dev, cgroup2 at
// /sys/fs/cgroup, tmpfs), brings up lo for podvisor's HTTP, and execs
// podvisor, which is then PID 1.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
ip link set lo up
echo "VMBOOT uptime=$(cut -d' ' -f1 /proc/uptime)"
exec /bin/podvisor run -c /etc/podvisor/vm.yaml
`

// pid1Config is the VM's own procs.yaml: sentinel has limits (so PID 1
// makes its cgroups at the root of the hierarchy), guest runs the
// scenarios; when that job completes podvisor tears down and exits, and
// the kernel reports its exit code as it panics (init exited).
const pid1Config = `listen: "127.0.0.1:8080"
control: /run/podvisor.sock
shutdown_timeout: 20s
processes:
  sentinel:
    command: [sleep, '999999']
    resources: {memory: {max: 16Mi}, cpu: {max: 100m}, pids: {max: 8}}
  guest:
    type: job
    command: [/bin/guest]
    depends_on: {sentinel: {condition: started}}
`

// build compiles ./guest statically into dir.
func build(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "guest")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./guest")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./guest: %v\n%s", err, b)
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// initramfs writes the VM's root file system to dir/initrd.cpio.
func initramfs(t *testing.T, dir, busybox, podvisor, guest string) string {
	t.Helper()
	exe := func(p string) []byte { return readFile(t, p) }
	es := []entry{
		{name: "bin", mode: sIFDIR | 0o755},
		{name: "bin/busybox", mode: sIFREG | 0o755, data: exe(busybox)},
		{name: "bin/sh", mode: sIFLNK | 0o777, data: []byte("busybox")},
		{name: "bin/podvisor", mode: sIFREG | 0o755, data: exe(podvisor)},
		{name: "bin/guest", mode: sIFREG | 0o755, data: exe(guest)},
		{name: "dev", mode: sIFDIR | 0o755},
		{name: "dev/console", mode: sIFCHR | 0o600, major: 5, minor: 1},
		{name: "etc", mode: sIFDIR | 0o755},
		{name: "etc/podvisor", mode: sIFDIR | 0o755},
		{name: "etc/podvisor/vm.yaml", mode: sIFREG | 0o644, data: []byte(pid1Config)},
		{name: "init", mode: sIFREG | 0o755, data: []byte(initScript)},
		{name: "proc", mode: sIFDIR | 0o755},
		{name: "run", mode: sIFDIR | 0o755},
		{name: "sys", mode: sIFDIR | 0o755},
		{name: "tmp", mode: sIFDIR | 0o1777},
	}
	var b bytes.Buffer
	if err := writeCpio(&b, es); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "initrd.cpio")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// benchN is how many processes the bench scenario starts per run:
// PODVISOR_VM_BENCH, else 50.
func benchN() string {
	if n := os.Getenv("PODVISOR_VM_BENCH"); n != "" {
		return n
	}
	return "50"
}

var resultLine = regexp.MustCompile(`^VMRESULT name=(\S+) ok=(true|false) ms=(\d+) detail=(.*)$`)

// TestCgroupV2InVM boots the VM once and checks every scenario's result
// (the guest writes them to the second serial port, apart from the
// console), then that podvisor, as init, exited 0 when its job was done.
func TestCgroupV2InVM(t *testing.T) {
	qemu, kernel, busybox := needVM(t)
	dir := t.TempDir()
	podvisor, err := testharness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	slow, err := testharness.Slowdown()
	if err != nil {
		t.Fatal(err)
	}
	initrd := initramfs(t, dir, busybox, podvisor, build(t, dir))
	want := scenarios
	only := ""
	if o := os.Getenv("PODVISOR_VM_ONLY"); o != "" { // a subset, while working on one
		want, only = strings.Split(o, ","), " vmonly="+o
	}
	console, results := filepath.Join(dir, "console.log"), filepath.Join(dir, "results.log")

	// The whole boot is bounded: a hung guest must not hang the test.
	ctx, cancel := context.WithTimeout(context.Background(), testharness.Scale(10*time.Minute, slow))
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu,
		"-accel", "tcg", "-cpu", "max", "-smp", "1", "-m", "512",
		"-nographic", "-nodefaults", "-no-reboot",
		"-serial", "file:"+console, "-serial", "file:"+results,
		"-kernel", kernel, "-initrd", initrd,
		"-append", "console=ttyS0 panic=-1 quiet cgroup_no_v1=all vmbench="+benchN()+only)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	con, _ := os.ReadFile(console)
	res, _ := os.ReadFile(results)
	t.Logf("qemu ran %.1f s (%s, %s)", took.Seconds(), kernel, qemu)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("qemu: %v (context: %v)\n%s\nconsole:\n%s\nresults:\n%s", err, ctx.Err(), out, con, res)
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(res))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "VMBENCH ") || strings.HasPrefix(line, "VMTIME ") {
			t.Log(line)
			continue
		}
		m := resultLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t.Logf("%s ok=%s in %s ms: %s", m[1], m[2], m[3], m[4])
		got[m[1]] = m[2] == "true"
		if m[2] != "true" {
			t.Errorf("scenario %s failed in the VM: %s", m[1], m[4])
		}
	}
	for _, s := range want {
		if _, ok := got[s]; !ok {
			t.Errorf("no result for scenario %s", s)
		}
	}
	if m := regexp.MustCompile(`VMBOOT uptime=(\S+)`).FindSubmatch(con); m != nil {
		t.Logf("init ran at %s s of the guest's uptime", m[1])
	}
	// podvisor as init: when its job completes it tears down and exits 0,
	// and the kernel says so as it panics (then -no-reboot ends qemu).
	if !bytes.Contains(con, []byte("Attempted to kill init! exitcode=0x00000000")) {
		t.Errorf("podvisor (PID 1) did not exit 0 at the end of its job")
	}
	if t.Failed() {
		t.Logf("console:\n%s\nresults:\n%s", con, res)
	}
}
