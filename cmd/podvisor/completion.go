package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// shellWriter returns the script writer of a supported shell.
func shellWriter(shell string) (func(io.Writer, []compCommand), bool) {
	switch shell {
	case "bash":
		return writeBash, true
	case "zsh":
		return writeZsh, true
	case "fish":
		return writeFish, true
	}
	return nil, false
}

func shellNames() []string { return []string{"bash", "zsh", "fish"} }

// completionFlags defines completion's flags (cmdCompletion and the command
// table share it): the config whose process names `completion names` prints.
func completionFlags(fs *flag.FlagSet) (path *string) { return configFlag(fs) }

// cmdCompletion prints a completion script, or (`names`) the process names
// of a config, one per line, for those scripts.
func cmdCompletion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("completion", stderr)
	path := completionFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	// Flags may also follow the word: completion names -c FILE.
	if fs.NArg() > 1 {
		word := fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return exitUsage
		}
		args = append([]string{word}, fs.Args()...)
	} else {
		args = fs.Args()
	}
	if len(args) != 1 {
		fmt.Fprintf(stderr, "podvisor completion: want one of %s or names\n", strings.Join(shellNames(), ", "))
		return exitUsage
	}
	what := args[0]
	if what == "names" {
		cfg, err := loadConfig(*path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		for _, n := range cfg.Names {
			fmt.Fprintln(stdout, n)
		}
		return exitOK
	}
	write, ok := shellWriter(what)
	if !ok {
		fmt.Fprintf(stderr, "podvisor completion: unknown shell %q%s (want %s)\n", what,
			suggestion(what, shellNames(), ""), strings.Join(shellNames(), ", "))
		return exitUsage
	}
	write(stdout, compCommands(commands))
	return exitOK
}

// compCommand is what a completion script needs to know of one command.
type compCommand struct {
	name      string
	summary   string
	flags     []compFlag
	procArgs  bool
	signalArg bool // one process name, then a signal
	config    bool // takes -c: process names come from the config it names
	argWords  []string
	firstWord string // name's first word; commands sharing it form a group ("kube")
}

// completionSignals are the signals completion offers after `signal NAME`,
// as the examples write them (podvisor signal takes SIGHUP, hup and 1 too).
var completionSignals = []string{"HUP", "INT", "QUIT", "KILL", "USR1", "USR2", "TERM", "CONT", "STOP", "TSTP", "WINCH"}

// valueFlags returns the dashed names of c's flags that take a value: the
// scripts skip their values when they count positional arguments.
func (c compCommand) valueFlags() []string {
	var out []string
	for _, f := range c.flags {
		if f.value {
			out = append(out, f.dashed())
		}
	}
	return out
}

// compFlag is one flag as a completion script offers it.
type compFlag struct {
	name  string   // without dashes
	usage string   // first clause of the description
	value bool     // takes a value
	file  bool     // the value is a file name
	words []string // the value is one of these
}

func (f compFlag) dashed() string { return dashed(f.name) }

// compCommands derives the completion data from the command table.
func compCommands(cmds []command) []compCommand {
	var out []compCommand
	for _, c := range cmds {
		cc := compCommand{name: c.name, summary: c.summary, procArgs: c.procArgs, signalArg: c.signalArg, firstWord: strings.Fields(c.name)[0]}
		if c.argWords != nil {
			cc.argWords = c.argWords()
		}
		if c.flags != nil {
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			c.flags(fs)
			fs.VisitAll(func(f *flag.Flag) {
				arg, usage := flag.UnquoteUsage(f)
				if i := strings.IndexAny(usage, "(;"); i > 0 {
					usage = strings.TrimSpace(usage[:i])
				}
				bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
				cf := compFlag{name: f.Name, usage: usage, value: !isBool || !bf.IsBoolFlag(), words: c.flagWords[f.Name]}
				cf.file = cf.value && (arg == "FILE" || arg == "PATH")
				cc.flags = append(cc.flags, cf)
				cc.config = cc.config || f.Name == "c"
			})
		}
		out = append(out, cc)
	}
	return out
}

// groups returns the first words shared by commands of two words, with the
// second words under each.
func groups(cmds []compCommand) (order []string, second map[string][]string) {
	second = map[string][]string{}
	for _, c := range cmds {
		w := strings.Fields(c.name)
		if len(w) == 2 {
			if _, ok := second[w[0]]; !ok {
				order = append(order, w[0])
			}
			second[w[0]] = append(second[w[0]], w[1])
		}
	}
	return order, second
}

// topWords are the words that may follow "podvisor".
func topWords(cmds []compCommand) []string {
	var out []string
	for _, c := range cmds {
		if !slices.Contains(out, c.firstWord) {
			out = append(out, c.firstWord)
		}
	}
	return out
}

// shellQuote quotes s for bash, zsh and fish alike (single quotes).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote quotes s for fish, which escapes a quote inside quotes with a
// backslash.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeBash(w io.Writer, cmds []compCommand) {
	order, second := groups(cmds)
	var b strings.Builder
	b.WriteString(`# bash completion for podvisor, generated by "podvisor completion bash".
# Enable it with: source <(podvisor completion bash)
_podvisor() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmd="" n=0
    COMPREPLY=()
`)
	var two, one []string
	for _, c := range cmds {
		if strings.Contains(c.name, " ") {
			two = append(two, shellQuote(c.name))
		} else {
			one = append(one, c.name)
		}
	}
	if len(two) > 0 {
		fmt.Fprintf(&b, "    if (( COMP_CWORD > 2 )); then\n        case \"${COMP_WORDS[1]} ${COMP_WORDS[2]}\" in\n            %s) cmd=\"${COMP_WORDS[1]} ${COMP_WORDS[2]}\"; n=2 ;;\n        esac\n    fi\n", strings.Join(two, "|"))
	}
	fmt.Fprintf(&b, "    if [[ -z $cmd ]] && (( COMP_CWORD > 1 )); then\n        case \"${COMP_WORDS[1]}\" in\n            %s) cmd=${COMP_WORDS[1]}; n=1 ;;\n        esac\n    fi\n", strings.Join(one, "|"))
	fmt.Fprintf(&b, "    if [[ -z $cmd ]]; then\n        if (( COMP_CWORD == 1 )); then\n            COMPREPLY=($(compgen -W %s -- \"$cur\"))\n",
		shellQuote(strings.Join(topWords(cmds), " ")))
	if len(order) > 0 {
		b.WriteString("        elif (( COMP_CWORD == 2 )); then\n            case \"${COMP_WORDS[1]}\" in\n")
		for _, g := range order {
			fmt.Fprintf(&b, "                %s) COMPREPLY=($(compgen -W %s -- \"$cur\")) ;;\n", g, shellQuote(strings.Join(second[g], " ")))
		}
		b.WriteString("            esac\n")
	}
	b.WriteString("        fi\n        return 0\n    fi\n")
	b.WriteString(`    # Go's flag package takes -name and --name alike.
    local p=$prev
    [[ $p == -[!-]?* ]] && p=-$p
    local flags="" vflags="" procs=0 sigarg=0 cfgflag=0 words=""
    case "$cmd" in
`)
	for _, c := range cmds {
		var names []string
		for _, f := range c.flags {
			names = append(names, f.dashed())
		}
		fmt.Fprintf(&b, "        %s)\n            flags=%s\n", shellQuote(c.name), shellQuote(strings.Join(names, " ")))
		if c.procArgs {
			fmt.Fprintf(&b, "            procs=1 vflags=%s\n", shellQuote(strings.Join(c.valueFlags(), " ")))
		}
		if c.signalArg {
			b.WriteString("            sigarg=1\n")
		}
		if c.config {
			b.WriteString("            cfgflag=1\n")
		}
		if len(c.argWords) > 0 {
			fmt.Fprintf(&b, "            words=%s\n", shellQuote(strings.Join(c.argWords, " ")))
		}
		writeValueCases(&b, c, func(words []string) string {
			return fmt.Sprintf("COMPREPLY=($(compgen -W %s -- \"$cur\")); return 0", shellQuote(strings.Join(words, " ")))
		}, "COMPREPLY=($(compgen -f -- \"$cur\")); return 0")
		b.WriteString("            ;;\n")
	}
	b.WriteString(`    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif (( procs )); then
        # Count the arguments before this one (flag values skipped). Process
        # names come from the config given with -c when the command takes
        # -c, else $PODVISOR_CONFIG, else ./procs.yaml.
        local cfg=() j w npos=0
        for (( j = n + 1; j < COMP_CWORD; j++ )); do
            w=${COMP_WORDS[j]}
            [[ $w == -[!-]?* ]] && w=-$w
            case "$w" in
                --*=*) ;;
                -*)
                    if [[ " $vflags " == *" $w "* ]]; then
                        (( cfgflag )) && [[ $w == -c || $w == --config ]] && cfg=(-c "${COMP_WORDS[j+1]}")
                        j=$((j + 1))
                    fi ;;
                *) npos=$((npos + 1)) ;;
            esac
        done
        if (( sigarg && npos == 1 )); then
            COMPREPLY=($(compgen -W ` + shellQuote(strings.Join(completionSignals, " ")) + ` -- "$cur"))
        elif (( ! sigarg || npos == 0 )); then
            COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" completion names "${cfg[@]}" 2>/dev/null)" -- "$cur"))
        fi
    elif [[ -n $words ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    fi
    return 0
}
complete -o default -F _podvisor podvisor
`)
	io.WriteString(w, b.String())
}

func writeZsh(w io.Writer, cmds []compCommand) {
	order, second := groups(cmds)
	var b strings.Builder
	b.WriteString(`#compdef podvisor
# zsh completion for podvisor, generated by "podvisor completion zsh".
# Install it as _podvisor in a directory of $fpath, or: source <(podvisor completion zsh)
_podvisor() {
    local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd="" n=0
`)
	var two, one []string
	for _, c := range cmds {
		if strings.Contains(c.name, " ") {
			two = append(two, shellQuote(c.name))
		} else {
			one = append(one, c.name)
		}
	}
	if len(two) > 0 {
		fmt.Fprintf(&b, "    if (( CURRENT > 3 )); then\n        case \"${words[2]} ${words[3]}\" in\n            %s) cmd=\"${words[2]} ${words[3]}\"; n=2 ;;\n        esac\n    fi\n", strings.Join(two, "|"))
	}
	fmt.Fprintf(&b, "    if [[ -z $cmd ]] && (( CURRENT > 2 )); then\n        case \"${words[2]}\" in\n            %s) cmd=${words[2]}; n=1 ;;\n        esac\n    fi\n", strings.Join(one, "|"))
	b.WriteString("    if [[ -z $cmd ]]; then\n        if (( CURRENT == 2 )); then\n            local -a cmds\n            cmds=(\n")
	seen := map[string]bool{}
	for _, c := range cmds {
		if seen[c.firstWord] {
			continue
		}
		seen[c.firstWord] = true
		summary := c.summary
		if len(second[c.firstWord]) > 0 {
			summary = c.firstWord + " " + strings.Join(second[c.firstWord], "|")
		}
		fmt.Fprintf(&b, "                %s\n", shellQuote(c.firstWord+":"+summary))
	}
	b.WriteString("            )\n            _describe -t commands 'podvisor command' cmds\n")
	if len(order) > 0 {
		b.WriteString("        elif (( CURRENT == 3 )); then\n            case \"${words[2]}\" in\n")
		for _, g := range order {
			fmt.Fprintf(&b, "                %s) compadd -- %s ;;\n", g, strings.Join(second[g], " "))
		}
		b.WriteString("            esac\n")
	}
	b.WriteString("        fi\n        return 0\n    fi\n")
	b.WriteString(`    local p=$prev
    [[ $p == -[^-]?* ]] && p=-$p
    local -a flags vflags argwords
    local procs=0 sigarg=0 cfgflag=0
    case "$cmd" in
`)
	for _, c := range cmds {
		var names []string
		for _, f := range c.flags {
			names = append(names, f.dashed())
		}
		fmt.Fprintf(&b, "        %s)\n            flags=(%s)\n", shellQuote(c.name), strings.Join(names, " "))
		if c.procArgs {
			fmt.Fprintf(&b, "            procs=1 vflags=(%s)\n", strings.Join(c.valueFlags(), " "))
		}
		if c.signalArg {
			b.WriteString("            sigarg=1\n")
		}
		if c.config {
			b.WriteString("            cfgflag=1\n")
		}
		if len(c.argWords) > 0 {
			fmt.Fprintf(&b, "            argwords=(%s)\n", strings.Join(c.argWords, " "))
		}
		writeValueCases(&b, c, func(words []string) string {
			return fmt.Sprintf("compadd -- %s; return 0", strings.Join(words, " "))
		}, "_files; return 0")
		b.WriteString("            ;;\n")
	}
	b.WriteString(`    esac
    if [[ $cur == -* ]]; then
        compadd -- $flags
    elif (( procs )); then
        # As in bash: count the arguments before this one; -c only where
        # the command takes it.
        local -a cfg
        local j w npos=0
        for (( j = n + 2; j < CURRENT; j++ )); do
            w=${words[j]}
            [[ $w == -[^-]?* ]] && w=-$w
            case "$w" in
                --*=*) ;;
                -*)
                    if (( ${vflags[(Ie)$w]} )); then
                        (( cfgflag )) && [[ $w == -c || $w == --config ]] && cfg=(-c "${words[j+1]}")
                        j=$((j + 1))
                    fi ;;
                *) npos=$((npos + 1)) ;;
            esac
        done
        if (( sigarg && npos == 1 )); then
            compadd -- ` + strings.Join(completionSignals, " ") + `
        elif (( ! sigarg || npos == 0 )); then
            compadd -- ${(f)"$(${words[1]} completion names $cfg 2>/dev/null)"}
        fi
    elif (( ${#argwords} )); then
        compadd -- $argwords
    else
        _files
    fi
    return 0
}
if [ "$funcstack[1]" = "_podvisor" ]; then
    _podvisor "$@"
else
    compdef _podvisor podvisor
fi
`)
	io.WriteString(w, b.String())
}

// fishFunctions is the fixed part of the fish script: its helper
// functions, and no file completion by default.
const fishFunctions = `# fish completion for podvisor, generated by "podvisor completion fish".
# Install it with: podvisor completion fish > ~/.config/fish/completions/podvisor.fish

# __podvisor_using CMD: the command line so far starts with "podvisor CMD".
function __podvisor_using
    set -l tokens (commandline -opc)
    set -l want (string split ' ' -- $argv[1])
    test (count $tokens) -gt (count $want); or return 1
    for i in (seq (count $want))
        set -l k (math $i + 1)
        test "$tokens[$k]" = "$want[$i]"; or return 1
    end
end

# __podvisor_at N WORD: the command line so far is N words, the second WORD.
function __podvisor_at
    set -l tokens (commandline -opc)
    test (count $tokens) -eq $argv[1]; and test "$tokens[2]" = "$argv[2]"
end

# __podvisor_names [-c]: the process names of $PODVISOR_CONFIG, else
# ./procs.yaml; with -c (for a command that takes it), of the config given
# with -c on the command line.
function __podvisor_names
    set -l tokens (commandline -opc)
    set -l cfg
    if test "$argv[1]" = -c
        for i in (seq (count $tokens))
            if contains -- $tokens[$i] -c -config --config
                set -l j (math $i + 1)
                test $j -le (count $tokens); and set cfg -c $tokens[$j]
            end
        end
    end
    $tokens[1] completion names $cfg 2>/dev/null
end

# __podvisor_npos N CMD VFLAG...: the command line so far has N arguments
# after "podvisor CMD", not counting flags and the values of the VFLAGs.
function __podvisor_npos
    set -l tokens (commandline -opc)
    set -l first (math (count (string split ' ' -- $argv[2])) + 2)
    set -l vflags $argv[3..-1]
    set -l npos 0
    set -l skip 0
    for t in $tokens[$first..-1]
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $t
            case '--*=*'
            case '-*'
                string match -q -r -- '^-[^-].' $t; and set t -$t
                contains -- $t $vflags; and set skip 1
            case '*'
                set npos (math $npos + 1)
        end
    end
    test $npos -eq $argv[1]
end

complete -c podvisor -f
`

// writeFish writes the fish script: the fixed functions, then a complete
// line per word, flag and argument of cmds.
func writeFish(w io.Writer, cmds []compCommand) {
	var b strings.Builder
	b.WriteString(fishFunctions)
	writeFishCommandWords(&b, cmds)
	for _, c := range cmds {
		writeFishCommand(&b, c)
	}
	io.WriteString(w, b.String())
}

// writeFishCommandWords completes the command's first word, and the second
// of a two-word command ("kube play").
func writeFishCommandWords(b *strings.Builder, cmds []compCommand) {
	order, second := groups(cmds)
	seen := map[string]bool{}
	for _, c := range cmds {
		if seen[c.firstWord] {
			continue
		}
		seen[c.firstWord] = true
		summary := c.summary
		if len(second[c.firstWord]) > 0 {
			summary = strings.Join(second[c.firstWord], ", ")
		}
		fmt.Fprintf(b, "complete -c podvisor -n '__fish_use_subcommand' -a %s -d %s\n", c.firstWord, fishQuote(summary))
	}
	for _, g := range order {
		for _, s := range second[g] {
			var sum string
			for _, c := range cmds {
				if c.name == g+" "+s {
					sum = c.summary
				}
			}
			fmt.Fprintf(b, "complete -c podvisor -n '__podvisor_at 2 %s' -a %s -d %s\n", g, s, fishQuote(sum))
		}
	}
}

// writeFishCommand completes c's flags and arguments.
func writeFishCommand(b *strings.Builder, c compCommand) {
	cond := fishQuote("__podvisor_using " + shellQuote(c.name))
	for _, f := range c.flags {
		opt := "-l " + f.name
		if len(f.name) == 1 {
			opt = "-s " + f.name
		}
		switch {
		case len(f.words) > 0:
			opt += " -x -a " + fishQuote(strings.Join(f.words, " "))
		case f.file:
			opt += " -r -F"
		case f.value:
			opt += " -x"
		}
		fmt.Fprintf(b, "complete -c podvisor -n %s %s -d %s\n", cond, opt, fishQuote(f.usage))
	}
	names := "'(__podvisor_names)'"
	if c.config {
		names = "'(__podvisor_names -c)'"
	}
	switch {
	case c.signalArg:
		npos := func(n int) string {
			return fishQuote(fmt.Sprintf("__podvisor_using %s; and __podvisor_npos %d %s %s", shellQuote(c.name), n, shellQuote(c.name), strings.Join(c.valueFlags(), " ")))
		}
		fmt.Fprintf(b, "complete -c podvisor -n %s -a %s\n", npos(0), names)
		fmt.Fprintf(b, "complete -c podvisor -n %s -a %s\n", npos(1), fishQuote(strings.Join(completionSignals, " ")))
	case c.procArgs:
		fmt.Fprintf(b, "complete -c podvisor -n %s -a %s\n", cond, names)
	}
	if len(c.argWords) > 0 {
		fmt.Fprintf(b, "complete -c podvisor -n %s -a %s\n", cond, fishQuote(strings.Join(c.argWords, " ")))
	}
}

// writeValueCases writes, for bash and zsh alike, the case statement that
// completes the value of the previous word $p when it is one of c's flags
// taking a value: its fixed words, a file name, or nothing.
func writeValueCases(b *strings.Builder, c compCommand, wordsAction func([]string) string, fileAction string) {
	var cases []string
	for _, f := range c.flags {
		if !f.value {
			continue
		}
		action := "return 0"
		switch {
		case len(f.words) > 0:
			action = wordsAction(f.words)
		case f.file:
			action = fileAction
		}
		cases = append(cases, fmt.Sprintf("                %s) %s ;;\n", f.dashed(), action))
	}
	if len(cases) > 0 {
		b.WriteString("            case \"$p\" in\n")
		b.WriteString(strings.Join(cases, ""))
		b.WriteString("            esac\n")
	}
}
