package main

// Exit codes shared by every subcommand (docs/reference.md#exit-codes). The run
// command's outcome-dependent codes come from supervisor.Outcome.ExitCode.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2 // configuration or usage error
)
