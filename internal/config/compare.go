package config

import (
	"reflect"
	"slices"
)

// SpawnDiff says what, if anything, differs between how old and new would
// be spawned and probed: the resolved command, environment (after
// interpolation and env_file reading), working directory, user, type, the
// readiness and liveness checks, where its output goes, oom_score_adj
// and the limits and privileges (set before exec). It returns "" when the two are the same, else
// the first difference in words ("command changed"). A reload restarts a
// process exactly when SpawnDiff is not "": a reformatted file, reordered keys
// or a moved process change nothing here, an edited .env file does.
func SpawnDiff(old, new *Process) string {
	switch {
	case !slices.Equal(old.Command, new.Command) || old.Shell != new.Shell:
		return "command changed"
	case old.Type != new.Type:
		return "type changed"
	case !slices.Equal(old.Env, new.Env):
		return "environment changed"
	case old.Root != new.Root:
		return "root changed"
	case old.WorkingDir != new.WorkingDir:
		return "working_dir changed"
	case !sameUser(old.User, new.User):
		return "user changed"
	case !sameProbe(old.Ready, new.Ready):
		return "ready check changed"
	case !sameProbe(old.Live, new.Live):
		return "live check changed"
	case !sameProbe(old.Startup, new.Startup):
		return "startup check changed"
	case !reflect.DeepEqual(old.Watch, new.Watch):
		return "watch changed" // the watchers are podvisor's start-up's: see reference.md
	case !sameSchedule(old.Schedule, new.Schedule):
		return "schedule changed"
	case old.Watchdog != new.Watchdog:
		return "watchdog changed" // WATCHDOG_USEC is in its environment
	case old.Log != new.Log:
		return "log changed" // its pipes are wired at the start
	case !sameInt(old.OOMScoreAdj, new.OOMScoreAdj):
		return "oom_score_adj changed"
	case !slices.Equal(old.Limits, new.Limits):
		return "limits changed"
	case !reflect.DeepEqual(old.Umask, new.Umask):
		return "umask changed"
	case old.NoNewPrivs != new.NoNewPrivs:
		return "no_new_privs changed"
	case !slices.Equal(old.AmbientCaps, new.AmbientCaps):
		return "capabilities changed"
	case !slices.Equal(old.SecretEnv, new.SecretEnv):
		return "secret_env changed" // the probes' redaction is set at the start
	case !sameSockets(old.Sockets, new.Sockets):
		return "sockets changed" // the fds and LISTEN_FDNAMES are fixed at exec
	case old.FDStoreMax != new.FDStoreMax:
		return "fd_store_max changed" // NOTIFY_SOCKET is set for the store
	case old.TTY != new.TTY || old.Stdin != new.Stdin:
		return "tty or stdin changed" // fds 0, 1 and 2 are wired at the start
	case !reflect.DeepEqual(old.Daemon, new.Daemon):
		return "daemon changed" // read when the command exits
	case !reflect.DeepEqual(old.Resources, new.Resources):
		return "resources changed" // the cgroup is made before exec
	}
	return ""
}

// sameInt compares optional numbers: unset differs from any value.
func sameInt(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// SettingsDiff says what differs in the settings that a reload applies to a
// running process in place, without restarting it: dependencies, restart
// policy, start_timeout, success_exit_codes and stop. "" when none does.
func SettingsDiff(old, new *Process) string {
	switch {
	case !sameDeps(old.DependsOn, new.DependsOn):
		return "depends_on changed"
	case !sameRestart(old.Restart, new.Restart):
		return "restart changed"
	case old.StartTimeout != new.StartTimeout:
		return "start_timeout changed"
	case !slices.Equal(old.SuccessExitCodes, new.SuccessExitCodes):
		return "success_exit_codes changed"
	case old.Stop.Signal != new.Stop.Signal || old.Stop.Timeout != new.Stop.Timeout || !slices.Equal(old.Stop.Command, new.Stop.Command) ||
		old.Stop.CommandFirst != new.Stop.CommandFirst || old.Stop.MinGrace != new.Stop.MinGrace:
		return "stop changed"
	case old.Sidecar != new.Sidecar:
		return "sidecar changed"
	case old.RemainAfterExit != new.RemainAfterExit:
		return "remain_after_exit changed"
	case !reflect.DeepEqual(old.Reload, new.Reload):
		return "reload changed"
	}
	return ""
}

// sameRestart compares restart settings, rules without their positions.
func sameRestart(a, b Restart) bool {
	return a.Policy == b.Policy && a.Backoff == b.Backoff && a.MaxBackoff == b.MaxBackoff && a.Limit == b.Limit && a.Overlap == b.Overlap && a.DuringTermination == b.DuringTermination &&
		slices.EqualFunc(a.Rules, b.Rules, func(x, y ExitRule) bool {
			return x.Action == y.Action && slices.Equal(x.In, y.In) && slices.Equal(x.NotIn, y.NotIn) && slices.Equal(x.Signals, y.Signals)
		})
}

// sameDeps compares dependencies without their positions in the file.
func sameDeps(a, b []Dependency) bool {
	return slices.EqualFunc(a, b, func(x, y Dependency) bool {
		return x.Name == y.Name && x.Condition == y.Condition && x.Restart == y.Restart
	})
}

func sameUser(a, b *User) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.GID == b.GID && slices.Equal(a.Groups, b.Groups) && a.Name == b.Name && a.Home == b.Home
}

// sameProbe compares checks by what they do; the compiled regexp is compared
// through its source, Target.
func sameProbe(a, b *Probe) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Kind == b.Kind && a.Target == b.Target && slices.Equal(a.Command, b.Command) && a.FD == b.FD &&
		a.Service == b.Service && a.TLS == b.TLS && a.H2C == b.H2C &&
		a.StartInterval == b.StartInterval && a.Interval == b.Interval && a.Timeout == b.Timeout &&
		a.InitialDelay == b.InitialDelay && a.SuccessThreshold == b.SuccessThreshold && a.FailureThreshold == b.FailureThreshold &&
		a.StopTimeout == b.StopTimeout && a.WhileStopping == b.WhileStopping
}

func sameSchedule(a, b *Schedule) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Cron == b.Cron && a.Every == b.Every && a.Location.String() == b.Location.String() && a.Jitter == b.Jitter && a.Concurrency == b.Concurrency
}
