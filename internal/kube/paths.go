package kube

import (
	"fmt"
	"path"
	"strings"
)

// Checks of the manifest data that kube play turns into file paths, as the
// API server makes them (k8s.io/apimachinery validation and
// pkg/apis/core/validation): a manifest the API server would refuse is
// refused here too, so no key, name or path can lead out of the volume it
// belongs to. Each returns "" when the value is fine, else what is wrong.

// keyProblem checks a ConfigMap or Secret key (IsConfigMapKey): a file name
// of letters, digits, '-', '_' and '.', at most 253 bytes, not "." or "..",
// not starting with "..".
func keyProblem(k string) string {
	switch {
	case k == "":
		return "is empty"
	case len(k) > 253:
		return "is longer than 253 characters"
	case k == "." || k == "..":
		return "must not be '.' or '..'"
	case strings.HasPrefix(k, ".."):
		return "must not start with '..'"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Sprintf("has %q: a key is made of letters, digits, '-', '_' and '.' only", string(rune(c)))
		}
	}
	return ""
}

// localPathProblem checks a path that must stay inside a volume (subPath:
// validateLocalDescendingPath; items[].path with reserved true: also
// validateLocalNonReservedPath, so it cannot start with "..", where the
// kubelet keeps its own timestamped directories).
func localPathProblem(p string, reserved bool) string {
	switch {
	case strings.IndexByte(p, 0) >= 0:
		return "holds a NUL byte"
	case path.IsAbs(p):
		return "must be relative"
	case reserved && strings.HasPrefix(p, ".."):
		return "must not start with '..'"
	}
	return backstepProblem(p)
}

// backstepProblem checks that no element of p is ".." (mountPath,
// hostPath.path, and the two above: validatePathNoBacksteps).
func backstepProblem(p string) string {
	if strings.IndexByte(p, 0) >= 0 {
		return "holds a NUL byte"
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "must not contain '..'"
		}
	}
	return ""
}
