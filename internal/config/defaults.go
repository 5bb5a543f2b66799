package config

import "syscall"

// The defaults below are docs/reference.md's ("procs.yaml"). They are applied while decoding, so
// a Config never holds a zero value that means "default".

func defaultConfig(file, dir string) *Config {
	return &Config{
		File:            file,
		Dir:             dir,
		Listen:          DefaultListen,
		UI:              UI{Enabled: true},
		ShutdownTimeout: DefaultShutdownTimeout,
		Log:             Log{Format: "text", Tail: DefaultLogTail, Default: defaultOutput()},
		Processes:       map[string]*Process{},
	}
}

// defaultPolicy is always for services, which are meant to keep running, and
// never for oneshots and jobs, which are meant to finish.
func defaultPolicy(t Type) Policy {
	if t == Service {
		return Always
	}
	return Never
}

func defaultRestart(t Type) Restart {
	return Restart{Policy: defaultPolicy(t), Backoff: DefaultBackoff, MaxBackoff: DefaultMaxBackoff}
}

func defaultStop() Stop {
	return Stop{Signal: syscall.SIGTERM, Timeout: DefaultStopTimeout}
}

func defaultProbe() Probe {
	return Probe{
		StartInterval:    DefaultStartInterval,
		Interval:         DefaultInterval,
		Timeout:          DefaultProbeTimeout,
		SuccessThreshold: DefaultSuccessThreshold,
		FailureThreshold: DefaultFailureThreshold,
	}
}

func defaultSuccessExitCodes() []int { return []int{0} }
