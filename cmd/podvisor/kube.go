package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/kube"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
)

const kubeUsage = `usage:
  podvisor kube play [--dry-run] [--ordered] [--pace node|fast] [--restart-container-during-termination] [--name NAME] [--image-command IMAGE=CMD]...
                     [--images podman [--pull]] [--image-root IMAGE=DIR]...
                     [--from-dir DIR] [--ca-file FILE] [--volume-root DIR] [--listen ADDR] [--log-format text|json] FILE|-
  podvisor kube generate [-c FILE] [--shape fat|sidecars] [--kind Pod|Deployment|Job] [--image IMAGE] [--name NAME]
`

// maxManifest bounds the manifest kube play reads, as config bounds procs.yaml.
const maxManifest = config.MaxFileSize

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// parseInterspersed parses flags that may come after positional arguments
// (`kube play pod.yaml --ordered`), as users of kubectl expect.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// playFlags are kube play's flags.
type playFlags struct {
	dryRun, ordered, down, volumes, restartDuringTermination *bool
	name, fromDir, volumeRoot, listen, logFormat             *string
	caFile                                                   *string
	imageCmds                                                *listFlag
	pace                                                     *string     // kube_pace.go
	images                                                   *imageFlags // kube_images.go
}

// kubePlayFlags defines kube play's flags (one definition for the command
// and for help).
func kubePlayFlags(fs *flag.FlagSet) *playFlags {
	f := &playFlags{imageCmds: &listFlag{}}
	f.dryRun = fs.Bool("dry-run", false, "print the procs.yaml that would run, and exit")
	f.ordered = fs.Bool("ordered", false, "podvisor's order: each container gated on the readiness of those before it, stopped in reverse")
	f.pace = fs.String("pace", "", "node (default: the kubelet's, a start or exit acted on at the next relist, 0-1 s later) or fast (at once; --ordered's)")
	f.restartDuringTermination = fs.Bool("restart-container-during-termination", false, "KEP-4438's alpha feature gate RestartContainerDuringTermination: sidecars are probed and restarted while a regular container stops")
	f.name = fs.String("name", "", "the workload `NAME` to run when the file holds several")
	fs.Var(f.imageCmds, "image-command", "`IMAGE=CMD`: shell command standing for IMAGE's entrypoint (repeatable)")
	f.fromDir = fs.String("from-dir", "", "ConfigMap and Secret keys as files `DIR`/NAME/KEY")
	f.caFile = fs.String("ca-file", "", "the cluster CA certificate `FILE` for the kube-root-ca.crt ConfigMap (the kube-api-access-* volume's ca.crt)")
	f.volumeRoot = fs.String("volume-root", "", "materialise volumes under `DIR` and rewrite their paths, instead of a mount namespace (no root needed)")
	f.listen = fs.String("listen", "", "HTTP `ADDR` (as podvisor run)")
	f.logFormat = fs.String("log-format", "", "text or json (as podvisor run)")
	f.down = fs.Bool("down", false, "stop the pod FILE describes, as kube down does, instead of playing it")
	f.volumes = fs.Bool("volumes", false, "with --down: also remove the data of its persistentVolumeClaims")
	f.images = kubeImageFlags(fs)
	return f
}

func cmdKubePlay(args []string, stdout, stderr io.Writer) int {
	if state, ok := os.LookupEnv(mountedEnv); ok && len(args) == 0 {
		// The second half of a run with volumes, after execMounted.
		os.Unsetenv(mountedEnv) // not for the children
		return cmdKubeMounted(state, stdout, stderr)
	}
	f, file, code := parsePlayArgs(args, stderr)
	if f == nil {
		return code
	}
	m, w, opts, code := loadPlay(f, file, stderr)
	if m == nil {
		return code
	}
	if *f.down {
		return playDown(f, m, w, opts, stdout, stderr)
	}
	imgs, code := prepareImages(f.images, w, opts.VolumeRoot, *f.dryRun, stderr)
	if code != exitOK {
		return code
	}
	if imgs != nil {
		opts.Images, opts.ImagesFlag = imgs.byRef, imgs.flag
	}
	// Given back here unless the run (in its own mount namespace) takes
	// them over.
	defer imgs.release(stderr)
	// One translation: the run's directory is made once the mounts are
	// known, outside all of them (makeRunDir).
	var tmp string
	if *f.dryRun {
		opts.VolumeDir = "$TMPDIR/podvisor-kube-XXX/volumes"
	} else {
		opts.PlaceVolumes = func(mounts []kube.Mount) (string, error) {
			var err error
			tmp, err = makeRunDir(mounts)
			return filepath.Join(tmp, "volumes"), err
		}
	}
	res, err := kube.Translate(m, w, opts)
	if tmp != "" {
		defer os.RemoveAll(tmp)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		if errors.Is(err, errRunDir) {
			return exitFail
		}
		return exitUsage
	}
	if *f.dryRun {
		warnPlay(res, stderr)
		procs, _, code := playProcs(res, "procs.yaml", stderr)
		if procs == nil {
			return code
		}
		stdout.Write(procs)
		return exitOK
	}
	warnPlay(res, stderr)
	// Relative paths behave as in the directory podvisor was started in,
	// unless a volume hides it: then /, as in most images.
	wd, _ := os.Getwd()
	if underMount(wd, res.Mounts) {
		wd = "/"
	}
	for _, p := range res.Procs.Processes {
		if p.WorkingDir == "" && p.Root == "" {
			p.WorkingDir = config.Literal(wd) // the document holds values in podvisor's syntax
		}
	}
	procsPath := filepath.Join(tmp, "procs.yaml")
	procs, pcfg, code := playProcs(res, procsPath, stderr)
	if procs == nil {
		return code
	}
	if err := os.WriteFile(procsPath, procs, 0o600); err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return exitFail
	}
	pod, err := newPlayPod(f, file, w, res)
	if err == nil {
		pod.Hostname, pod.FQDN, err = podHostname(w)
		pod.Pace = podPace(*f.pace, *f.ordered, pod.Roles, pcfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %s: %v\n", m.File, err)
		return exitUsage
	}
	return runPlay(f, m.File, w, opts, res, pcfg, playRun{tmp: tmp, volDir: filepath.Join(tmp, "volumes"), procsPath: procsPath, pod: pod, images: imgs}, stdout, stderr)
}

// parsePlayArgs parses kube play's flags and its one FILE argument; f is
// nil when the command ends here, with code.
func parsePlayArgs(args []string, stderr io.Writer) (f *playFlags, file string, code int) {
	fs := newFlagSet("kube play", stderr)
	f = kubePlayFlags(fs)
	pos, code, ok := parseKubeArgs(fs, args, 1, "want one manifest FILE (or - for stdin)\n"+strings.TrimSuffix(kubeUsage, "\n"), stderr)
	if !ok {
		return nil, "", code
	}
	return f, pos[0], exitOK
}

// loadPlay reads and decodes the manifest, picks the workload and builds
// the translation's options; m is nil when the command ends here, with
// code.
func loadPlay(f *playFlags, file string, stderr io.Writer) (m *kube.Manifest, w *kube.Workload, opts kube.Options, code int) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(os.Stdin, maxManifest+1))
		file = "<stdin>"
		if err == nil && len(data) > maxManifest {
			err = fmt.Errorf("larger than %d bytes", maxManifest)
		}
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %s: %v\n", file, err)
		return nil, nil, opts, exitUsage
	}
	if m, err = kube.Decode(file, data); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, nil, opts, exitUsage
	}
	if w, err = m.Pick(*f.name); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, nil, opts, exitUsage
	}
	if opts, err = playOptions(*f.imageCmds, *f.ordered, *f.fromDir, *f.volumeRoot, *f.caFile); err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return nil, nil, opts, exitUsage
	}
	opts.RestartContainerDuringTermination = *f.restartDuringTermination
	if err := checkPace(*f.pace, *f.ordered); err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return nil, nil, opts, exitUsage
	}
	return m, w, opts, exitOK
}

func warnPlay(res *kube.Result, stderr io.Writer) {
	for _, warn := range res.Warnings {
		fmt.Fprintf(stderr, "podvisor kube play: warning: %s\n", warn)
	}
}

// errRunDir marks a failure to make the run's directory.
var errRunDir = errors.New("podvisor kube play")

// makeRunDir creates the run's directory, which must not lie under a mount
// path: a volume bound at /tmp would hide procs.yaml from the run.
func makeRunDir(mounts []kube.Mount) (string, error) {
	tmp, err := os.MkdirTemp(tempBase(mounts), "podvisor-kube-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", errRunDir, err)
	}
	// Searchable, not listable: under --volume-root a container with
	// runAsUser reaches its volumes through here (the mount paths are
	// links into it); the volumes' own directory is their fence
	// (kube.VolumeFence); procs.yaml and the state file stay 0600.
	if err := os.Chmod(tmp, 0o711); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("%w: %w", errRunDir, err)
	}
	return tmp, nil
}

// playProcs writes the translation as procs.yaml and loads it back as the
// run will; procs is nil when it does not load, with code.
func playProcs(res *kube.Result, procsPath string, stderr io.Writer) (procs []byte, pcfg *config.Config, code int) {
	for _, mt := range res.Mounts {
		res.Procs.Header = append(res.Procs.Header, fmt.Sprintf("volume %s: bound at %s", mt.Volume, mt.Target))
	}
	procs = config.Write(res.Procs)
	pcfg, err := config.Parse(procsPath, procs, nil)
	if err != nil {
		// A translation podvisor cannot load is podvisor's bug: say so.
		fmt.Fprintf(stderr, "podvisor kube play: internal error: the generated procs.yaml does not load:\n%v\n%s", err, procs)
		return nil, nil, exitFail
	}
	return procs, pcfg, exitOK
}

// playRun is where a run of kube play keeps its files.
type playRun struct {
	tmp, volDir, procsPath string
	pod                    *playPod
	images                 *playImages
}

// runPlay makes the volumes and runs podvisor on the written procs.yaml:
// directly without mounts or with --volume-root (links), else in a private
// mount namespace (execMounted).
func runPlay(f *playFlags, file string, w *kube.Workload, opts kube.Options, res *kube.Result, pcfg *config.Config, run playRun, stdout, stderr io.Writer) int {
	runArgs := run.pod.runArgs(f, run.procsPath)
	if len(res.Mounts) > 0 && opts.VolumeRoot == "" && !opts.Root {
		var paths []string
		for _, mt := range res.Mounts {
			paths = append(paths, mt.Target)
		}
		fmt.Fprintf(stderr, "podvisor kube play: %s mounts volumes at %s: binding them there needs a private mount namespace, so root; "+
			"run as root, or pass --volume-root DIR to put them under DIR and rewrite the paths in commands, env and probes\n",
			w.Name, strings.Join(paths, ", "))
		return exitUsage
	}
	release, code := run.pod.claim(stderr)
	if code != exitOK {
		return code
	}
	defer release()
	if code := makeVolumes(file, opts, res, pcfg, run.volDir, stderr); code != exitOK {
		return code
	}
	if !opts.Root || opts.VolumeRoot != "" {
		fmt.Fprintf(stderr, "podvisor kube play: warning: the pod's hostname stays this machine's: a UTS namespace of its own needs root and no --volume-root\n")
		if run.pod.FQDN != "" {
			fmt.Fprintf(stderr, "podvisor kube play: warning: the pod's name %s is not in its /etc/hosts: a mount namespace of its own needs root and no --volume-root\n", run.pod.FQDN)
		}
	} else {
		// The kubelet manages every pod's /etc/hosts: it names the pod's
		// hostname (its FQDN too with a subdomain), which the pod's UTS
		// namespace gives it; software that resolves its own name needs it.
		hosts, err := podHosts(run.pod.Hostname, run.pod.FQDN)
		if err == nil {
			err = os.WriteFile(filepath.Join(run.tmp, "etc-hosts"), hosts, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: the pod's /etc/hosts: %v\n", err)
			return exitFail
		}
		res.Mounts = append(res.Mounts, kube.Mount{Source: filepath.Join(run.tmp, "etc-hosts"), Target: "/etc/hosts", Volume: "etc-hosts (the pod's name)"})
	}
	if len(res.Roots) > 0 {
		files, err := rootFiles(run.tmp, run.pod.Hostname, run.pod.FQDN)
		if err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: the pod's files for its containers' roots: %v\n", err)
			return exitFail
		}
		kube.AddPodFiles(res.Roots, files)
	}
	if len(res.Mounts) == 0 && (!opts.Root || opts.VolumeRoot != "") {
		return runPod(runArgs, &run.pod.Roles, run.pod.Pace, stdout, stderr)
	}
	if opts.VolumeRoot != "" {
		b, err := kube.Link(res.Mounts)
		defer unbind(b, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
			return exitFail
		}
		return runPod(runArgs, &run.pod.Roles, run.pod.Pace, stdout, stderr)
	}
	// The run continues in a private mount namespace and UTS namespace
	// (the pod's hostname): this process execs itself there (same pid),
	// binds the volumes, runs, and cleans up.
	// The re-exec stays: unshare(CLONE_NEWNS) moves only the calling
	// thread of a multi-threaded Go process; after execve the whole
	// process is in the namespace. It passes the translation on (the
	// written procs.yaml and the mounts), translating nothing again.
	st := mountedState{Mounts: res.Mounts, Tmp: run.tmp, RunArgs: runArgs, Pod: run.pod, Hostname: run.pod.Hostname, Roots: res.Roots, HostNS: hostMountNS(), RecordFD: -1}
	if run.images != nil {
		st.Images = run.images.mounted
		if run.images.rec != nil {
			fd, path, err := run.images.rec.Inherit()
			if err != nil {
				fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
				return exitFail
			}
			st.RecordFD, st.RecordPath = fd, path
		}
	}
	return execMounted(st, pcfg, stderr)
}

// makeVolumes materialises the volumes in volDir behind their fence.
func makeVolumes(file string, opts kube.Options, res *kube.Result, pcfg *config.Config, volDir string, stderr io.Writer) int {
	// The volumes' parent is their fence against the other users of this
	// machine (see kube.VolumeFence), opened to the containers' users
	// once the volumes are made.
	var fence kube.Fence
	var err error
	if len(res.Volumes) > 0 {
		if fence, err = kube.VolumeFence(pcfg, opts.VolumeRoot != "", os.Geteuid(), os.Getegid()); err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %s: %v\n", file, err)
			return exitUsage
		}
		if err := kube.MakeVolumeDir(volDir); err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
			return exitFail
		}
	}
	if err := kube.Materialise(res.Volumes); err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return exitFail
	}
	if len(res.Volumes) > 0 {
		if err := kube.SetFence(volDir, fence); err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
			return exitFail
		}
	}
	return exitOK
}

// tempBase returns the first usual temporary directory outside every mount
// target.
func tempBase(mounts []kube.Mount) string {
	for _, base := range []string{os.TempDir(), "/var/tmp", "/run", "/dev/shm"} {
		if !underMount(base, mounts) {
			return base
		}
	}
	return os.TempDir()
}

// underMount reports whether dir is a mount target or lies below one.
func underMount(dir string, mounts []kube.Mount) bool {
	for _, m := range mounts {
		if dir == m.Target || strings.HasPrefix(dir+"/", m.Target+"/") {
			return true
		}
	}
	return false
}

func playOptions(imageCmds []string, ordered bool, fromDir, volumeRoot, caFile string) (kube.Options, error) {
	opts := kube.Options{Ordered: ordered, FromDir: fromDir, Root: os.Geteuid() == 0, ImageCommands: map[string]string{}}
	if caFile != "" {
		b, err := os.ReadFile(caFile)
		if err != nil {
			return opts, fmt.Errorf("--ca-file: %w", err)
		}
		opts.CACert = string(b)
	}
	for _, ic := range imageCmds {
		img, cmd, ok := strings.Cut(ic, "=")
		if !ok || img == "" || cmd == "" {
			return opts, fmt.Errorf("--image-command %q: want IMAGE=CMD", ic)
		}
		opts.ImageCommands[img] = cmd
	}
	if volumeRoot != "" {
		abs, err := filepath.Abs(volumeRoot)
		if err != nil {
			return opts, err
		}
		opts.VolumeRoot = abs
	}
	self, err := os.Executable()
	if err != nil {
		self = "podvisor"
	}
	opts.Self = self
	opts.ClaimDir = kube.ClaimsDir(kubeStateDir())
	opts.Hostname, _ = os.Hostname()
	opts.CPUs = runtime.NumCPU()
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		opts.MemoryBytes = int64(si.Totalram) * int64(si.Unit)
	}
	var sf unix.Statfs_t
	if unix.Statfs("/", &sf) == nil {
		// Bsize is int64, int32 or uint32 depending on the architecture.
		opts.DiskBytes = int64(sf.Blocks) * int64(sf.Bsize)
	}
	return opts, nil
}

// mountedEnv carries the state file to the process execMounted starts, so
// that the re-exec needs no command or flag of its own.
const mountedEnv = "PODVISOR_KUBE_MOUNTED"

// kubeStateEnv overrides kube.DefaultStateDir, where runs as root record the
// mount points they create.
const kubeStateEnv = "PODVISOR_KUBE_STATE"

type mountedState struct {
	Mounts  []kube.Mount
	Tmp     string
	RunArgs []string
	Pod     *playPod // its record, written before the exec, is removed at the end
	// Hostname is the pod's, set in its UTS namespace.
	Hostname string
	// Roots are the containers' roots to build (kube_images.go); Images
	// the images podman mounted, given back at the end in the mount
	// namespace HostNS (an fd kept across the exec; -1: none), where the
	// images killed runs left are given back too.
	Roots  []*kube.RootPlan
	Images []string
	HostNS int
	// RecordFD is the run's record, opened before podman mounted the
	// images and kept across the exec (RecordPath its path); -1: the run
	// opens its own.
	RecordFD   int
	RecordPath string
}

// execMounted moves this thread into a new mount namespace and execs
// podvisor there: after execve the whole process lives in the namespace,
// keeping its pid (PID 1 in a container stays PID 1). It returns only on
// failure.
func execMounted(st mountedState, cfg *config.Config, stderr io.Writer) int {
	statePath := filepath.Join(st.Tmp, "mounts.json")
	b, _ := json.Marshal(st)
	if err := os.WriteFile(statePath, b, 0o600); err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return exitFail
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return exitFail
	}
	// The control socket is bound here, outside the namespace, so the
	// operate verbs reach it even when a volume covers its directory.
	ctlPath, explicit := controlPath(st.controlFlag(), cfg)
	ctlEnv, err := bindControlForNamespace(ctlPath, explicit)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: cannot create the control socket; nothing was started: %v\n", err)
		return exitFail
	}
	env := append(os.Environ(), mountedEnv+"="+statePath)
	if ctlEnv != "" {
		env = append(env, ctlEnv)
	}
	runtime.LockOSThread() // never unlocked: this thread becomes the process
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWUTS); err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: cannot create a mount and UTS namespace: %v\n", err)
		return exitFail
	}
	err = syscall.Exec(self, []string{self, "kube", "play"}, env)
	fmt.Fprintf(stderr, "podvisor kube play: exec %s: %v\n", self, err)
	return exitFail
}

// cmdKubeMounted runs inside the private mount namespace: binds the
// volumes, runs podvisor on the translated procs.yaml, then unbinds and
// removes the run's temporary directory.
func cmdKubeMounted(statePath string, stdout, stderr io.Writer) int {
	// Only a state file execMounted wrote: ours, private, in a run directory.
	var st mountedState
	fi, err := os.Lstat(statePath)
	if err == nil {
		sys, _ := fi.Sys().(*syscall.Stat_t)
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || sys == nil || int(sys.Uid) != os.Geteuid() ||
			!strings.HasPrefix(filepath.Base(filepath.Dir(statePath)), "podvisor-kube-") {
			err = fmt.Errorf("%s=%s: not a state file of kube play", mountedEnv, statePath)
		}
	}
	if err == nil {
		var b []byte
		if b, err = os.ReadFile(statePath); err == nil {
			err = json.Unmarshal(b, &st)
		}
		st.Tmp = filepath.Dir(statePath) // removed at the end: never taken from the file
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return exitFail
	}
	keepTmp := false // the roots could not be unmounted: the directory may still hold mounts
	defer func() {
		if !keepTmp {
			os.RemoveAll(st.Tmp)
		}
	}()
	defer st.Pod.releaseOwn()
	var hostNS *os.File
	if st.HostNS >= 0 {
		unix.CloseOnExec(st.HostNS) // not for the children
		hostNS = os.NewFile(uintptr(st.HostNS), "mnt-ns")
		defer hostNS.Close()
	}
	var rec *kube.Record
	if st.RecordFD >= 0 {
		rec, err = kube.RecordFromFD(st.RecordFD, st.RecordPath)
		if err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
			return exitFail
		}
	}
	images := &playImages{mounted: st.Images, rec: rec}
	// Given back before the record goes (Unbind removes it), so that a
	// kill in between leaves them listed; once only.
	giveBack := sync.OnceFunc(func() { images.unmount(hostNS, stderr) })
	defer giveBack()
	if st.Hostname != "" {
		if err := unix.Sethostname([]byte(st.Hostname)); err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: cannot set the pod's hostname %q: %v\n", st.Hostname, err)
			return exitFail
		}
	}
	// Mount points are created on the real filesystem: written down first,
	// so that a run killed with SIGKILL leaves a record the next run cleans.
	stateDir := kubeStateDir()
	cleanKilledRuns("kube play", hostNS, stderr)
	if rec == nil {
		rec, err = kube.OpenRecord(stateDir)
	}
	if err == nil {
		err = rec.Tmp(st.Tmp)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: cannot record the mount points it creates in %s (%v); nothing was started\n", stateDir, err)
		return exitFail
	}
	bound, err := kube.Bind(st.Mounts, rec)
	defer unbind(bound, stderr)
	defer giveBack()
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return exitFail
	}
	if len(st.Roots) > 0 {
		roots, err := kube.BuildRoots(st.Roots)
		defer func() {
			if errs := roots.Close(); len(errs) > 0 {
				keepTmp = true
				for _, e := range errs {
					fmt.Fprintf(stderr, "podvisor kube play: %v (left: %s)\n", e, st.Tmp)
				}
			}
		}()
		if err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
			return exitFail
		}
		for _, r := range st.Roots {
			how := "writable through an overlay whose upper layer is in " + st.Tmp
			if roots.Modes[r.Container] == "read-only" {
				how = "read-only (no overlayfs here: " + roots.Why[r.Container] + "), tmpfs at /tmp, /var/tmp and /run"
			}
			fmt.Fprintf(stderr, "podvisor kube play: %s runs from image %s, its root %s\n", r.Container, r.Image.Ref, how)
			if miss := roots.Missing[r.Container]; len(miss) > 0 {
				fmt.Fprintf(stderr, "podvisor kube play: warning: %s keeps its image's %s (or none): the image lacks them and its root is read-only\n", r.Container, strings.Join(miss, ", "))
			}
		}
	}
	var roles *server.PodRoles
	var pace supervisor.Pace
	if st.Pod != nil {
		roles, pace = &st.Pod.Roles, st.Pod.Pace
	}
	return runPod(st.RunArgs, roles, pace, stdout, stderr)
}

// controlFlag is the --control of the run's arguments, or "".
func (st mountedState) controlFlag() string {
	for i, a := range st.RunArgs {
		if a == "--control" && i+1 < len(st.RunArgs) {
			return st.RunArgs[i+1]
		}
	}
	return ""
}

// unbind undoes what kube.Bind or kube.Link made, reporting what it
// cannot.
func unbind(b *kube.Bound, stderr io.Writer) {
	for _, e := range kube.Unbind(b) {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", e)
	}
}

// generateFlags are kube generate's flags.
type generateFlags struct {
	path, shape, kind, image, name *string
	profiles                       *profileList
}

// kubeGenerateFlags defines kube generate's flags.
func kubeGenerateFlags(fs *flag.FlagSet) *generateFlags {
	return &generateFlags{
		path:     configFlag(fs),
		shape:    fs.String("shape", "fat", "fat (podvisor is the entrypoint of one container) or sidecars (one container per process)"),
		kind:     fs.String("kind", "Pod", "Pod, Deployment or Job"),
		image:    fs.String("image", "", "the container `IMAGE` (default registry.example/NAME:latest)"),
		name:     fs.String("name", "", "the object `NAME` (default: the config's directory name)"),
		profiles: profileFlag(fs),
	}
}

// parseKubeArgs parses a kube subcommand's flags and its want positional
// arguments (else it prints "podvisor CMD: " and wrong); ok is false when
// the command ends here with code (0 after --help).
func parseKubeArgs(fs *flag.FlagSet, args []string, want int, wrong string, stderr io.Writer) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK, false
		}
		return nil, exitUsage, false
	}
	if len(pos) != want {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), wrong)
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

func cmdKubeGenerate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("kube generate", stderr)
	f := kubeGenerateFlags(fs)
	path, shape, kind, image, name := f.path, f.shape, f.kind, f.image, f.name
	if _, code, ok := parseKubeArgs(fs, args, 0, "unexpected argument (the config is -c FILE)", stderr); !ok {
		return code
	}
	cfg, err := loadConfig(*path)
	if err == nil {
		cfg, err = selectConfig(cfg, selection(f.profiles, nil))
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	raw, err := os.ReadFile(*path)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube generate: %v\n", err)
		return exitUsage
	}
	if *name == "" {
		*name = dnsName(filepath.Base(cfg.Dir))
	}
	g, err := kube.Generate(cfg, kube.GenerateOptions{Shape: *shape, Kind: *kind, Image: *image, Name: *name, Raw: raw, Profiles: *f.profiles})
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube generate: %v\n", err)
		return exitUsage
	}
	for _, w := range g.Warnings {
		fmt.Fprintf(stderr, "podvisor kube generate: warning: %s\n", w)
	}
	_, _ = stdout.Write(g.Manifest)
	return exitOK
}

// dnsName turns a directory name into a DNS label ("My_App" -> "my-app").
func dnsName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	n := strings.Trim(b.String(), "-")
	if len(n) > 63 {
		n = strings.Trim(n[:63], "-")
	}
	if n == "" {
		n = "podvisor"
	}
	return n
}
