package main

import (
	"flag"
	"io"
	"strings"
)

// command is one subcommand. Dispatch, `podvisor help`, `--help`, shell
// completion and the reference test (reference_test.go) all read the table
// in commands, so adding a command means adding one entry there (and its
// section in docs/reference.md, which the test checks).
type command struct {
	name    string // as typed; may be two words ("kube play")
	summary string // one line for the command list
	// args are the positional arguments for the synopsis, and groups of
	// flags that exclude each other ("(--http URL | --tcp HOST:PORT)");
	// every other flag joins the synopsis from its definition in flags
	// (synopsis, help.go). argsLast: they come after the flags.
	args     string
	argsLast bool
	about    string // optional: a paragraph for --help
	// flags defines the command's flags exactly as run does (the same
	// function is called from run), for help, completion and the
	// "unknown flag" check. nil: the command takes no flags.
	flags func(fs *flag.FlagSet)
	// run executes the command with the arguments after its name.
	run      func(args []string, stdout, stderr io.Writer) int
	examples []example  // two or more
	exits    []exitCode // every exit code the command uses
	// procArgs: the positional arguments are process names, so completion
	// offers the names in the config (for the operate verbs).
	procArgs bool
	// signalArg: one process name, then a signal; completion offers
	// signal names for the second argument (podvisor signal).
	signalArg bool
	// flagWords are the values completion offers for a flag, by flag name.
	flagWords map[string][]string
	// argWords are the fixed words completion offers as the first
	// positional argument (completion's shells, help's commands).
	argWords func() []string
	// flagArgs returns the part of args that holds flags, when not all of
	// it does (wait: everything after --exec is the command). nil: all.
	flagArgs func(args []string) []string
}

type example struct {
	cmd  string // a full command line
	what string // what it does
}

type exitCode struct {
	code    int
	meaning string
}

// Exit codes shared by several commands.
var (
	exitUsageLine = exitCode{exitUsage, "usage error: unknown flag, bad flag value or unexpected argument"}
	exitConfig    = exitCode{exitUsage, "the config is invalid (every error is printed on stderr), or a usage error"}
)

// commands is the table of subcommands, in the order help lists them. It is
// data, written once: init completes the two entries that read the table
// themselves, and nothing writes it after.
var commands = []command{
	{
		name:     "run",
		summary:  "supervise the processes of a config (the main job)",
		args:     "[NAME...]",
		argsLast: true,
		about: "Starts every process in dependency order, keeps them running, serves\n" +
			"/readyz, /livez, /status, /metrics, /events and the web page at /, and on\n" +
			"SIGTERM, SIGINT or SIGQUIT tears them down in reverse dependency order\n" +
			"within shutdown_timeout.",
		flags:     func(fs *flag.FlagSet) { runFlags(fs) },
		run:       cmdRun,
		flagWords: map[string][]string{"log-format": {"text", "json"}},
		examples: []example{
			{"podvisor run", "run procs.yaml from the working directory (or $PODVISOR_CONFIG)"},
			{"podvisor run -c /etc/podvisor/procs.yaml --listen :9464 --log-format json", "run a given config, serve HTTP on port 9464, log JSON lines"},
			{"podvisor run --profile debug", "also run the processes with profiles: [debug]"},
			{"podvisor run -c procs.yaml web", "run web and what it depends on, nothing else"},
			{"podvisor run -d", "run in the background; podvisor down stops it"},
		},
		exits: []exitCode{
			{0, "clean teardown after a signal, or every job completed successfully"},
			{1, "a fatal failure without an exit code of its own (spawn error, missed start_timeout, failed liveness), teardown had to SIGKILL something, or the HTTP address was in use"},
			{2, "the config is invalid, or a usage error"},
			{-1, "any other code: the exit code of the failed job or fatal process (128+N when signal N killed it)"},
		},
	},
	{
		name:    "check",
		summary: "validate a config and print every error",
		args:    "",
		about: "Prints \"ok: N processes, M levels\" for a valid config, or every error at once,\n" +
			"one per line as FILE:LINE:COL PATH: MESSAGE. Warns (exit 0) when the stop\n" +
			"timeouts along the longest teardown chain exceed shutdown_timeout, and when a\n" +
			"restart rule's signals cannot match a command string without exec.\n" +
			"--portable is for a file written here and run in an image: users, groups and\n" +
			"env files missing here, and unset ${VAR}s, are printed as notes, not errors.",
		flags:     func(fs *flag.FlagSet) { checkFlags(fs) },
		run:       cmdCheck,
		flagWords: outputWords,
		examples: []example{
			{"podvisor check", "validate procs.yaml in the working directory"},
			{"podvisor check -c examples/quickstart/procs.yaml", "validate a given file"},
			{"podvisor check --portable -c image/procs.yaml", "validate a file meant for an image, whose users need not exist here"},
		},
		exits: []exitCode{{0, "the config is valid (a teardown-budget warning may be printed on stderr)"}, exitConfig},
	},
	{
		name:     "import",
		summary:  "convert a supervisord, process-compose, Procfile, s6-overlay or systemd setup to procs.yaml",
		args:     "PATH...",
		argsLast: true,
		about: "Writes procs.yaml (stdout by default) with a comment beside every key that only\n" +
			"approximates the original, and prints on stderr what was converted as is,\n" +
			"approximated (how) and dropped (why). The result is checked as by\n" +
			"podvisor check --portable. The format is detected when --from is absent.\n" +
			"Directive tables: docs/import.md.",
		flags:     func(fs *flag.FlagSet) { importFlags(fs) },
		run:       cmdImport,
		flagWords: map[string][]string{"from": formatWords()},
		examples: []example{
			{"podvisor import /etc/supervisor/supervisord.conf -o procs.yaml", "convert supervisord's config and its includes"},
			{"podvisor import --from s6 root/etc/s6-overlay/s6-rc.d > procs.yaml", "convert an s6-overlay v3 tree"},
			{"podvisor import deploy/*.service", "convert systemd units, with their dependencies"},
		},
		exits: []exitCode{
			{0, "converted, and the result passes check --portable"},
			{1, "something could not be converted (named on stderr), or the result fails the check"},
			{2, "unreadable input (every error with its file:line), or a usage error"},
		},
	},
	{
		name:      "graph",
		summary:   "show the start order, levels and edges of a config",
		args:      "",
		flags:     func(fs *flag.FlagSet) { graphFlags(fs) },
		run:       cmdGraph,
		flagWords: map[string][]string{"format": {"text", "dot", "mermaid"}, "o": outputWords["o"]},
		examples: []example{
			{"podvisor graph", "print the levels and edges as text"},
			{"podvisor graph --format dot | dot -Tsvg > graph.svg", "draw the graph with Graphviz"},
		},
		exits: []exitCode{{0, "the graph was printed"}, {1, "the output could not be written"}, exitConfig},
	},
	{
		name:    "mcp",
		summary: "serve a running podvisor to a coding agent (Model Context Protocol on stdio)",
		about: "An MCP server on stdin/stdout, for an agent to launch: tools to list the\n" +
			"processes, read bounded logs, the timeline and the shutdown report, and check\n" +
			"a config; restart, stop, start and signal only with mcp: {actions: true} in\n" +
			"the config. Talks to the podvisor on the control socket (docs/api.md).",
		flags: func(fs *flag.FlagSet) { mcpFlags(fs) },
		run:   cmdMCP,
		examples: []example{
			{"podvisor mcp", "serve the podvisor on the default control socket"},
			{"podvisor mcp --control /run/app/podvisor.sock", "serve another podvisor"},
		},
		exits: []exitCode{{0, "the client closed stdin"}, {1, "stdin or stdout failed"}, exitUsageLine},
	},
	{
		name:      "status",
		summary:   "show the processes of a running podvisor",
		args:      "",
		about:     "Reads GET /status from a running podvisor and prints a table, or the JSON as served.",
		flags:     func(fs *flag.FlagSet) { statusFlags(fs) },
		run:       cmdStatus,
		flagWords: outputWords,
		examples: []example{
			{"podvisor status", "table of the podvisor listening on 127.0.0.1:9464"},
			{"podvisor status --addr :9500 -o json | jq '.processes[].state'", "the /status JSON of another instance"},
		},
		exits: []exitCode{{0, "the status was printed"}, {1, "no podvisor answered, or its answer was not valid"}, exitUsageLine},
	},
	{
		name:    "timeline",
		summary: "show a running podvisor's start-up and shutdown timeline",
		args:    "[--svg FILE | -o json]",
		about: "Reads GET /timeline: per process when it was spawned, started, ready, asked\n" +
			"to stop, signalled and exited, the critical chain of the start-up, and after\n" +
			"a teardown where its budget went. Prints a text Gantt chart, or an SVG.",
		flags:     func(fs *flag.FlagSet) { timelineFlags(fs) },
		run:       cmdTimeline,
		flagWords: outputWords,
		examples: []example{
			{"podvisor timeline", "text chart of the podvisor on 127.0.0.1:9464, critical chain marked"},
			{"podvisor timeline --svg startup.svg", "draw the chart as an SVG file"},
		},
		exits: []exitCode{{0, "the timeline was printed"}, {1, "no podvisor answered, or its answer was not valid"}, exitUsageLine},
	},
	{
		name:    "wait",
		summary: "block until a target is ready (for postStart hooks and scripts)",
		args:    "(--http URL | --tcp HOST:PORT | --file PATH | --ready ADDR | --exec CMD...)",
		about: "Exactly one target. --exec must come last: every argument after it is the\n" +
			"command (a single argument runs under /bin/sh -c). The checks are those of\n" +
			"the ready probes in procs.yaml; --file accepts any existing file.",
		flags:    func(fs *flag.FlagSet) { waitFlags(fs); waitGoneFlags(fs) },
		run:      cmdWait,
		flagArgs: func(args []string) []string { f, _, _ := splitExec(args); return f },
		examples: []example{
			{"podvisor wait --http http://127.0.0.1:8080/healthz --timeout 30s", "wait until the app answers 200-399"},
			{"podvisor wait --ready :9464", "wait until the podvisor on port 9464 reports every process ready"},
			{"podvisor wait --exec pg_isready -h 127.0.0.1", "wait until a command exits 0"},
		},
		exits: []exitCode{{0, "the target is ready"}, {1, "timeout (the last attempt's result is printed)"}, {2, "usage error: no target or more than one, bad flag value"}},
	},
	{
		name:      "restart",
		summary:   "restart processes of a running podvisor (with their restart: true dependents)",
		args:      "NAME...",
		about:     "Stops each process (its restart: true dependents first, in reverse order), starts it\nagain once its dependencies hold, then those dependents. Waits for the outcome.",
		flags:     func(fs *flag.FlagSet) { operateFlags("restart", fs) },
		run:       operate("restart"),
		flagWords: outputWords,
		procArgs:  true,
		examples: []example{
			{"podvisor restart worker", "restart one process"},
			{"podvisor restart api worker --timeout 2m", "restart two, waiting up to 2 minutes"},
		},
		exits: []exitCode{{0, "done: every process reached the outcome (one line each)"}, {1, "refused or failed, saying why (unknown process, no podvisor on the socket, timeout)"}, {2, "usage error"}},
	},
	{
		name:      "stop",
		summary:   "stop processes and everything that depends on them; they stay stopped",
		args:      "NAME...",
		about:     "Dependents stop first (reverse order). Stopped processes are not restarted by\ntheir policy until `podvisor start`.",
		flags:     func(fs *flag.FlagSet) { operateFlags("stop", fs) },
		run:       operate("stop"),
		flagWords: outputWords,
		procArgs:  true,
		examples: []example{
			{"podvisor stop worker", "stop worker and its dependents"},
			{"PODVISOR_CONTROL=/tmp/pv.sock podvisor stop batch", "act on the podvisor listening on another socket"},
		},
		exits: []exitCode{{0, "done: every process reached the outcome (one line each)"}, {1, "refused or failed, saying why (unknown process, no podvisor on the socket, timeout)"}, {2, "usage error"}},
	},
	{
		name:      "start",
		summary:   "start processes stopped by podvisor stop, in dependency order",
		args:      "NAME...",
		about:     "Starts each process and what stop stopped with it. Refused, naming it, when a\ndependency is itself stopped.",
		flags:     func(fs *flag.FlagSet) { operateFlags("start", fs) },
		run:       operate("start"),
		flagWords: outputWords,
		procArgs:  true,
		examples: []example{
			{"podvisor start worker", "start worker again, then its dependents"},
			{"podvisor start db worker", "start several"},
		},
		exits: []exitCode{{0, "done: every process reached the outcome (one line each)"}, {1, "refused or failed, saying why (unknown process, no podvisor on the socket, timeout)"}, {2, "usage error"}},
	},
	{
		name:      "signal",
		summary:   "send a signal to a process's group",
		args:      "NAME SIGNAL",
		flags:     func(fs *flag.FlagSet) { operateFlags("signal", fs) },
		run:       operate("signal"),
		flagWords: outputWords,
		procArgs:  true,
		signalArg: true,
		examples: []example{
			{"podvisor signal nginx HUP", "make nginx re-read its config"},
			{"podvisor signal worker SIGUSR1", "signal names with or without SIG"},
		},
		exits: []exitCode{{0, "done: every process reached the outcome (one line each)"}, {1, "refused or failed, saying why (unknown process, no podvisor on the socket, timeout)"}, {2, "usage error"}},
	},
	{
		name:      "reload",
		summary:   "re-read procs.yaml and apply only what changed; with names, reload those processes",
		args:      "[NAME...]",
		about:     "An invalid config changes nothing (every error is printed). Removed processes stop,\nadded ones start, changed ones restart with their restart: true dependents,\nunchanged ones keep running. SIGHUP does the same.\nWith names, each process's reload: action runs instead (a signal or a command);\nit shows as reloading until done (with notify: systemd, until READY=1).",
		flags:     func(fs *flag.FlagSet) { operateFlags("reload", fs) },
		run:       operate("reload"),
		flagWords: outputWords,
		examples: []example{
			{"podvisor reload --dry-run", "print the plan, change nothing"},
			{"podvisor reload", "apply the edited procs.yaml"},
			{"podvisor reload nginx", "run nginx's reload: action (reload: {signal: HUP})"},
		},
		exits: []exitCode{{0, "done: every process reached the outcome (one line each)"}, {1, "refused or failed, saying why (unknown process, no podvisor on the socket, timeout)"}, {2, "usage error"}},
	},
	{
		name:    "exec",
		summary: "run a command as a process runs: its environment, user, directory, cgroup and limits",
		args:    "NAME -- CMD [ARG...]",
		about: "The running podvisor spawns the command with the process's environment (env:,\n" +
			"env_file, podvisor's own, as the process gets them), user, groups, working\n" +
			"directory, cgroup and limits. Output comes back as it is written; stdin is\n" +
			"/dev/null unless -i forwards it. -t gives it a terminal; -it connects this\n" +
			"terminal to it in raw mode, its size forwarded, until the command exits.",
		argsLast: true,
		flags:    func(fs *flag.FlagSet) { execFlags(fs) },
		run:      cmdExec,
		procArgs: true,
		flagArgs: execFlagArgs,
		examples: []example{
			{"podvisor exec web -- env", "print web's environment"},
			{"podvisor exec db -- psql -c 'select 1'", "run psql as db's user, in its directory"},
			{"podvisor exec -it web -- sh", "a shell in web's context, on this terminal"},
			{"pg_dump app | podvisor exec -i db -- psql", "feed a command's stdin"},
		},
		exits: []exitCode{{-1, "the command's exit code (127 not found, 126 not executable)"}, {1, "unknown process, or no podvisor on the socket"}, {2, "usage error"}},
	},
	{
		name:    "down",
		summary: "stop a running podvisor (as SIGTERM would) and print its shutdown report",
		args:    "",
		about: "Finds this project's run in the background (podvisor run -d) as the other\n" +
			"commands do, begins its teardown, waits for the end and exits with the run's\n" +
			"exit code.",
		flags: func(fs *flag.FlagSet) { downFlags(fs) },
		run:   cmdDown,
		examples: []example{
			{"podvisor down", "stop this directory's podvisor run -d"},
			{"PODVISOR_CONFIG=/srv/app/procs.yaml podvisor down --timeout 2m", "stop another project's, waiting at most 2 minutes"},
		},
		exits: []exitCode{{0, "clean teardown"}, {1, "no podvisor on the socket, or teardown had to SIGKILL something"}, {-1, "any other code: the run's exit code"}, {2, "usage error"}},
	},
	{
		name:     "logs",
		summary:  "print a process's recent output, or every process's (and follow it)",
		args:     "[NAME]",
		flags:    func(fs *flag.FlagSet) { logsFlags(fs) },
		run:      cmdLogs,
		procArgs: true,
		examples: []example{
			{"podvisor logs web --tail 50", "the last 50 lines of web"},
			{"podvisor logs worker -f", "follow worker's output until Ctrl-C"},
			{"podvisor logs --since 10m --grep error", "every process's lines of the last 10 minutes that match error, by time"},
			{"podvisor logs --reopen", "reopen the log files after logrotate moved them"},
		},
		exits: []exitCode{{0, "printed (with -f: until interrupted)"}, {1, "unknown process or no podvisor on the socket"}, {2, "usage error"}},
	},
	{
		name:    "attach",
		summary: "connect this terminal to a process's terminal (tty: true) or stdin (stdin: true)",
		args:    "NAME",
		about: "What is typed goes to the process, its output comes here, recent output first.\n" +
			"The terminal is in raw mode and its size follows this one's. Ctrl-P Ctrl-Q\n" +
			"detaches (--detach-keys); the process keeps running. The first attacher writes,\n" +
			"the others only watch. Without a terminal (stdin: true) the end of input detaches.",
		flags:    func(fs *flag.FlagSet) { attachFlags(fs) },
		run:      cmdAttach,
		procArgs: true,
		examples: []example{
			{"podvisor attach repl", "type into repl; Ctrl-P Ctrl-Q to leave it running"},
			{"podvisor attach repl --read-only", "watch repl without typing into it"},
			{"podvisor attach repl --detach-keys ctrl-x,x", "detach with Ctrl-X then x instead"},
		},
		exits: []exitCode{{0, "detached (the keys, or the end of input)"}, {1, "unknown or unattachable process, no podvisor on the socket, or the connection ended"}, exitUsageLine},
	},
	{
		name:    "ui",
		summary: "watch and steer a running podvisor in the terminal",
		args:    "",
		about: "A live table of the processes (state, readiness, pid, uptime, restarts, last\n" +
			"exit, CPU, memory, what each waits for), their output, the dependencies and\n" +
			"the timeline, with keys to restart, stop, start, signal and reload, each\n" +
			"confirmed. Over the control socket, or with --http over the HTTP listener\n" +
			"(actions there need the token of ui.token_file). Keys: ? in the UI; docs/ui.md.",
		flags: func(fs *flag.FlagSet) { uiFlags(fs) },
		run:   cmdUI,
		examples: []example{
			{"podvisor ui", "watch the podvisor on the default control socket"},
			{"podvisor ui --http http://127.0.0.1:9464 --token-file ui-token", "watch one through kubectl port-forward, with actions"},
		},
		exits: []exitCode{{0, "quit with q or Ctrl-C"}, {1, "no podvisor answers, or the terminal failed"}, exitUsageLine},
	},
	{
		name:     "kube play",
		summary:  "run a Kubernetes Pod (or workload) manifest as local processes",
		args:     "FILE|-",
		argsLast: true,
		about: "Runs the pod template of a Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet,\n" +
			"Job or CronJob (with the ConfigMaps and Secrets in the same file) under podvisor,\n" +
			"in the kubelet's order by default, or podvisor's with --ordered. Details and\n" +
			"the field table: docs/kubernetes.md.",
		flags:     func(fs *flag.FlagSet) { kubePlayFlags(fs) },
		run:       cmdKubePlay,
		flagWords: map[string][]string{"log-format": {"text", "json"}, "pace": {paceNode, paceFast}},
		examples: []example{
			{"podvisor kube play pod.yaml", "run the pod's containers in the kubelet's order"},
			{"podvisor kube play --ordered --dry-run deploy.yaml", "print the procs.yaml podvisor's own order would run"},
		},
		exits: []exitCode{
			{0, "as podvisor run: clean teardown, or the pod's job containers all succeeded"},
			{1, "as podvisor run: a fatal failure, or teardown had to SIGKILL"},
			{2, "the manifest is invalid or unsupported (every error printed), or a usage error"},
			{-1, "any other code: the failed container's exit code"},
		},
	},
	{
		name:    "kube ps",
		summary: "list the pods kube play runs on this machine",
		args:    "",
		about: "One line per pod: name, namespace, pid, phase (Pending, Running, Succeeded,\n" +
			"Failed, as the kubelet would report it), containers ready, control socket,\n" +
			"HTTP address and age. Records of pods whose podvisor is gone are removed.",
		flags:     func(fs *flag.FlagSet) { kubePsFlags(fs) },
		run:       cmdKubePs,
		flagWords: outputWords,
		examples: []example{
			{"podvisor kube ps", "a table of the pods played here"},
			{"podvisor kube ps -o json", "the same as one JSON object (the API's KubePods)"},
		},
		exits: []exitCode{{0, "listed (also when none runs)"}, {1, "the pods' directory cannot be read"}, exitUsageLine},
	},
	{
		name:     "kube down",
		summary:  "stop a pod kube play runs, as a deletion would",
		args:     "NAME",
		argsLast: true,
		about: "Sends the pod's podvisor SIGTERM: every preStop hook runs, the containers stop\n" +
			"within the pod's grace period, and kube down waits until it has exited.\n" +
			"--volumes also removes its persistentVolumeClaims' data.",
		flags: func(fs *flag.FlagSet) { kubeDownFlags(fs) },
		run:   cmdKubeDown,
		examples: []example{
			{"podvisor kube down web", "stop the pod web, keep its claims' data"},
			{"podvisor kube down --volumes db-0", "stop db-0 and remove its claims' data"},
		},
		exits: []exitCode{{0, "the pod has exited"}, {1, "no such pod, it did not exit in --timeout, or a claim could not be removed"}, exitUsageLine},
	},
	{
		name:    "kube generate",
		summary: "turn procs.yaml into a Kubernetes manifest",
		args:    "",
		about: "fat: one container whose entrypoint is podvisor run, procs.yaml in a ConfigMap.\n" +
			"sidecars: one container per process as far as Kubernetes can express the\n" +
			"graph, with warnings on stderr for the rest.",
		flags:     func(fs *flag.FlagSet) { kubeGenerateFlags(fs) },
		run:       cmdKubeGenerate,
		flagWords: map[string][]string{"shape": {"fat", "sidecars"}, "kind": {"Pod", "Deployment", "Job"}},
		examples: []example{
			{"podvisor kube generate --image registry.example/app:1.0 > pod.yaml", "one fat container running procs.yaml"},
			{"podvisor kube generate --shape sidecars --kind Deployment", "one container per process"},
		},
		exits: []exitCode{{0, "the manifest was printed"}, exitConfig},
	},
	{
		name:    "schema",
		summary: "print the JSON Schema of procs.yaml",
		args:    "",
		about: "The schema (JSON Schema draft 2020-12) lets editors validate and complete\n" +
			"procs.yaml; with the YAML language server, put this first line in the file:\n" +
			"  # yaml-language-server: $schema=FILE-OR-URL",
		run: cmdSchema,
		examples: []example{
			{"podvisor schema > procs.schema.json", "save the schema next to procs.yaml"},
			{"podvisor schema | jq '.properties | keys'", "list the top-level keys"},
		},
		exits: []exitCode{{0, "the schema was printed"}, {1, "the output could not be written"}, exitUsageLine},
	},
	{
		name:    "completion",
		summary: "print a shell completion script (bash, zsh or fish)",
		args:    "(bash | zsh | fish | names [-c FILE])",
		about: "The script completes commands, flags, the values of --format and\n" +
			"--log-format, process names for the commands that take them (read from\n" +
			"$PODVISOR_CONFIG, else ./procs.yaml) and signal names after signal NAME.\n" +
			"`completion names` prints those names, one per line; the scripts call it.",
		flags:    func(fs *flag.FlagSet) { completionFlags(fs) },
		run:      nil, // cmdCompletion, set by init
		argWords: func() []string { return append(shellNames(), "names") },
		examples: []example{
			{"source <(podvisor completion bash)", "enable completion in the current bash"},
			{"podvisor completion fish > ~/.config/fish/completions/podvisor.fish", "install it for fish"},
			{"podvisor completion zsh > \"${fpath[1]}/_podvisor\"", "install it for zsh"},
		},
		exits: []exitCode{{0, "the script (or the names) was printed"}, {2, "unknown shell, a usage error, or (names) the config is invalid"}},
	},
	{
		name:      "version",
		summary:   "print the version, commit and Go version",
		args:      "",
		flags:     func(fs *flag.FlagSet) { versionFlags(fs) },
		run:       cmdVersion,
		flagWords: outputWords,
		examples: []example{
			{"podvisor version", "human-readable: the first line is \"podvisor VERSION\""},
			{"podvisor version -o json", "one JSON object: version, commit, modified, go, platform"},
		},
		exits: []exitCode{{0, "printed"}, exitUsageLine},
	},
	{
		name:     "help",
		summary:  "list the commands, or explain one",
		args:     "[COMMAND]",
		run:      nil, // cmdHelp, set by init
		argWords: nil, // commandWords, set by init
		examples: []example{
			{"podvisor help", "list every command"},
			{"podvisor help wait", "usage, flags, examples and exit codes of wait (same as podvisor wait --help)"},
		},
		exits: []exitCode{{0, "help was printed"}, {2, "unknown command"}},
	},
}

// init gives help and completion their functions. Both read the table
// (the command list, the words to complete), so naming them in its
// initializer would make an initialization cycle.
func init() {
	help := tableEntry("help")
	help.run, help.argWords = cmdHelp, commandWords
	tableEntry("completion").run = cmdCompletion
}

// tableEntry returns the entry of the command named name.
func tableEntry(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	panic("commands: no entry " + name)
}

// commandWords are the first words of the commands, each once ("kube" for
// "kube play" and "kube generate"): what completion offers after help.
func commandWords() []string {
	var words []string
	seen := map[string]bool{}
	for _, c := range commands {
		w, _, _ := strings.Cut(c.name, " ")
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// commandNames returns the names of every command, in table order.
func commandNames() []string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return names
}
