package main

import (
	"log/slog"
	"net/http"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/webui"
)

// webUI builds the page's handler from the config's ui key: the token, if
// actions are on, is read now, so a bad token file fails the start.
func webUI(c config.UI, backend control.Backend, tl server.TimelineSource, log *slog.Logger) (http.Handler, error) {
	o := webui.Options{Backend: backend, Logs: c.Logs, Timeline: tl, Logger: log}
	if c.Actions {
		tok, err := webui.ReadToken(c.TokenFile)
		if err != nil {
			return nil, err
		}
		o.Token = tok
	}
	return webui.New(o), nil
}
