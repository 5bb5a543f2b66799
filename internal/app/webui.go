package app

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/webui"
)

// webUI builds the page's handler from the config's ui key: the token, if
// actions are on, is read now, so a bad token file fails the start.
func webUI(cfg *config.Config, backend control.Backend, status func() server.Status, tl server.TimelineSource, log *slog.Logger) (http.Handler, error) {
	tok, err := UIToken(cfg)
	if err != nil {
		return nil, err
	}
	return webui.New(webui.Options{Backend: backend, Status: status, Logs: cfg.UI.Logs, Timeline: tl, Logger: log, Token: tok}), nil
}

// UIToken reads the token of the page's actions (nil when they are off).
// run and check both call it, so check refuses exactly the token files run
// refuses, in the same words.
func UIToken(cfg *config.Config) ([]byte, error) {
	if !cfg.UI.Enabled || !cfg.UI.Actions {
		return nil, nil
	}
	tok, err := webui.ReadToken(cfg.UI.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("%s ui.token_file: %w", cfg.File, err)
	}
	return tok, nil
}
