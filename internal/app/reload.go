package app

import "github.com/podvisor/podvisor/internal/config"

// reload applies a reloaded config to what the supervisor does not own. It
// is called from the supervisor's loop (supervisor.Options.OnReload).
func (r *run) reload(c *config.Config) {
	r.current.Store(c)
	r.sockets.Retain(c)
	r.fdStore.Retain(c)
	go reserveFDs(c, r.log) // a reload may add processes
	go r.cgroups.Plan(c.Processes)
	files := map[string]bool{}
	for _, p := range c.Processes {
		for _, f := range p.Log.Files() {
			files[f] = true
		}
	}
	r.sink.RetainFiles(func(path string) bool { return files[path] })
	r.tails.SetMaxLines(c.Log.Tail)
	if r.opts.LogFormat == "" { // a --log-format flag outranks the file
		r.sink.SetFormat(c.Log.Format, c.Log.Timestamps)
	}
	r.hosts.Set(c.ListenHosts)
	if r.opts.Listen == "" { // a --listen flag outranks the file
		r.web.apply(c.Listen)
	}
}
