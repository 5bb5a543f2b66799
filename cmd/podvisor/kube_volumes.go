package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/podvisor/podvisor/internal/kube"
)

// kubeStateDir is where kube play keeps what outlives a run: the records
// of mount points (as root) and the claims' directories. $PODVISOR_KUBE_STATE
// wins; else kube.DefaultStateDir as root, $XDG_STATE_HOME/podvisor/kube-play
// or ~/.local/state/podvisor/kube-play otherwise (docs/kubernetes.md,
// "Volumes").
func kubeStateDir() string {
	if d := os.Getenv(kubeStateEnv); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return kube.DefaultStateDir
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "podvisor", "kube-play")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "podvisor", "kube-play")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("podvisor-%d", os.Geteuid()), "kube-play")
}

// claimPaths lists the claims' directories among the planned volumes.
func claimPaths(vols []*kube.VolumePlan) []string {
	var out []string
	for _, v := range vols {
		if v.Kind == "persistentVolumeClaim" {
			out = append(out, v.Source)
		}
	}
	return out
}

// removeClaims removes the claims' directories (--volumes), saying what
// it removed; exitFail when one could not be.
func removeClaims(cmd string, paths []string, stderr io.Writer) int {
	removed, errs := kube.RemoveClaims(kube.ClaimsDir(kubeStateDir()), paths)
	if len(removed) > 0 {
		fmt.Fprintf(stderr, "podvisor %s: removed the claims' data: %s\n", cmd, strings.Join(removed, ", "))
	}
	for _, err := range errs {
		fmt.Fprintf(stderr, "podvisor %s: %v\n", cmd, err)
	}
	if len(errs) > 0 {
		return exitFail
	}
	return exitOK
}
