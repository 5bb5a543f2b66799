package importer

import (
	"path"
	"testing"
)

// FuzzS6Tree fuzzes the image-shaped s6 trees (testdata/s6-v3 and
// s6-runtime): the first byte picks a file (run, finish, timeout-kill,
// producer-for, consumer-for, pipeline-name, a bundle's contents.d, a
// cont-init.d script, s6-log's script...), the rest becomes its
// contents; with the first byte's high bit set it is also added as a new
// file of that file's directory, named by the next bytes (timeout-down,
// down-signal, notification-fd, log/run...). Whatever comes in, the
// result is a procs.yaml that checks, or a report that says what was not
// converted (checkConverted).
func FuzzS6Tree(f *testing.F) {
	var tree []Source
	for _, fx := range s6Fixtures {
		files, err := readS6([]string{fx.root}, fx.root)
		if err != nil {
			f.Fatal(err)
		}
		tree = append(tree, files...)
	}
	for i, src := range tree {
		f.Add(append([]byte{byte(i)}, src.Data...))
	}
	for _, extra := range []string{"timeout-down\x000", "down-signal\x00KILL", "timeout-kill\x00x", "finish\x00#!/bin/sh\nif [ $1 -ne 0 ]; then exit 125; fi", "log/run\x00exec s6-log n3 s100 ./main"} {
		f.Add(append([]byte{0x80}, extra...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		files := make([]Source, len(tree))
		copy(files, tree)
		i := int(data[0]&0x7f) % len(files)
		files[i] = Source{Path: files[i].Path, Data: data[1:]}
		if data[0]&0x80 != 0 {
			name, body := string(data[1:]), data[1:]
			for j, b := range data[1:] {
				if b == 0 {
					name, body = string(data[1:1+j]), data[2+j:]
					break
				}
			}
			files = append(files, Source{Path: path.Join(path.Dir(files[i].Path), name[:min(len(name), 40)]), Data: body})
		}
		m, r, err := ConvertS6(files, Options{})
		checkConverted(t, m, r, err)
	})
}
