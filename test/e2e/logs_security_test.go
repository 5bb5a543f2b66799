package e2e

// Issue 34, items 2-5: a root podvisor writes the log file of a `user:`
// process in a directory that process can write. Whatever the process
// plants there (a symlink at the log's name, links at the names rotation
// and compression use, a FIFO), root must write nothing outside that
// directory, and one process's planted file must not stop another's
// output.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// secLogDir returns a log directory owned by nobody (65534), which a
// `user: nobody` process can write, and a victim file outside it, owned by
// root, in a directory nobody cannot even enter.
func secLogDir(t *testing.T) (dir, victim string) {
	t.Helper()
	ffRequireRoot(t)
	dir, err := os.MkdirTemp("", "podvisor-logsec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	victim = filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte(victimText), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, victim
}

const victimText = "root's file: not a log\n"

// victimChanged reports whether the victim's content differs from what
// secLogDir wrote.
func victimChanged(victim string) bool {
	b, err := os.ReadFile(victim)
	return err != nil || string(b) != victimText
}

// wantVictimUnchanged fails the test unless the victim holds exactly what
// it held (content and size).
func wantVictimUnchanged(t *testing.T, victim string, r *Run) {
	t.Helper()
	fi, err := os.Stat(victim)
	if err != nil {
		t.Fatalf("victim: %v", err)
	}
	b, _ := os.ReadFile(victim)
	if string(b) != victimText || fi.Size() != int64(len(victimText)) {
		t.Fatalf("root wrote the victim through a planted link: size %d, starts %q\npodvisor:\n%s", fi.Size(), b[:min(len(b), 60)], r.Stdout)
	}
}

// needPerl returns perl's path: a planter that loops in one process (a
// shell forks per attempt, too slow to hit a race window).
func needPerl(t *testing.T) string {
	t.Helper()
	perl, err := exec.LookPath("perl")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
			t.Fatal("perl is required")
		}
		t.Skip("perl not installed")
	}
	return perl
}

// refusedRe is podvisor's warning for a log file it will not write.
const refusedRe = `log lines dropped until writing works again.*reason=file_refused`

// symlinkApp is the config of a process that replaces its log file, once
// podvisor has written it, by a symlink to victim (after a restart it
// finds the link there already).
func symlinkApp(dir, victim string) string {
	script := `i=0; until [ -L app.log ] || [ -s app.log ]; do i=$((i+1)); echo before $i; sleep 0.01; done; ` +
		`[ -L app.log ] || { rm -f app.log; ln -s ` + victim + ` app.log; touch planted; }; ` +
		`while :; do i=$((i+1)); echo after $i; sleep 0.01; done`
	return fmt.Sprintf(`
control: "{{dir}}/c.sock"
processes:
  app:
    user: nobody
    working_dir: %[1]s
    command: %[2]s
    log: {stdout: file, file: %[1]s/app.log}
`, dir, ffq(script))
}

// Item 2: the process replaces its log file by a symlink to a root-owned
// file; `podvisor logs --reopen` (logrotate's hook) does not make root
// write through it, and podvisor says once why the lines are dropped.
func TestLogsSecurity_SymlinkAtLogPathReopen(t *testing.T) {
	dir, victim := secLogDir(t)
	r := startPodvisor(t, symlinkApp(dir, victim))
	planted := filepath.Join(dir, "planted")
	eventually(t, 10*time.Second, func() bool { _, err := os.Stat(planted); return err == nil }, "app never planted its link")
	mustCtl(t, r, 0, "logs", "--reopen")
	eventually(t, 10*time.Second, func() bool { return victimChanged(victim) || countLines(r.Stdout, refusedRe) > 0 },
		"after --reopen: neither the victim written nor a refusal logged\n%s", r.Stdout)
	wantVictimUnchanged(t, victim, r)
	if n := countLines(r.Stdout, refusedRe); n != 1 {
		t.Errorf("refusal logged %d times, want once\n%s", n, r.Stdout)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "app.log")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link is gone or replaced: %v %v", fi, err)
	}
	ffStopClean(t, r, 10*time.Second)
	wantVictimUnchanged(t, victim, r)
}

// Item 2, after a restart of podvisor: its first open finds the link.
func TestLogsSecurity_SymlinkAtLogPathRestart(t *testing.T) {
	dir, victim := secLogDir(t)
	r := startPodvisor(t, symlinkApp(dir, victim))
	planted := filepath.Join(dir, "planted")
	eventually(t, 10*time.Second, func() bool { _, err := os.Stat(planted); return err == nil }, "app never planted its link")
	ffStopClean(t, r, 10*time.Second)
	r2 := startPodvisor(t, symlinkApp(dir, victim))
	eventually(t, 10*time.Second, func() bool { return victimChanged(victim) || countLines(r2.Stdout, refusedRe) > 0 },
		"after a restart: neither the victim written nor a refusal logged\n%s", r2.Stdout)
	wantVictimUnchanged(t, victim, r2)
	ffStopClean(t, r2, 10*time.Second)
	wantVictimUnchanged(t, victim, r2)
}

// Item 3: while podvisor rotates (rename, then create the name again), the
// process keeps trying to create a symlink at the name. Root must never
// truncate or fill the victim.
func TestLogsSecurity_SymlinkRaceOnRotation(t *testing.T) {
	perl := needPerl(t)
	dir, victim := secLogDir(t)
	// Once podvisor has opened app.log, the planter loops symlink() on the
	// name while the main process writes 1 KiB lines until told to stop:
	// with max_size 1MiB, a rotation per MiB, each a window for the
	// planter (which wins one in some tens).
	script := `my $v = shift; $| = 1; print "first\n"; select(undef, undef, undef, 0.01) until -s "app.log";
my $pid = fork();
if ($pid == 0) { until (-e "stop") { symlink($v, "app.log") } exit 0 }
my $line = ("x" x 1023) . "\n";
until (-e "stop") { print $line for 1 .. 1024 }
sleep 1000;`
	r := startPodvisor(t, fmt.Sprintf(`
processes:
  app:
    user: nobody
    working_dir: %[1]s
    command: [%[2]s, -e, %[3]s, %[4]s]
    log: {stdout: file, file: %[1]s/app.log, max_size: 1MiB, max_files: 3}
`, dir, perl, ffq(script), victim))
	// The planter wins a race sooner or later: then the old code had
	// truncated and filled the victim; podvisor now refuses the link.
	eventually(t, 60*time.Second, func() bool { return victimChanged(victim) || countLines(r.Stdout, refusedRe) > 0 },
		"the planter never won a rotation's race\n%s", r.Stdout)
	_ = os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)
	wantVictimUnchanged(t, victim, r)
	ffStopClean(t, r, 10*time.Second)
	wantVictimUnchanged(t, victim, r)
}

// Item 4: with compress: true the process plants symlinks at the names of
// the temporary files gzip would write, for every millisecond around the
// rotation it then causes. Root must not write through them.
func TestLogsSecurity_PlantedGzipTemporaries(t *testing.T) {
	perl := needPerl(t)
	dir, victim := secLogDir(t)
	// Links for the next 2 s, by the millisecond (planted again, further
	// on, if planting took more than 1.2 s), then 1.1 MiB of output.
	script := `use POSIX qw(strftime); use Time::HiRes qw(time); my $v = shift;
while (1) {
  my $now = int(time() * 1000);
  for my $ms ($now .. $now + 2000) {
    my $s = strftime("%Y-%m-%dT%H-%M-%S", gmtime(int($ms / 1000))) . sprintf(".%03d", $ms % 1000);
    symlink($v, "app-$s.log.gz.tmp");
  }
  last if time() * 1000 < $now + 1200;
}
$| = 1; my $line = ("y" x 1023) . "\n";
for (1 .. 1100) { print $line }
sleep 1000;`
	r := startPodvisor(t, fmt.Sprintf(`
processes:
  app:
    user: nobody
    working_dir: %[1]s
    command: [%[2]s, -e, %[3]s, %[4]s]
    log: {stdout: file, file: %[1]s/app.log, max_size: 1MiB, max_files: 3, compress: true}
`, dir, perl, ffq(script), victim))
	gzipped := func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "app-*.log.gz"))
		return len(m) > 0
	}
	eventually(t, 60*time.Second, func() bool { return victimChanged(victim) || gzipped() },
		"no rotated file was compressed\n%s", r.Stdout)
	wantVictimUnchanged(t, victim, r)
	m, _ := filepath.Glob(filepath.Join(dir, "app-*.log.gz"))
	for _, name := range m {
		if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("%s: not a regular file of root's: %v %v", name, fi, err)
		}
	}
	ffStopClean(t, r, 10*time.Second)
}

// Item 5: a FIFO planted at one process's log path, then a reopen: the
// open must not block the pump, so the other process's lines keep
// reaching its file, and podvisor still stops at once.
func TestLogsSecurity_FIFOAtLogPath(t *testing.T) {
	dir, _ := secLogDir(t)
	r := startPodvisor(t, fmt.Sprintf(`
control: "{{dir}}/c.sock"
processes:
  a:
    user: nobody
    working_dir: %[1]s
    command: %[2]s
    log: {stdout: file, file: %[1]s/a.log}
  b:
    command: 'i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.01; done'
    log: {stdout: file, file: %[1]s/b.log}
`, dir, ffq(`i=0; until [ -s a.log ]; do i=$((i+1)); echo a $i; sleep 0.01; done; `+
		`rm -f a.log; mkfifo a.log; touch planted; `+
		`while :; do i=$((i+1)); echo a $i; sleep 0.01; done`)))
	eventually(t, 10*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, "planted")); return err == nil }, "a never planted its FIFO")
	mustCtl(t, r, 0, "logs", "--reopen")
	last := lastTick(filepath.Join(dir, "b.log"))
	eventually(t, 10*time.Second, func() bool { return lastTick(filepath.Join(dir, "b.log")) >= last+20 },
		"b's lines stopped after a's FIFO (last tick %d)\n%s", last, r.Stdout)
	eventually(t, 10*time.Second, func() bool { return countLines(r.Stdout, refusedRe) > 0 }, "no refusal of a.log logged\n%s", r.Stdout)
	if n := countLines(r.Stdout, refusedRe); n != 1 {
		t.Errorf("refusal logged %d times, want once\n%s", n, r.Stdout)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "a.log")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("a.log is no longer the planted FIFO: %v %v", fi, err)
	}
	ffStopClean(t, r, 10*time.Second)
}

// countLines counts b's lines that match the regexp re.
func countLines(b *lineBuffer, re string) int {
	rx := regexp.MustCompile(re)
	n := 0
	for _, l := range b.Lines() {
		if rx.MatchString(l) {
			n++
		}
	}
	return n
}

// lastTick returns the number of the last whole "tick N" line of a file.
func lastTick(path string) int {
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 2; i >= 0; i-- {
		if n, err := strconv.Atoi(strings.TrimPrefix(lines[i], "tick ")); err == nil {
			return n
		}
	}
	return 0
}
