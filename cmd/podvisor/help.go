package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// dispatch runs the command args name, handling what every command shares:
// --help, unknown commands and unknown flags (with a suggestion, exit 2).
func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := commands
	cmd, rest, ok := findCommand(cmds, args)
	if !ok {
		if group := groupOf(cmds, args[0]); len(group) > 0 {
			return dispatchGroup(args, group, stdout, stderr)
		}
		fmt.Fprintf(stderr, "podvisor: unknown command %q%s\nRun 'podvisor help' for the list of commands.\n",
			args[0], suggestion(args[0], commandNames(), ""))
		return exitUsage
	}
	flagPart := rest
	if cmd.flagArgs != nil {
		flagPart = cmd.flagArgs(rest)
	}
	if wantsHelp(flagPart) {
		writeCommandHelp(stdout, cmd)
		return exitOK
	}
	if msg := flagProblem(cmd, flagPart); msg != "" {
		fmt.Fprintf(stderr, "podvisor %s: %s\nRun 'podvisor %s --help' for usage.\n", cmd.name, msg, cmd.name)
		return exitUsage
	}
	return cmd.run(rest, stdout, stderr)
}

// findCommand matches the longest command name (one or two words) at the
// start of args.
func findCommand(cmds []command, args []string) (command, []string, bool) {
	best, n := -1, 0
	for i, c := range cmds {
		words := strings.Fields(c.name)
		if len(words) > n && len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			best, n = i, len(words)
		}
	}
	if best < 0 {
		return command{}, nil, false
	}
	return cmds[best], args[n:], true
}

// wantsHelp reports whether a help flag appears among the flags (before a
// "--"). It is checked before the command parses anything, so help never
// has side effects.
func wantsHelp(flagPart []string) bool {
	for _, a := range flagPart {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// flagProblem parses the flags with the command's own definitions, flags
// between and after positional arguments included (as the commands that
// take arguments parse them), and returns the message for the first flag
// the command cannot take: an unknown flag (with a suggestion), a bad value
// (naming what is expected, with an example) or a missing value. The
// command's own parsing then never fails, so Go's raw flag error and usage
// dump are never shown.
func flagProblem(cmd command, flagPart []string) string {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	_, err := parseInterleaved(fs, flagPart)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return ""
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return fmt.Sprintf("unknown flag %s%s", dashed(name), suggestion(name, names, "flag"))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name = strings.TrimLeft(name, "-")
		want, example := flagExpects(fs.Lookup(name))
		if want == "" {
			return fmt.Sprintf("%s needs a value, such as %s", dashed(name), example)
		}
		return fmt.Sprintf("%s needs a value: %s, such as %s", dashed(name), want, example)
	}
	if m := badValue().FindStringSubmatch(msg); m != nil {
		value, _ := strconv.Unquote(m[1])
		name, why := m[2], m[3]
		want, example := flagExpects(fs.Lookup(name))
		if want == "" {
			// A flag with its own parser explains itself.
			return fmt.Sprintf("invalid value %q for %s: %s", value, dashed(name), why)
		}
		return fmt.Sprintf("invalid value %q for %s: want %s, such as %s", value, dashed(name), want, example)
	}
	return msg
}

// badValue matches the flag package's error for a value its parser refused.
var badValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([^:]+): (.*)$`)
})

// flagExpects describes the values a flag takes, from the type of its
// value, with an example of the flag given right (--timeout 5s). For a
// string flag or one of its own type, want is "" (its parser explains a bad
// value itself) and the example shows its argument as help names it
// (-c FILE, --image-command IMAGE=CMD).
func flagExpects(f *flag.Flag) (want, example string) {
	if f == nil {
		return "", "VALUE"
	}
	arg, _ := flag.UnquoteUsage(f)
	if arg == "" || arg == "value" || arg == "string" {
		arg = "VALUE"
	}
	with := func(v string) string { return dashed(f.Name) + " " + v }
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "", with(strings.ToUpper(arg))
	}
	switch g.Get().(type) {
	case time.Duration:
		return "a duration with a unit (ms, s, m or h)", with("5s")
	case int, int64:
		return "a whole number", with("10")
	case uint, uint64:
		return "a whole number, 0 or more", with("10")
	case float64:
		return "a number", with("1.5")
	case bool:
		return "true or false (or the flag alone for true)", dashed(f.Name) + "=false"
	}
	return "", with(strings.ToUpper(arg))
}

// suggestion returns ` (did you mean "X"?)` for the closest candidate, or "".
// For flags (kind "flag") the candidate is shown with its dashes.
func suggestion(word string, candidates []string, kind string) string {
	s := config.Suggest(word, candidates)
	switch {
	case s == "":
		return ""
	case kind == "flag":
		return fmt.Sprintf(" (did you mean %s?)", dashed(s))
	}
	return fmt.Sprintf(" (did you mean %q?)", s)
}

// dashed writes a flag name as users type it: -c, --config.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// cmdHelp is `podvisor help [COMMAND]`.
func cmdHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeOverview(stdout)
		return exitOK
	}
	cmd, rest, ok := findCommand(commands, args)
	if !ok || len(rest) > 0 {
		fmt.Fprintf(stderr, "podvisor help: unknown command %q%s\nRun 'podvisor help' for the list of commands.\n",
			strings.Join(args, " "), suggestion(args[0], commandNames(), ""))
		return exitUsage
	}
	writeCommandHelp(stdout, cmd)
	return exitOK
}

// writeOverview prints the list of commands.
func writeOverview(w io.Writer) {
	fmt.Fprint(w, "podvisor: an in-pod process supervisor\n\nUsage:\n  podvisor COMMAND [flags] [arguments]\n\nCommands:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\nRun 'podvisor COMMAND --help' (or 'podvisor help COMMAND') for a command's flags,\n"+
		"examples and exit codes. The full reference is docs/reference.md in the repository.\n")
}

// writeCommandHelp prints usage, flags with defaults, examples and exit codes.
func writeCommandHelp(w io.Writer, c command) {
	fmt.Fprintf(w, "podvisor %s: %s\n\nUsage:\n  podvisor %s", c.name, c.summary, c.name)
	if syn := synopsis(c); syn != "" {
		fmt.Fprintf(w, " %s", syn)
	}
	fmt.Fprintln(w)
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", c.about)
	}
	if flags := flagHelp(c); len(flags) > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, f := range flags {
			fmt.Fprintf(tw, "  %s\t%s\n", f.names, f.usage)
		}
		tw.Flush()
	}
	fmt.Fprint(w, "\nExamples:\n")
	for _, e := range c.examples {
		fmt.Fprintf(w, "  %s\n      %s\n", e.cmd, e.what)
	}
	fmt.Fprint(w, "\nExit codes:\n")
	for _, e := range c.exits {
		code := fmt.Sprint(e.code)
		if e.code < 0 {
			code = "N"
		}
		fmt.Fprintf(w, "  %s  %s\n", code, e.meaning)
	}
}

// flagLine is one flag (with its aliases) as help shows it.
type flagLine struct {
	names  string   // "-c, --config FILE"
	arg    string   // " FILE", or "" for a boolean flag
	usage  string   // the description with the default
	all    []string // every name, without dashes
	def    string   // the default value as the flag prints it
	repeat bool     // the flag may be given more than once
}

// flagHelp lists a command's flags, aliases (flags sharing one variable,
// such as -c and --config) on one line, short names first.
func flagHelp(c command) []flagLine {
	if c.flags == nil {
		return nil
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.flags(fs)
	var (
		lines []flagLine
		index = map[uintptr]int{} // variable address -> line
	)
	fs.VisitAll(func(f *flag.Flag) { // alphabetical
		arg, usage := flag.UnquoteUsage(f)
		if arg == "value" {
			arg = ""
		}
		if arg != "" {
			arg = " " + strings.ToUpper(arg)
		}
		v := reflect.ValueOf(f.Value)
		if v.Kind() == reflect.Pointer {
			if i, ok := index[v.Pointer()]; ok {
				l := &lines[i]
				l.all = append(l.all, f.Name)
				slices.SortFunc(l.all, func(a, b string) int { return len(a) - len(b) })
				var ds []string
				for _, n := range l.all {
					ds = append(ds, dashed(n))
				}
				l.names = strings.Join(ds, ", ") + l.arg
				return
			}
			index[v.Pointer()] = len(lines)
		}
		_, repeat := f.Value.(*listFlag)
		lines = append(lines, flagLine{names: dashed(f.Name) + arg, arg: arg, usage: withDefault(usage, f), all: []string{f.Name}, def: f.DefValue, repeat: repeat})
	})
	return lines
}

// withDefault appends a non-zero default to a flag's description, unless
// the description already says what the default is ("..., else procs.yaml",
// "default: all"): help must not show a default twice.
func withDefault(usage string, f *flag.Flag) string {
	switch {
	case f.DefValue == "", f.DefValue == "false", f.DefValue == "0":
		return usage
	case statesDefault(usage):
		return usage
	}
	return fmt.Sprintf("%s (default %s)", usage, f.DefValue)
}

// statesDefault reports whether a flag's description says its default.
func statesDefault(usage string) bool {
	return strings.Contains(usage, "default") || strings.Contains(usage, ", else ")
}

// groupOf returns the two-word commands whose first word is word ("kube").
func groupOf(cmds []command, word string) []command {
	var group []command
	for _, c := range cmds {
		if first, _, two := strings.Cut(c.name, " "); two && first == word {
			group = append(group, c)
		}
	}
	return group
}

// dispatchGroup answers a command group named without (or with an unknown)
// second word: its usage, or "unknown command" with a did-you-mean.
func dispatchGroup(args []string, group []command, stdout, stderr io.Writer) int {
	var b strings.Builder
	var subs []string
	fmt.Fprintf(&b, "usage:\n")
	for _, c := range group {
		_, sub, _ := strings.Cut(c.name, " ")
		subs = append(subs, sub)
		fmt.Fprintf(&b, "  podvisor %s %s\n      %s\n", c.name, synopsis(c), c.summary)
	}
	switch {
	case len(args) > 1 && (args[1] == "-h" || args[1] == "--help" || args[1] == "help"):
		fmt.Fprint(stdout, b.String())
		return exitOK
	case len(args) > 1:
		fmt.Fprintf(stderr, "podvisor %s: unknown command %q%s\n%s", args[0], args[1], suggestion(args[1], subs, ""), b.String())
	default:
		fmt.Fprint(stderr, b.String())
	}
	return exitUsage
}

// synopsis is the usage line after "podvisor NAME": the positional
// arguments (c.args) and every flag, taken from the same definitions that
// parse them, list them in help and complete them, so that a flag added to
// a command shows in its synopsis without anyone writing it there. A flag
// already named in c.args (a group of alternatives) is not repeated.
func synopsis(c command) string {
	var parts []string
	for _, f := range flagHelp(c) {
		short := dashed(f.all[0]) // flagHelp sorts aliases short first
		if strings.Contains(c.args, short+" ") || strings.Contains(c.args, short+"]") || strings.HasSuffix(c.args, short) {
			continue
		}
		parts = append(parts, "["+short+flagValue(c, f)+"]")
	}
	switch {
	case c.args == "":
	case c.argsLast:
		parts = append(parts, c.args)
	default:
		parts = append([]string{c.args}, parts...)
	}
	return strings.Join(parts, " ")
}

// flagValue is how a flag's value reads in a synopsis: the words it takes
// (--format text|dot|mermaid), its default for a duration (--timeout 60s),
// else its placeholder (FILE); "..." for a repeatable flag.
func flagValue(c command, f flagLine) string {
	if words := c.flagWords[f.all[0]]; len(words) > 0 {
		return " " + strings.Join(words, "|")
	}
	if f.arg == " DURATION" && f.def != "" {
		return " " + shortDuration(f.def)
	}
	if f.repeat {
		return f.arg + "..."
	}
	return f.arg
}

// shortDuration writes a default such as 1m0s as 1m.
func shortDuration(s string) string {
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) {
			s = strings.TrimSuffix(s, z[1:])
		}
	}
	return s
}
