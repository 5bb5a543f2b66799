package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
)

// controlShutdown bounds how long exit waits for control clients (a
// `podvisor logs -f` follower is cut off then).
const controlShutdown = time.Second

// controlPath picks the control socket path for `run`: the --control flag,
// else the config's control:, else $PODVISOR_CONTROL, else the default for
// this user. explicit is false only for the default.
func controlPath(flagPath string, cfg *config.Config) (path string, explicit bool) {
	switch {
	case flagPath != "":
		return flagPath, true
	case cfg.Control != "":
		return cfg.Control, true
	case os.Getenv("PODVISOR_CONTROL") != "":
		return os.Getenv("PODVISOR_CONTROL"), true
	}
	return control.DefaultPath(os.Geteuid(), os.Getenv), false
}

// startControl binds the control socket and serves it for backend. It
// returns a function that stops serving and removes the socket. An error is
// returned only when the socket was asked for explicitly: podvisor must not
// fail to start because the default place is read-only or another podvisor
// already answers there; it then runs without a control socket and says so.
func startControl(path string, explicit bool, backend control.Backend, log *slog.Logger) (func(), error) {
	if path == control.Off {
		log.Info("control socket disabled")
		return func() {}, nil
	}
	ln, err := control.Listen(path)
	if err != nil {
		if explicit {
			return nil, err
		}
		hint := "set control: in the config (or --control) to a writable path"
		if errors.Is(err, control.ErrInUse) {
			hint = "set control: (or --control) to give this podvisor its own socket"
		}
		log.Warn(fmt.Sprintf("running without a control socket: %v; %s", err, hint))
		return func() {}, nil
	}
	srv := control.NewServer(backend, log)
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Error("control socket", "err", err)
		}
	}()
	log.Info("control socket ready", "path", path)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), controlShutdown)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
