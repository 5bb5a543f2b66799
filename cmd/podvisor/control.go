package main

import (
	"github.com/podvisor/podvisor/client"
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

// controlClient is the client for the control socket at path (a command's
// --control flag): the one place a command turns the flag into a
// connection, so that another way of naming the podvisor (a pod's socket)
// plugs in here.
func controlClient(path string) *client.Client {
	c, err := client.New(client.Options{Socket: path})
	if err != nil { // an empty path: the flag's default is never empty
		panic(err)
	}
	return c
}

// httpClient is the client for the HTTP port at addr (a command's --addr).
func httpClient(addr string) (*client.Client, error) {
	return client.New(client.Options{Addr: addr})
}
