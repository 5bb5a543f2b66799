package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
)

// RunTool runs a tool podvisor itself needs (kube play asks podman for
// images) to completion and returns its stdout, and its stderr in the
// error when it fails. It waits for its child itself, so it must only be
// called while no Reaper runs in this process (before a run starts, or
// after it ended): a Reaper would take the exit status. extra become fds
// 3, 4, ... in the child.
func RunTool(ctx context.Context, argv []string, extra ...*os.File) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.ExtraFiles = extra
	if err := cmd.Run(); err != nil {
		msg := bytes.TrimSpace(errb.Bytes())
		if len(msg) > 2000 {
			msg = msg[:2000]
		}
		return out.Bytes(), fmt.Errorf("%s: %w: %s", argv[0], err, msg)
	}
	return out.Bytes(), nil
}
