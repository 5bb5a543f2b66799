package importer

import (
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// process-compose loads the .env file of its directory into its own
// environment before it expands $VAR and ${VAR} in the file, without
// overriding variables already set (godotenv), and its processes inherit
// that environment. The import keeps that meaning with podvisor's own
// interpolation: a variable the .env defines is read as ${VAR:-value} (the
// environment's value when set, else the file's), in the file's strings and
// in a global env entry that hands it to every process; the file's own
// environment: entries come later and win, as they do in process-compose.

// readDotenv parses the .env beside a process-compose file into c.dotenv
// and its global env entries (in file order). A value that cannot be an
// interpolation default (it holds a $, { or }) is passed as it is,
// overriding podvisor's environment: said in the report.
func (c *pcConv) readDotenv(src *Source) error {
	if src == nil {
		return nil
	}
	vars, err := config.ParseEnvFile(src.Path, src.Data)
	if err != nil {
		return &ParseError{Pos: src.Path, Msg: err.Error()}
	}
	c.dotenv = map[string]string{}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(v, "${}") {
			c.dotenvEnv = append(c.dotenvEnv, envEntry(k, config.Literal(v)))
			c.r.Approx(src.Path, k, "its value holds $, { or }, so it is passed to every process as it is, even when podvisor's environment sets "+k+" (process-compose keeps the environment's value); ${"+k+"} in the file reads podvisor's environment only")
			continue
		}
		c.dotenv[k] = v
		c.dotenvEnv = append(c.dotenvEnv, envEntry(k, "${"+k+":-"+v+"}"))
	}
	c.r.AsIs(src.Path, ".env (loaded as process-compose loads it: ${VAR:-value} where the file reads a variable it defines, and every process's environment)")
	return nil
}

// globalEnv puts the .env's entries before the file's global environment:
// an entry both define is the file's.
func (c *pcConv) globalEnv() {
	if len(c.dotenvEnv) == 0 {
		return
	}
	own := map[string]bool{}
	for _, kv := range c.m.Env {
		k, _, _ := strings.Cut(kv, "=")
		own[k] = true
	}
	var env []string
	for _, kv := range c.dotenvEnv {
		if k, _, _ := strings.Cut(kv, "="); !own[k] {
			env = append(env, kv)
		}
	}
	c.m.Env = append(env, c.m.Env...)
}

// withDotenv gives every ${VAR} and ${VAR:-} of s (podvisor's interpolation,
// as pcString and pcShell write it) the .env's value of VAR as its default.
func (c *pcConv) withDotenv(s string) string {
	if len(c.dotenv) == 0 || !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i+1 == len(s) {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		if s[1] == '$' {
			b.WriteString("$$")
			s = s[2:]
			continue
		}
		end := strings.IndexByte(s, '}')
		if s[1] != '{' || end < 0 {
			b.WriteByte('$')
			s = s[1:]
			continue
		}
		name, def, _ := strings.Cut(s[2:end], ":-")
		if v, ok := c.dotenv[name]; ok && def == "" {
			b.WriteString("${" + name + ":-" + v + "}")
		} else {
			b.WriteString(s[:end+1])
		}
		s = s[end+1:]
	}
}

// str is pcString with the .env's defaults.
func (c *pcConv) str(s string) string { return c.withDotenv(pcString(s)) }
