package kube

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// VolumePlan is a volume to materialise before the run.
type VolumePlan struct {
	Name     string
	Kind     string // emptyDir, hostPath, persistentVolumeClaim, configMap, secret, downwardAPI, projected
	Source   string // the directory (or hostPath, or claim directory) the mounts bind
	Files    map[string]File
	HostType string // hostPath type
	Claim    string // persistentVolumeClaim: the claim's name
	// ReadOnly: every mount of it is read-only (persistentVolumeClaim.readOnly).
	ReadOnly bool `json:",omitempty"`
}

// outside reports whether the volume's directory is not the run's: a
// hostPath, or a claim's directory that outlives the run.
func (v *VolumePlan) outside() bool {
	return v.Kind == "hostPath" || v.Kind == "persistentVolumeClaim" || v.Kind == "image"
}

// File is one file of a configMap or secret volume.
type File struct {
	Data string
	Mode os.FileMode
}

// Mount binds Source (or SubPath beneath it) at Target (Target is
// remapped under --volume-root).
type Mount struct {
	Source, Target string
	SubPath        string // relative, cleaned, no ".."; opened without following symlinks
	ReadOnly       bool
	Volume         string
	// HostPath: Source is a path of this machine whose content the
	// containers write (a hostPath volume), so a mount point beneath it
	// is created without following symlinks.
	HostPath bool `json:",omitempty"`
}

// volumes plans the pod's volumes and every container's mounts.
func (t *translator) volumes(res *Result) map[string]*VolumePlan {
	plans := map[string]*VolumePlan{}
	t.refused = map[string]bool{}
	for i, v := range t.withClaimTemplates() {
		if p := t.volumePlan(i, v, plans); p != nil {
			plans[v.Name] = p
		} else {
			t.refused[v.Name] = true // reported once, not again at each mount
		}
	}
	used, byTarget := t.volumeMounts(plans)
	for _, name := range sortedKeys(plans) {
		if used[name] {
			res.Volumes = append(res.Volumes, plans[name])
		} else {
			t.warnf("spec.volumes %q: mounted by no container, not created", name)
		}
	}
	for _, target := range sortedKeys(byTarget) {
		m := byTarget[target]
		if t.opts.VolumeRoot != "" {
			m.Target = filepath.Join(t.opts.VolumeRoot, target)
		}
		res.Mounts = append(res.Mounts, m)
	}
	// Parents before children, so a nested mount point lands in its parent's volume.
	sort.SliceStable(res.Mounts, func(i, j int) bool {
		return strings.Count(res.Mounts[i].Target, "/") < strings.Count(res.Mounts[j].Target, "/")
	})
	t.remapTargets = nil
	if t.opts.VolumeRoot != "" {
		for target := range byTarget {
			t.remapTargets = append(t.remapTargets, target)
		}
		sort.Slice(t.remapTargets, func(i, j int) bool { return len(t.remapTargets[i]) > len(t.remapTargets[j]) })
	}
	return plans
}

// volumePlan plans the volume v, the i-th of the pod; nil when it cannot
// run locally (reported).
func (t *translator) volumePlan(i int, v Volume, plans map[string]*VolumePlan) *VolumePlan {
	where := specItem(fmt.Sprintf("spec.volumes[%d] (%s)", i, v.Name), "volumes", i)
	// The name is a directory under the run's volume directory.
	if !dnsLabel(v.Name) {
		t.errorAt(specItem(fmt.Sprintf("spec.volumes[%d]", i), "volumes", i), ": name %q is not a DNS label (a-z, 0-9, '-', at most 63 characters), as the API server requires", v.Name)
		return nil
	}
	if _, dup := plans[v.Name]; dup {
		t.errorAt(where, ": two volumes named %q", v.Name)
		return nil
	}
	p := &VolumePlan{Name: v.Name, Source: filepath.Join(t.opts.VolumeDir, v.Name)}
	kind := volumeType(v)
	switch {
	case v.EmptyDir != nil, kind == "":
		// No source at all is an emptyDir: the API server's default.
		p.Kind = "emptyDir"
		if v.EmptyDir != nil && (v.EmptyDir.Medium == "Memory" || v.EmptyDir.SizeLimit.Kind != 0 || v.EmptyDir.Mode.Kind != 0) {
			t.warnf("%s: emptyDir medium, sizeLimit and mode: ignored, a plain directory (mode 0777)", where)
		}
	case v.HostPath != nil:
		p.Kind, p.Source, p.HostType = "hostPath", v.HostPath.Path, v.HostPath.Type
		if !filepath.IsAbs(p.Source) {
			t.errorAt(where, ": hostPath.path %q must be absolute", p.Source)
		} else if prob := backstepProblem(p.Source); prob != "" {
			t.errorAt(where, ": hostPath.path %q %s", p.Source, prob)
		}
	case v.ConfigMap != nil:
		p.Kind = "configMap"
		if v.ConfigMap.DefaultUser.Kind != 0 {
			t.warnf("%s: defaultUser: ignored, the files belong to podvisor's user", where)
		}
		p.Files = t.volumeFiles(false, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.DefaultMode, v.ConfigMap.Optional, where)
	case v.Secret != nil:
		p.Kind = "secret"
		if v.Secret.DefaultUser.Kind != 0 {
			t.warnf("%s: defaultUser: ignored, the files belong to podvisor's user", where)
		}
		if files, ok := t.legacyToken(v); ok {
			p.Files = files
			break
		}
		p.Files = t.volumeFiles(true, v.Secret.SecretName, v.Secret.Items, v.Secret.DefaultMode, v.Secret.Optional, where)
	case v.PersistentVolumeClaim.Kind != 0:
		if !t.claimPlan(p, v, where) {
			return nil
		}
	case v.DownwardAPI != nil:
		p.Kind = "downwardAPI"
		if v.DownwardAPI.DefaultUser.Kind != 0 {
			t.warnf("%s: defaultUser: ignored, the files belong to podvisor's user", where)
		}
		p.Files = map[string]File{}
		t.downwardFiles(p.Files, v.DownwardAPI.Items, fileMode(v.DownwardAPI.DefaultMode), where.in("downwardAPI"))
	case v.Image != nil:
		if !t.imageVolume(p, v, where) {
			return nil
		}
	case v.Projected != nil:
		p.Kind = "projected"
		p.Files = t.projectedFiles(v.Projected, where.in("projected"))
	default:
		t.errorAt(where, ": %s volumes cannot run locally: only emptyDir, hostPath, persistentVolumeClaim, configMap, secret, downwardAPI and projected can (use a hostPath or a persistentVolumeClaim for data that must persist)", kind)
		return nil
	}
	return p
}

// volumeMounts checks every container's volumeMounts: used are the volumes
// mounted, byTarget the mounts by their (unremapped) target.
func (t *translator) volumeMounts(plans map[string]*VolumePlan) (used map[string]bool, byTarget map[string]Mount) {
	used = map[string]bool{}
	byTarget = map[string]Mount{}
	for _, list := range [][]Container{t.w.Spec.InitContainers, t.w.Spec.Containers} {
		for _, c := range list {
			for j, vm := range c.VolumeMounts {
				where := place{text: fmt.Sprintf("%s.volumeMounts[%d]", c.Name, j)}
				p, ok := plans[vm.Name]
				if !ok && t.refused[vm.Name] {
					continue // declared, and refused already
				}
				if !ok {
					t.errorAt(where, ": no volume named %q in spec.volumes", vm.Name)
					continue
				}
				if !path.IsAbs(vm.MountPath) || path.Clean(vm.MountPath) == "/" {
					t.errorAt(where, ": mountPath %q must be an absolute path other than /", vm.MountPath)
					continue
				}
				if prob := backstepProblem(vm.MountPath); prob != "" {
					t.errorAt(where, ": mountPath %q %s", vm.MountPath, prob)
					continue
				}
				if vm.SubPathExpr.Kind != 0 {
					t.errorAt(where, ": subPathExpr is not supported (use subPath)")
					continue
				}
				if vm.RecursiveReadOnly.Kind != 0 || vm.BindMountOptions.Kind != 0 {
					t.warnFor(c.Name, "volumeMounts recursiveReadOnly, bindMountOptions: ignored (readOnly is honoured)")
				}
				var sub string
				if vm.SubPath != "" {
					if prob := localPathProblem(vm.SubPath, false); prob != "" {
						t.errorAt(where, ": subPath %q %s: it must be a path inside the volume", vm.SubPath, prob)
						continue
					}
					sub = path.Clean(vm.SubPath)
					if sub == "." {
						sub = ""
					}
				}
				target := path.Clean(vm.MountPath)
				// An image volume is read-only whatever the mount says (KEP-4639).
				m := Mount{Source: p.Source, SubPath: sub, Target: target, ReadOnly: vm.ReadOnly || p.ReadOnly || p.Kind == "image", Volume: vm.Name, HostPath: p.outside()}
				if r := t.roots[c.Name]; r != nil {
					// Inside the container's own root: its own view, as on a node.
					if slices.ContainsFunc(r.Mounts, func(o Mount) bool { return o.Target == target }) {
						t.errorAt(where, ": %s is the mount point of two volumes of the container", target)
						continue
					}
					r.Mounts = append(r.Mounts, m)
					used[vm.Name] = true
					continue
				}
				if prev, dup := byTarget[target]; dup {
					if prev.Source != m.Source || prev.SubPath != m.SubPath {
						t.errorAt(where, ": %s is already the mount point of volume %q in another container; "+
							"the local pod has one filesystem view, so one path holds one volume", target, prev.Volume)
					}
					if prev.ReadOnly && !m.ReadOnly {
						prev.ReadOnly = false // writable for whoever needs it
						byTarget[target] = prev
					}
					continue
				}
				byTarget[target] = m
				used[vm.Name] = true
			}
		}
	}
	return used, byTarget
}

func (t *translator) volumeFiles(secret bool, name string, items []KeyToPath, defMode *int32, optional bool, where place) map[string]File {
	mode := os.FileMode(0o644)
	if defMode != nil {
		mode = os.FileMode(*defMode) & 0o777
	}
	data, ok := t.allKeys(secret, name)
	if !ok {
		if !optional {
			t.errorAt(where, ": %s %q not found (add it to the file, or pass --from-dir DIR holding DIR/%s/KEY files)", objKind(secret), name, name)
		}
		return nil
	}
	files := map[string]File{}
	if len(items) == 0 {
		// Each key is a file name: only keys the API server allows
		// (keys from --from-dir are file names, not checked by anyone).
		for k, v := range data {
			if prob := keyProblem(k); prob != "" {
				t.errorAt(where, ": %s %q: key %q %s, so it cannot be a file name in the volume (map it to a path with items)", objKind(secret), name, k, prob)
				continue
			}
			files[k] = File{Data: v, Mode: mode}
		}
		return files
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if !optional {
				t.errorAt(where, ": key %q not in %s %q", it.Key, objKind(secret), name)
			}
			continue
		}
		if prob := localPathProblem(it.Path, true); it.Path == "" || prob != "" {
			if it.Path == "" {
				prob = "is empty"
			}
			t.errorAt(where, ": items path %q %s: it must be a relative path inside the volume", it.Path, prob)
			continue
		}
		if it.User.Kind != 0 {
			t.warnf("%s: items user: ignored, the files belong to podvisor's user", where)
		}
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode) & 0o777
		}
		files[it.Path] = File{Data: v, Mode: m}
	}
	return files
}

// remap rewrites mount paths in s for --volume-root: each mount path that
// appears as a whole path component sequence gets the root in front.
func (b *builder) remap(s string) string {
	for _, target := range b.t.remapTargets {
		s = remapPath(s, target, filepath.Join(b.t.opts.VolumeRoot, target))
	}
	return s
}

func (b *builder) remapAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = b.remap(s)
	}
	return out
}

func remapPath(s, from, to string) string {
	var out strings.Builder
	for {
		i := strings.Index(s, from)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		end := i + len(from)
		beforeOK := i == 0 || !pathChar(s[i-1])
		afterOK := end == len(s) || s[end] == '/' || !pathChar(s[end])
		out.WriteString(s[:i])
		if beforeOK && afterOK {
			out.WriteString(to)
		} else {
			out.WriteString(from)
		}
		s = s[end:]
	}
}

func pathChar(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// placeVolumes places the volumes podvisor makes (all but hostPath ones)
// and the mounts of them under dir.
func placeVolumes(plans map[string]*VolumePlan, mounts []Mount, dir string) {
	for _, v := range plans {
		if !v.outside() {
			v.Source = filepath.Join(dir, v.Name)
		}
	}
	for i, m := range mounts {
		if !m.HostPath {
			mounts[i].Source = filepath.Join(dir, m.Volume)
		}
	}
}
