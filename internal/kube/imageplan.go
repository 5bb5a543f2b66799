package kube

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// RootPlan is the root of one container that runs from its image: Dir,
// beside the run's volume directory, is where imageroot_linux.go mounts
// the image (writable through an overlay, or read-only), /proc, /dev,
// /sys and the container's own volumes at Mounts (Target a path inside
// the root).
type RootPlan struct {
	Container string
	Image     *Image
	Dir       string
	Mounts    []Mount
	// Files are the pod's own /etc/hosts, /etc/hostname and
	// /etc/resolv.conf, bound over the image's as a runtime binds the
	// kubelet's and the sandbox's (AddPodFiles).
	Files []Mount
}

// AddPodFiles gives every root the pod's files: source is a file of this
// machine per path inside the root (/etc/hosts, say). A container with a
// volume of its own at one of the paths keeps its volume, as the kubelet
// leaves /etc/hosts to a container that mounts something there.
func AddPodFiles(roots []*RootPlan, files map[string]string) {
	targets := make([]string, 0, len(files))
	for t := range files {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, r := range roots {
	next:
		for _, t := range targets {
			for _, m := range r.Mounts {
				if filepath.Clean(m.Target) == t {
					continue next
				}
			}
			r.Files = append(r.Files, Mount{Source: files[t], Target: t, Volume: "the pod's " + t})
		}
	}
}

// planRoots notes the containers whose image is one podvisor has.
func (t *translator) planRoots(res *Result) {
	if t.opts.Images == nil {
		return
	}
	t.roots = map[string]*RootPlan{}
	for _, list := range [][]Container{t.w.Spec.InitContainers, t.w.Spec.Containers} {
		for _, c := range list {
			if img := t.opts.Images[c.Image]; img != nil {
				r := &RootPlan{Container: c.Name, Image: img}
				t.roots[c.Name] = r
				res.Roots = append(res.Roots, r)
			}
		}
	}
}

// placeRoots puts the roots beside the volume directory volDir, and their
// mounts' sources where the volumes are.
func (t *translator) placeRoots(res *Result, volDir string) {
	for _, r := range res.Roots {
		r.Dir = filepath.Join(filepath.Dir(volDir), "roots", r.Container)
		for i, m := range r.Mounts {
			if !m.HostPath {
				r.Mounts[i].Source = filepath.Join(volDir, m.Volume)
			}
		}
		// Parents before children, so a nested mount point lands in its
		// parent's volume.
		sort.SliceStable(r.Mounts, func(i, j int) bool {
			return strings.Count(r.Mounts[i].Target, "/") < strings.Count(r.Mounts[j].Target, "/")
		})
	}
}

// imageVolume plans an image volume (KEP-4639): the image's content,
// read-only, from the images podvisor was given.
func (t *translator) imageVolume(p *VolumePlan, v Volume, where place) bool {
	ref := v.Image.Reference
	if ref == "" {
		t.errorAt(where, ": image.reference is empty")
		return false
	}
	if t.opts.Images == nil {
		t.errorAt(where, ": an image volume (%s) needs the images: pass --images podman to take them from podman's local store, or --image-root %s=DIR for an unpacked root file system", ref, ref)
		return false
	}
	img := t.opts.Images[ref]
	if img == nil {
		t.errorAt(where, ": image %s: not among the images of %s; add --image-root %s=DIR", ref, t.opts.ImagesFlag, ref)
		return false
	}
	p.Kind, p.Source = "image", img.Dir
	return true
}

// imageCommand is a container's command line by Kubernetes' rules (command
// replaces the image's Entrypoint, args its Cmd); $(VAR) is expanded in
// what the manifest wrote, not in what the image holds.
func (b *builder) imageCommand(c *Container, r *RootPlan, lookup func(string) (string, bool), where place) []string {
	entry, args := imageArgv(c, r.Image)
	var argv []string
	for _, s := range entry {
		if len(c.Command) > 0 {
			s = expand(s, lookup)
		}
		argv = append(argv, s)
	}
	for _, s := range args {
		if len(c.Args) > 0 {
			s = expand(s, lookup)
		}
		argv = append(argv, s)
	}
	if len(argv) == 0 {
		b.t.errorAt(where, ": no command, and image %s has neither Entrypoint nor Cmd", r.Image.Ref)
		return []string{"/bin/false"}
	}
	return argv
}

// fromImage makes q run inside its container's root with the image's
// configuration: the image's Env under the container's (which wins), a
// default PATH, HOME from the image's passwd, its WorkingDir and User
// unless the container sets them.
func (b *builder) fromImage(q *config.Process, c *Container, r *RootPlan, where place) {
	img := r.Image
	q.Root = r.Dir
	if q.User == nil {
		u, err := imageUser(img)
		if err != nil {
			b.t.errorAt(where, ": %v", err)
		} else if u != "" {
			q.User = &config.User{Spec: u}
		}
	}
	own := map[string]bool{}
	for _, kv := range q.Env {
		k, _, _ := strings.Cut(kv, "=")
		own[k] = true
	}
	var env []string
	for _, kv := range img.Config.Env {
		if k, _, _ := strings.Cut(kv, "="); !own[k] {
			own[k] = true
			env = append(env, kv)
		}
	}
	if !own["PATH"] {
		env = append(env, defaultPath)
	}
	if !own["HOME"] && !img.Unmounted { // the image's passwd is unread in a dry run
		uid := "0"
		if q.User != nil {
			uid, _, _ = strings.Cut(q.User.Spec, ":")
		}
		env = append(env, "HOME="+imageHome(img, uid))
	}
	q.Env = append(env, q.Env...)
	switch {
	case c.WorkingDir != "":
		q.WorkingDir = c.WorkingDir
	case img.Config.WorkingDir != "":
		q.WorkingDir = img.Config.WorkingDir
	default:
		q.WorkingDir = "/"
	}
	if !filepath.IsAbs(q.WorkingDir) {
		b.t.errorAt(where, ": working directory %q inside image %s is not absolute", q.WorkingDir, img.Ref)
	}
}

// String says which image a root is built on, for messages.
func (r *RootPlan) String() string {
	return fmt.Sprintf("container %s (image %s)", r.Container, r.Image.Ref)
}
