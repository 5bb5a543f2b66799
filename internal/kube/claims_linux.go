package kube

import (
	"fmt"
	"os"
	"path/filepath"
)

// makeClaim makes a claim's directory, CLAIMS/NAMESPACE/CLAIM (ClaimPath),
// if it is missing: the claims directory and the namespace's are podvisor's
// own (0700); the claim's is 0777, as an emptyDir, and keeps what it holds.
// Neither element follows a symlink.
func makeClaim(src string) error {
	nsDir := filepath.Dir(src)
	claims := filepath.Dir(nsDir)
	if err := os.MkdirAll(claims, 0o700); err != nil {
		return err
	}
	if err := mkdirBeneath(claims, filepath.Base(nsDir), 0o700); err != nil {
		return err
	}
	return mkdirBeneath(nsDir, filepath.Base(src), 0o777)
}

// RemoveClaims removes the claims' directories (kube down --volumes), each
// a path ClaimPath made under claimsDir; it refuses any other path.
func RemoveClaims(claimsDir string, paths []string) (removed []string, errs []error) {
	for _, p := range paths {
		rel, err := filepath.Rel(claimsDir, p)
		ns, claim := filepath.Split(rel)
		if err != nil || filepath.Join(claimsDir, rel) != p {
			errs = append(errs, fmt.Errorf("claim %s: not in %s", p, claimsDir))
			continue
		}
		if _, err := ClaimPath(claimsDir, filepath.Clean(ns), claim); err != nil {
			errs = append(errs, fmt.Errorf("claim %s: %w", p, err))
			continue
		}
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("claim %s: %w", p, err))
			continue
		}
		removed = append(removed, p)
	}
	return removed, errs
}
