package importer

// What process-compose does with a file that looks incomplete, translated
// as it does it (issue 37): a process without a command, disabled
// processes, and the `or` of a Go template over an environment variable
// and a var. (disable_env_expansion is pcConv.str.)

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pcDisabled reports whether process-compose leaves the process of body
// stopped until it is started by hand (disabled: true, or is_disabled).
func pcDisabled(body *yaml.Node) bool {
	for _, k := range []string{"disabled", "is_disabled"} {
		if b, _ := parseBool(strings.TrimSpace(scalar(get(body, k)))); b {
			return true
		}
	}
	return false
}

// disabledProfile puts a disabled process in the profile "disabled":
// podvisor run leaves it stopped, as process-compose does, and it starts
// by hand (podvisor start NAME, or run --profile disabled) as it does from
// process-compose's UI or `process start`.
func (c *pcConv) disabledProfile(p *Process, key *yaml.Node) {
	p.Profiles = append(p.Profiles, "disabled")
	c.r.AsIs(c.pos(key), key.Value+".disabled (profiles: [disabled]: not started by podvisor run; podvisor start "+p.Name+" starts it, as process-compose's process start)")
}

// noCommand converts a process without command: or entrypoint:.
// process-compose then runs its shell with no arguments (the process's
// executable is the shell, no -c), which reads its empty stdin and exits 0
// at once (src/types/process.go, AssignProcessExecutableAndArgs); /bin/sh,
// with stdin on /dev/null, does the same.
func (c *pcConv) noCommand(p *Process, key *yaml.Node) {
	p.Command, p.Shell = []string{"/bin/sh"}, false
	note(p, c.r, c.pos(key), "command", "no command: process-compose runs its shell with no arguments, which reads an empty stdin and exits 0 at once; so does /bin/sh here (a key process-compose does not know, such as compose:, does nothing)")
}

// pcOr renders the action `or ARG...` of a Go template, ARG a string
// literal or .NAME, as text/template does: the first non-empty argument,
// else the last. process-compose has expanded ${VAR} in the file before it
// renders templates, so a literal "${VAR}" is VAR's value at load: it
// becomes podvisor's ${VAR:-REST}, REST what the arguments after it give
// (with no ${ or } of its own). ok is false for any other action.
func pcOr(action string, vars map[string]string) (string, bool) {
	rest, found := strings.CutPrefix(action, "or ")
	if !found {
		return "", false
	}
	args, ok := pcTemplateArgs(rest, vars)
	if !ok || len(args) == 0 {
		return "", false
	}
	return pcOrArgs(args)
}

// pcArg is an evaluated argument of a template action; missing: a .NAME
// not in vars, empty to or, "<no value>" when printed.
type pcArg struct {
	v       string
	missing bool
}

// pcOrArgs is pcOr over evaluated arguments.
func pcOrArgs(args []pcArg) (string, bool) {
	for i, arg := range args {
		a := arg.v
		if arg.missing && i == len(args)-1 {
			return "<no value>", true
		}
		name, dynamic := pcWholeVar(a)
		if !dynamic {
			if a != "" || i == len(args)-1 {
				if strings.Contains(a, "${") {
					return "", false
				}
				return a, true
			}
			continue
		}
		if i == len(args)-1 {
			return a, true
		}
		def, ok := pcOrArgs(args[i+1:])
		if !ok || strings.ContainsAny(def, "$}") {
			return "", false
		}
		return "${" + name + ":-" + def + "}", true
	}
	return "", false
}

// pcWholeVar reports whether s is exactly ${NAME}.
func pcWholeVar(s string) (string, bool) {
	inner, ok := strings.CutPrefix(s, "${")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "}")
	return inner, ok && validEnvName(inner)
}

func validEnvName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isEnvNameByte(s[i]) {
			return false
		}
	}
	return true
}

// pcTemplateArgs splits the arguments of a template action: Go string
// literals ("..." or `...`) and .NAME (its var, or missing).
func pcTemplateArgs(s string, vars map[string]string) ([]pcArg, bool) {
	var out []pcArg
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		switch {
		case s[0] == '"' || s[0] == '`':
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, false
			}
			v, err := strconv.Unquote(q)
			if err != nil {
				return nil, false
			}
			out = append(out, pcArg{v: v})
			s = s[len(q):]
			if s != "" && s[0] != ' ' && s[0] != '\t' { // text/template wants a space between arguments
				return nil, false
			}
		case s[0] == '.':
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			name := s[1:end]
			if !validEnvName(name) {
				return nil, false
			}
			v, ok := vars[name]
			out = append(out, pcArg{v: v, missing: !ok})
			s = s[end:]
		default:
			return nil, false
		}
	}
	return out, true
}

// errTemplate is the error for an action pcRender does not evaluate.
func errTemplate(action string) error {
	return fmt.Errorf("{{%s}}: only {{.NAME}} and {{or ...}} of string literals, ${VAR} and .NAME are rendered; write the value", action)
}
