package main

// Exit codes shared by every subcommand (SPEC.md section 1 and 3). The run
// command's outcome-dependent codes come from supervisor.Outcome.ExitCode.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2 // configuration or usage error
)
