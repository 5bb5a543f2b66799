package importer

// A depends_on entry naming a process that is neither in the file nor in
// the file it extends (issue 37). process-compose given this one file
// refuses it ("dependency process ... is not defined"), but such files are
// rarely run alone: devbox merges in the process-compose.yaml of each
// plugin a project uses (its postgresql plugin adds a process named
// postgresql), and `process-compose -f a.yaml -f b.yaml` merges files. As
// the s6 import does for a base image's service, the dependency is left
// out, said in the file's header and the report with where it may come
// from, and the process starts without waiting for it.
//
// A name one or two edits away from a process of the file is much more
// likely a typo than a process from elsewhere: that is refused, as
// process-compose refuses it, with the name it probably means. A process
// whose every dependency is unknown still converts: that is the usual
// shape of the case (a devbox web process that depends only on the
// plugin's database), and refusing it would refuse the whole file.

import (
	"slices"

	"github.com/podvisor/podvisor/internal/config"
)

// pcDevboxPlugins maps a process name that one of devbox's built-in
// plugins adds to its process-compose file to that plugin.
var pcDevboxPlugins = map[string]string{
	"postgresql": "postgresql",
	"redis":      "redis",
	"mysql":      "mysql",
	"mariadb":    "mariadb",
	"nginx":      "nginx",
	"php-fpm":    "php",
	"apache":     "apache",
	"caddy":      "caddy",
	"valkey":     "valkey",
}

// unknownDep handles the dependency dep of what (at pos) that names no
// process of the file: refused when it is close to one (a typo), else left
// out and said.
func (c *pcConv) unknownDep(pos, what, dep string) {
	names := make([]string, 0, len(c.procs))
	for n := range c.procs {
		names = append(names, n)
	}
	slices.Sort(names)
	if s := config.Suggest(dep, names); s != "" {
		c.r.Fail(pos, what+"."+dep, "no process named "+dep+" in this file; did you mean "+s+"? (process-compose refuses it too)")
		return
	}
	from := "another file merged with this one (process-compose -f a.yaml -f b.yaml)"
	if plugin, ok := pcDevboxPlugins[dep]; ok {
		from = "devbox's " + plugin + " plugin, which adds a process named " + dep + ", or " + from
	}
	c.r.Approx(pos, what+"."+dep, "no process named "+dep+" in this file: left out, so the process starts without waiting for it (process-compose given this file alone refuses it); it probably comes from "+from+": add it to this file, or import the merged configuration, to keep the dependency")
}
