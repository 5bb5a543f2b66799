package main

import (
	"github.com/podvisor/podvisor/internal/app"
	"github.com/podvisor/podvisor/internal/config"
)

// The control socket's set-up lives in internal/app (control.go); kube play
// binds the socket before entering its mount namespace and hands it over to
// the run there with InheritedControlEnv.

const inheritedEnv = app.InheritedControlEnv

func controlPath(flagPath string, cfg *config.Config) (string, bool) {
	return app.ControlPath(flagPath, cfg)
}

func bindControlForNamespace(path string, explicit bool) (string, error) {
	return app.BindControlForNamespace(path, explicit)
}
