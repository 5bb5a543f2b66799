package config

import "go.yaml.in/yaml/v3"

// MCP is the `mcp` key: what `podvisor mcp` (an agent's Model Context
// Protocol server, docs/api.md) may do to this podvisor's processes.
type MCP struct {
	// Actions lets an agent restart, stop, start and signal processes.
	// Off by default: an agent reads status, logs and the timeline only.
	Actions bool
}

var mcpKeys = []string{"actions"}

func (l *loader) mcp(n *yaml.Node, path *keyPath) MCP {
	var out MCP
	f, ok := l.fields(n, path, mcpKeys)
	if !ok {
		return out
	}
	if p, ok := f.get("actions"); ok {
		out.Actions, _ = l.boolean(p.val, path.field("actions"))
	}
	return out
}
