//go:build !podvisor_notui

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"

	"github.com/podvisor/podvisor/internal/tui"
	"github.com/podvisor/podvisor/internal/webui"
)

// cmdUI runs the terminal UI until q or Ctrl-C.
func cmdUI(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ui", stderr)
	path, httpURL, tokenFile := uiFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor ui: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *tokenFile != "" && *httpURL == "" {
		fmt.Fprintln(stderr, "podvisor ui: --token-file goes with --http (the control socket needs no token)")
		return exitUsage
	}
	var src tui.Source = tui.ControlSource{C: controlClient(*path)}
	if *httpURL != "" {
		u, err := url.Parse(*httpURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fmt.Fprintf(stderr, "podvisor ui: --http wants a URL such as http://127.0.0.1:9464, not %q\n", *httpURL)
			return exitUsage
		}
		hs := tui.HTTPSource{Base: u, Client: &http.Client{}}
		if *tokenFile != "" {
			tok, err := webui.ReadToken(*tokenFile)
			if err != nil {
				fmt.Fprintf(stderr, "podvisor ui: %v\n", err)
				return exitFail
			}
			hs.Token = string(tok)
		}
		src = hs
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer cancel()
	// Fail before taking over the screen when nothing answers.
	probe, err := src.Events(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor ui: %v\n", err)
		return exitFail
	}
	probe.Close()
	_, noColor := os.LookupEnv("NO_COLOR")
	m := tui.New(ctx, src, !noColor)
	if *httpURL == "" {
		self, err := os.Executable()
		if err == nil {
			m.Attach = func(name string) *exec.Cmd { return exec.Command(self, "attach", "--control", *path, name) }
		}
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithOutput(stdout))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "podvisor ui: %v\n", err)
		return exitFail
	}
	return exitOK
}
