package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/kube"
	"github.com/podvisor/podvisor/internal/proc"
)

// kube play's images (--images podman, --image-root IMAGE=DIR): the flags
// are defined here, together, and the images made ready before the
// translation (docs/kubernetes.md, "Pods from their images").

// imageFlags are kube play's image flags.
type imageFlags struct {
	store *string
	roots *listFlag
	pull  *bool
}

func kubeImageFlags(fs *flag.FlagSet) *imageFlags {
	f := &imageFlags{roots: &listFlag{}}
	f.store = fs.String("images", "", "take every container's image from `STORE` (podman: its local store, podman image mount) and run the container inside it")
	fs.Var(f.roots, "image-root", "`IMAGE=DIR`: containers whose image is IMAGE run inside the root file system DIR (repeatable)")
	f.pull = fs.Bool("pull", false, "with --images podman: pull an image missing from the store instead of failing")
	return f
}

// playImages are the images of a run and what to undo at its end.
type playImages struct {
	byRef   map[string]*kube.Image
	flag    string   // the flag that gave them, for messages
	mounted []string // podman image references mounted, to unmount
	// rec is the run's record in the state directory, opened before
	// podman mounts anything and listing each image mounted, so that a
	// run killed with SIGKILL leaves what the next one gives back
	// (cleanKilledRuns). It passes to the run in its mount namespace.
	rec *kube.Record
}

// podmanTimeout bounds each call of podman.
const podmanTimeout = 2 * time.Minute

// prepareImages makes the images the manifest names ready: nil without
// image flags; code says how the command ends on failure.
func prepareImages(f *imageFlags, w *kube.Workload, volumeRoot string, dryRun bool, stderr io.Writer) (*playImages, int) {
	if *f.store == "" && len(*f.roots) == 0 {
		if *f.pull {
			fmt.Fprintln(stderr, "podvisor kube play: --pull needs --images podman")
			return nil, exitUsage
		}
		return nil, exitOK
	}
	fail := func(format string, args ...any) (*playImages, int) {
		fmt.Fprintf(stderr, "podvisor kube play: "+format+"\n", args...)
		return nil, exitUsage
	}
	if *f.store != "" && *f.store != "podman" {
		return fail("--images %q: the one image store known is podman", *f.store)
	}
	if *f.store != "" && len(*f.roots) > 0 {
		return fail("--images and --image-root: use one or the other")
	}
	if os.Geteuid() != 0 && !dryRun {
		return fail("running containers from their images needs root (a mount namespace and a root per container); run as root, or drop --images/--image-root")
	}
	if volumeRoot != "" {
		return fail("--volume-root and images: a container from its image sees its volumes at their paths inside its root; drop --volume-root")
	}
	pi := &playImages{byRef: map[string]*kube.Image{}, flag: "--image-root"}
	if *f.store != "" {
		pi.flag = "--images podman"
		if code := pi.fromPodman(w, *f.pull, dryRun, stderr); code != exitOK {
			return nil, code
		}
		return pi, exitOK
	}
	for _, spec := range *f.roots {
		ref, dir, ok := strings.Cut(spec, "=")
		if !ok || ref == "" || dir == "" {
			return fail("--image-root %q: want IMAGE=DIR", spec)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fail("--image-root %s: %v", spec, err)
		}
		img := &kube.Image{Ref: ref, Dir: abs}
		// The image's config, if any, lies beside the tree: DIR.json.
		cfgPath := abs + ".json"
		if b, err := os.ReadFile(cfgPath); err == nil {
			if img.Config, err = kube.ParseImageConfig(cfgPath, b); err != nil {
				return fail("--image-root %s: %v", spec, err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return fail("--image-root %s: %v", spec, err)
		}
		if err := readUsers(img); err != nil {
			return fail("--image-root %s: %v", spec, err)
		}
		pi.byRef[ref] = img
	}
	return pi, exitOK
}

// refs lists the images the workload names: its containers' and its image
// volumes', each once, and who names each (for messages).
func imageRefs(w *kube.Workload) (refs []string, who map[string]string) {
	who = map[string]string{}
	add := func(ref, by string) {
		if _, ok := who[ref]; !ok {
			refs = append(refs, ref)
			who[ref] = by
		}
	}
	for _, list := range [][]kube.Container{w.Spec.InitContainers, w.Spec.Containers} {
		for _, c := range list {
			add(c.Image, "container "+c.Name)
		}
	}
	for _, v := range w.Spec.Volumes {
		if v.Image != nil && v.Image.Reference != "" {
			add(v.Image.Reference, "image volume "+v.Name)
		}
	}
	return refs, who
}

// fromPodman inspects and mounts (read-only, in this machine's mount
// namespace: the run's private one inherits it) every image the workload
// names, from podman's local store.
func (pi *playImages) fromPodman(w *kube.Workload, pull, dryRun bool, stderr io.Writer) int {
	refs, who := imageRefs(w)
	for _, ref := range refs {
		if ref == "" {
			fmt.Fprintf(stderr, "podvisor kube play: %s has no image, and --images podman runs every container from its image\n", who[ref])
			return exitUsage
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), podmanTimeout)
	defer cancel()
	// Each podman call costs some 300 ms of start-up: one inspect for all
	// the images, and one call per image only when one is missing (to
	// name it, or pull it).
	inspect := append([]string{"podman", "image", "inspect", "--format", "json"}, refs...)
	out, err := proc.RunTool(ctx, inspect)
	if err != nil {
		for _, ref := range refs {
			if _, err := proc.RunTool(ctx, []string{"podman", "image", "exists", ref}); err == nil {
				continue
			}
			if !pull || dryRun { // a dry run changes nothing, the store included
				fmt.Fprintf(stderr, "podvisor kube play: %s: image %s is not in podman's local store; fetch it with: podman pull %s (or pass --pull)\n", who[ref], ref, ref)
				return exitUsage
			}
			if _, err := proc.RunTool(ctx, []string{"podman", "pull", ref}); err != nil {
				fmt.Fprintf(stderr, "podvisor kube play: %s: podman pull %s: %v\n", who[ref], ref, err)
				return exitFail
			}
		}
		out, err = proc.RunTool(ctx, inspect)
	}
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: podman image inspect: %v\n", err)
		return exitFail
	}
	cfgs, err := kube.ParseImageConfigs("podman image inspect", out, len(refs))
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		return exitFail
	}
	if dryRun {
		// Nothing mounted: the roots, and what the image's files say
		// (a user named in its config, HOME), are resolved when played.
		for i, ref := range refs {
			pi.byRef[ref] = &kube.Image{Ref: ref, Dir: "/podman-image-mount/" + ref, Config: cfgs[i], Unmounted: true}
		}
		fmt.Fprintf(stderr, "podvisor kube play: --dry-run: images %s inspected, not mounted: their roots, a user their config names and HOME are resolved when played\n", strings.Join(refs, ", "))
		return exitOK
	}
	// What a killed run left mounted is given back first, then this run's
	// record lists each mount as soon as podman has made it.
	cleanKilledRuns("kube play", nil, stderr)
	rec, err := kube.OpenRecord(kubeStateDir())
	if err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: cannot record the images it mounts in %s (%v); nothing was mounted\n", kubeStateDir(), err)
		return exitFail
	}
	pi.rec = rec
	// The mounts, all at once.
	dirs := make([]string, len(refs))
	errs := make([]error, len(refs))
	var wg sync.WaitGroup
	var mu sync.Mutex // guards pi.mounted and the record's writes
	for i, ref := range refs {
		wg.Go(func() {
			var b []byte
			b, errs[i] = proc.RunTool(ctx, []string{"podman", "image", "mount", ref})
			dirs[i] = strings.TrimSpace(string(b))
			if errs[i] == nil {
				mu.Lock()
				pi.mounted = append(pi.mounted, ref)
				if err := rec.Image(ref); err != nil {
					errs[i] = fmt.Errorf("record it in %s: %w", kubeStateDir(), err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for i, ref := range refs {
		if errs[i] != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %s: podman image mount %s: %v\n", who[ref], ref, errs[i])
			pi.release(stderr)
			return exitFail
		}
		img := &kube.Image{Ref: ref, Dir: dirs[i], Config: cfgs[i]}
		if err := readUsers(img); err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: image %s: %v\n", ref, err)
			pi.release(stderr)
			return exitFail
		}
		pi.byRef[ref] = img
	}
	return exitOK
}

// cleanKilledRuns gives back what runs killed with SIGKILL left: their
// mount points and run directories, and podman's mounts of their images
// (given back in the mount namespace hostNS, or nil: this process's, which
// must be the machine's). who prefixes the messages. As root only.
func cleanKilledRuns(who string, hostNS *os.File, stderr io.Writer) {
	if os.Geteuid() != 0 {
		return
	}
	removed, errs := kube.CleanStale(kubeStateDir(), func(refs []string) error {
		return podmanUnmount(refs, hostNS)
	})
	if len(removed) > 0 {
		fmt.Fprintf(stderr, "podvisor %s: removed what a killed run left: %s\n", who, strings.Join(removed, ", "))
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "podvisor %s: cleaning what a killed run left: %v\n", who, e)
	}
}

// podmanUnmount gives back podman's mounts of refs, in the mount namespace
// hostNS (nil: this process's). An image no longer in the store has
// nothing to give back.
func podmanUnmount(refs []string, hostNS *os.File) error {
	ctx, cancel := context.WithTimeout(context.Background(), podmanTimeout)
	defer cancel()
	var errs []error
	for _, ref := range refs {
		argv := []string{"podman", "image", "unmount", ref}
		var extra []*os.File
		if hostNS != nil {
			// The mounts were made in this machine's namespace, before
			// the run moved to its own: podman must undo them there.
			extra = []*os.File{hostNS}
			argv = append([]string{"nsenter", "--mount=/proc/self/fd/3", "--"}, argv...)
		}
		if _, err := proc.RunTool(ctx, argv, extra...); err != nil && !strings.Contains(err.Error(), "image not known") {
			errs = append(errs, fmt.Errorf("podman image unmount %s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}

// unmount gives back podman's mounts of the images, in the mount namespace
// hostNS (nil: this process's), and records each given back; it reports
// whether all were.
func (pi *playImages) unmount(hostNS *os.File, stderr io.Writer) bool {
	if pi == nil || len(pi.mounted) == 0 {
		return true
	}
	if err := podmanUnmount(pi.mounted, hostNS); err != nil {
		fmt.Fprintf(stderr, "podvisor kube play: unmounting the images: %v\n", err)
		return false // the record lists them: the next run gives them back
	}
	for _, ref := range pi.mounted {
		if err := pi.rec.ImageGiven(ref); err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		}
	}
	pi.mounted = nil
	return true
}

// release gives back the images of a run that ends before its mount
// namespace takes them over, and removes its record.
func (pi *playImages) release(stderr io.Writer) {
	if pi == nil {
		return
	}
	if pi.unmount(nil, stderr) && pi.rec != nil {
		if err := pi.rec.Close(); err != nil {
			fmt.Fprintf(stderr, "podvisor kube play: %v\n", err)
		}
		pi.rec = nil
	}
}

// readUsers reads the image's /etc/passwd and /etc/group inside its root
// (an absolute symlink there stays there), for a user its config names.
func readUsers(img *kube.Image) error {
	root, err := unix.Open(img.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("image directory %s: %w", img.Dir, err)
	}
	defer unix.Close(root)
	read := func(p string) []byte {
		fd, err := unix.Openat2(root, p, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return nil
		}
		f := os.NewFile(uintptr(fd), p)
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
		return b
	}
	img.Passwd, img.Group = read("/etc/passwd"), read("/etc/group")
	return nil
}

// hostMountNS opens this process's mount namespace, kept across the exec
// into the run's own (execMounted), so that the run can give podman's
// mounts (its own, and those killed runs left) back where they were made;
// -1 when it cannot be opened.
func hostMountNS() int {
	fd, err := unix.Open("/proc/self/ns/mnt", unix.O_RDONLY, 0) // no O_CLOEXEC: it crosses the exec
	if err != nil {
		return -1
	}
	return fd
}
