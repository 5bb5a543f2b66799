package config

import "go.yaml.in/yaml/v3"

// UI is the `ui` key: the web page on the HTTP listener (docs/ui.md).
type UI struct {
	// Enabled serves the page at / and /events' consumers; default true.
	// Without an HTTP listener (listen: off) there is no page either.
	Enabled bool
	// Actions accepts restart, stop, start, signal and reload over HTTP,
	// from a client that presents the token in TokenFile. Never without.
	Actions bool
	// TokenFile is the absolute path of the file holding the bearer token.
	// It is read when podvisor starts, not at load: the config holds no
	// secret, and `podvisor check` needs no access to it.
	TokenFile string
	// Logs serves the processes' recent output to the page. Off by
	// default: output may hold secrets, and the HTTP port is read-only.
	Logs bool
}

var uiKeys = []string{"actions", "token_file", "logs"}

// ui decodes `ui: true|false` or `ui: {actions, token_file, logs}`.
func (l *loader) ui(n *yaml.Node, path *keyPath) UI {
	out := UI{Enabled: true}
	if n.Kind != yaml.MappingNode {
		out.Enabled, _ = l.boolean(n, path)
		return out
	}
	f, ok := l.fields(n, path, uiKeys)
	if !ok {
		return out
	}
	if p, ok := f.get("actions"); ok {
		out.Actions, _ = l.boolean(p.val, path.field("actions"))
	}
	if p, ok := f.get("token_file"); ok {
		out.TokenFile = l.path(p.val, path.field("token_file"))
	}
	if p, ok := f.get("logs"); ok {
		out.Logs, _ = l.boolean(p.val, path.field("logs"))
	}
	if out.Actions && out.TokenFile == "" {
		l.errorf(n, path.field("actions"), "actions need a token_file").Hint =
			"put a random token in a file only podvisor's user can read (chmod 600) and name it in ui.token_file"
	}
	return out
}
