package importer

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// s6Places are where s6-overlay looks for what it runs, under the root
// of an image.
var s6Places = []string{"etc/s6-overlay", "etc/cont-init.d", "etc/services.d", "etc/cont-finish.d"}

// readS6 reads the s6 trees at paths. An s6-rc.d directory brings its
// parent s6-overlay directory (the scripts its up files name live beside
// it). Without root the files keep the paths they have here; with root
// (import --root) a path is the image's, absolute (/etc/s6-overlay) or
// given as a directory under root here, the files are read under root
// only (no symbolic link or ".." leads out of it) and named by the
// image's paths, so that the scripts and service directories written are
// those the image has. An image's root itself reads the places s6-overlay
// reads.
func readS6(paths []string, root string) ([]Source, error) {
	var files []Source
	for _, p := range paths {
		if root == "" {
			if filepath.Base(filepath.Clean(p)) == "s6-rc.d" {
				p = filepath.Dir(filepath.Clean(p))
			}
			more, err := readTree(p)
			if err != nil {
				return nil, err
			}
			files = append(files, more...)
			continue
		}
		rel, err := imagePath(p, root)
		if err != nil {
			return nil, err
		}
		more, err := readUnderRoot(root, rel)
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	return files, nil
}

// imagePath returns p as a path relative to the image's root ("." for
// the root): a path under root here, else an absolute path of the image.
func imagePath(p, root string) (string, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", &ParseError{Pos: root, Msg: err.Error()}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", &ParseError{Pos: p, Msg: err.Error()}
	}
	var rel string
	switch {
	case abs == absRoot:
		rel = "."
	case strings.HasPrefix(abs, absRoot+string(filepath.Separator)):
		rel = strings.TrimPrefix(abs, absRoot+string(filepath.Separator))
	case filepath.IsAbs(p):
		r, err := underRoot(root, p)
		if err != nil {
			return "", err
		}
		rel = r
	default:
		return "", &ParseError{Pos: p, Msg: fmt.Sprintf("not under --root %s: give the image's path (/etc/s6-overlay) or a directory under %s", root, root)}
	}
	rel = filepath.ToSlash(rel)
	if path.Base(rel) == "s6-rc.d" {
		rel = path.Dir(rel)
	}
	return rel, nil
}

// readUnderRoot reads every regular file under rel (the image's places
// for "."), through an os.Root so that nothing outside root is read; a
// symbolic link that leads out of root (or an absolute one) is kept as an
// empty entry, as dependencies.d and contents.d links only count by name.
func readUnderRoot(root, rel string) ([]Source, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, &ParseError{Pos: root, Msg: fmt.Sprintf("cannot open --root: %v", unwrapPath(err))}
	}
	defer r.Close()
	fsys := r.FS()
	starts := []string{rel}
	if rel == "." {
		starts = nil
		for _, p := range s6Places {
			if st, err := fs.Stat(fsys, p); err == nil && st.IsDir() {
				starts = append(starts, p)
			}
		}
	}
	var out []Source
	for _, start := range starts {
		err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
			name := "/" + p
			if err != nil {
				return &ParseError{Pos: name, Msg: fmt.Sprintf("cannot read under --root %s: %v", root, unwrapPath(err))}
			}
			if d.IsDir() {
				return nil
			}
			if len(out) >= maxTreeFiles {
				return &ParseError{Pos: "/" + start, Msg: fmt.Sprintf("more than %d files", maxTreeFiles)}
			}
			if !d.Type().IsRegular() {
				st, err := fs.Stat(fsys, p) // follows links inside root only
				if d.Type()&fs.ModeSymlink == 0 || err != nil || !st.Mode().IsRegular() {
					out = append(out, Source{Path: name})
					return nil
				}
			}
			f, err := r.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return &ParseError{Pos: name, Msg: fmt.Sprintf("cannot read under --root %s: %v", root, unwrapPath(err))}
			}
			defer f.Close()
			src, err := readOpen(f, name)
			if err != nil {
				return err
			}
			out = append(out, src)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// s6DetectPaths returns the paths whose format Detect should judge: with
// --root, the first path is judged where it is under root.
func s6DetectPaths(paths []string, root string) []string {
	if root == "" || len(paths) == 0 {
		return paths
	}
	out := append([]string{}, paths...)
	if rel, err := imagePath(paths[0], root); err == nil {
		out[0] = filepath.Join(root, filepath.FromSlash(rel))
	}
	return out
}
