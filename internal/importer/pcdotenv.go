package importer

import (
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// process-compose reads the .env file of its directory (godotenv.Read) and
// expands $VAR and ${VAR} in the file from it first, then from its
// environment (src/loader/loader.go); its processes get the .env's
// variables under its environment, then the file's environment: entries
// (src/app/environment.go). The import keeps both: a variable the .env
// defines is put in the file's strings with the .env's value, and a global
// env entry ${VAR:-value} (podvisor's environment when set, else the
// .env's) hands it to every process, before the file's own entries.

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

// withDotenv puts the .env's value of VAR in place of every ${VAR} and
// ${VAR:-...} of s (podvisor's interpolation, as pcString writes it), as
// process-compose's loader expands the file: the .env first, then its
// environment. (Its processes' environment is the other way round: the
// global env entries keep ${VAR:-value}.)
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
		if v, ok := c.dotenv[name]; ok && (def == "" || v != "") {
			// process-compose's expander takes the .env's value first,
			// before its environment (src/loader/loader.go)
			b.WriteString(v)
		} else {
			b.WriteString(s[:end+1])
		}
		s = s[end+1:]
	}
}

// str is pcString with the .env's defaults.
// With disable_env_expansion every $ is text, process-compose's $$ too.
func (c *pcConv) str(s string) string {
	if c.literal {
		return strings.ReplaceAll(s, "$", "$$")
	}
	return c.withDotenv(pcString(s))
}
