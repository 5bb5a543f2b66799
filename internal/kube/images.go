package kube

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Pods from their images (kube play --images podman, --image-root
// IMAGE=DIR): a container whose image is in Options.Images runs inside a
// root of its own built on the image's file system (imageroot_linux.go),
// with the image's configuration applied as the kubelet does. This file
// plans; imageroot_linux.go mounts.

// Image is an image kube play runs containers (or image volumes) from.
type Image struct {
	Ref string
	// Dir is the image's root file system, read-only for podvisor: an
	// unpacked tree (--image-root) or podman's mount of the image.
	Dir    string
	Config ImageConfig
	// Passwd and Group are the image's /etc/passwd and /etc/group (nil:
	// none), for a user named by the image's config.
	Passwd, Group []byte
	// Unmounted: the image was inspected, not mounted (kube play
	// --dry-run): Dir is a placeholder, and a user named in its config
	// is left as named, resolved when played.
	Unmounted bool
}

// ImageConfig is what an image's configuration says about running it (the
// OCI image config's config object).
type ImageConfig struct {
	Env        []string `json:"Env"`
	Entrypoint []string `json:"Entrypoint"`
	Cmd        []string `json:"Cmd"`
	WorkingDir string   `json:"WorkingDir"`
	User       string   `json:"User"`
}

// maxImageConfig bounds an image configuration file.
const maxImageConfig = 4 << 20

// ParseImageConfig reads an image's configuration: `podman image inspect`
// output (an array of one object whose Config holds it), one such object,
// or an OCI image config ({"config": {...}}; JSON keys match without
// regard to case). name is for messages.
func ParseImageConfig(name string, data []byte) (ImageConfig, error) {
	if len(data) > maxImageConfig {
		return ImageConfig{}, fmt.Errorf("%s: larger than %d bytes", name, maxImageConfig)
	}
	type wrapped struct {
		Config *ImageConfig `json:"config"`
	}
	data = bytes.TrimSpace(data)
	var one wrapped
	if len(data) > 0 && data[0] == '[' {
		var many []wrapped
		if err := json.Unmarshal(data, &many); err != nil {
			return ImageConfig{}, fmt.Errorf("%s: %w", name, err)
		}
		if len(many) != 1 {
			return ImageConfig{}, fmt.Errorf("%s: want one image, found %d", name, len(many))
		}
		one = many[0]
	} else if err := json.Unmarshal(data, &one); err != nil {
		return ImageConfig{}, fmt.Errorf("%s: %w (want an OCI image config or `podman image inspect` output)", name, err)
	}
	if one.Config == nil {
		return ImageConfig{}, nil // an image without a config runs with the defaults
	}
	c := *one.Config
	for _, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return ImageConfig{}, fmt.Errorf("%s: Env entry %q is not KEY=VALUE", name, kv)
		}
	}
	return c, nil
}

// defaultPath is the PATH a container runtime gives a container whose
// image and spec set none (containerd's and podman's default).
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// imageArgv is a container's command line from its image, by Kubernetes'
// rules: command replaces the Entrypoint (and the image's Cmd is then
// dropped), args replace the Cmd.
func imageArgv(c *Container, img *Image) (entry, args []string) {
	if len(c.Command) > 0 {
		return c.Command, c.Args
	}
	entry = img.Config.Entrypoint
	args = img.Config.Cmd
	if len(c.Args) > 0 {
		args = c.Args
	}
	return entry, args
}

// imageUser resolves an image config's User ("uid", "uid:gid", "name",
// "name:group") to "uid:gid" from the image's own /etc/passwd and
// /etc/group, as a runtime does; a uid without an entry gets gid 0.
func imageUser(img *Image) (string, error) {
	u := img.Config.User
	if u == "" {
		return "", nil
	}
	user, group, hasGroup := strings.Cut(u, ":")
	uid, gid := int64(-1), int64(0)
	if n, err := strconv.ParseInt(user, 10, 32); err == nil && n >= 0 {
		uid = n
		if e, ok := lookupEntry(img.Passwd, func(f []string) bool { return f[2] == user }); ok {
			gid, _ = strconv.ParseInt(e[3], 10, 32)
		}
	} else if img.Unmounted {
		return u, nil
	} else if e, ok := lookupEntry(img.Passwd, func(f []string) bool { return f[0] == user }); ok {
		uid, _ = strconv.ParseInt(e[2], 10, 32)
		gid, _ = strconv.ParseInt(e[3], 10, 32)
	} else {
		return "", fmt.Errorf("user %q of image %s: not in the image's /etc/passwd", user, img.Ref)
	}
	if hasGroup {
		if n, err := strconv.ParseInt(group, 10, 32); err == nil && n >= 0 {
			gid = n
		} else if e, ok := lookupEntry(img.Group, func(f []string) bool { return f[0] == group }); ok {
			gid, _ = strconv.ParseInt(e[2], 10, 32)
		} else {
			return "", fmt.Errorf("group %q of image %s: not in the image's /etc/group", group, img.Ref)
		}
	}
	return fmt.Sprintf("%d:%d", uid, gid), nil
}

// imageHome is the home directory of uid in the image's /etc/passwd, or /.
func imageHome(img *Image, uid string) string {
	if e, ok := lookupEntry(img.Passwd, func(f []string) bool { return f[2] == uid }); ok && strings.HasPrefix(e[5], "/") {
		return e[5]
	}
	return "/"
}

// lookupEntry returns the first line of a passwd or group file whose
// fields (at least 4, or 7 for passwd-shaped matches) satisfy match.
func lookupEntry(file []byte, match func([]string) bool) ([]string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(file))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		for len(f) < 7 {
			f = append(f, "")
		}
		if match(f) {
			return f, true
		}
	}
	return nil, false
}

// ParseImageConfigs reads `podman image inspect --format json` output for
// want images, in the order asked.
func ParseImageConfigs(name string, data []byte, want int) ([]ImageConfig, error) {
	if len(data) > maxImageConfig*4 {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxImageConfig*4)
	}
	var many []json.RawMessage
	if err := json.Unmarshal(data, &many); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(many) != want {
		return nil, fmt.Errorf("%s: want %d images, found %d", name, want, len(many))
	}
	out := make([]ImageConfig, len(many))
	for i, raw := range many {
		c, err := ParseImageConfig(name, raw)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
