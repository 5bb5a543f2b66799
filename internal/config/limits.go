package config

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Rlimit is one `limits:` entry: a resource limit (setrlimit(2)) set on the
// child before its program runs, with the syntax of systemd's LimitX=
// settings (docs/configuration.md).
type Rlimit struct {
	Name       string // one of LimitNames
	Soft, Hard uint64 // RlimInfinity: no limit
}

// RlimInfinity is "no limit" (RLIM_INFINITY).
const RlimInfinity = math.MaxUint64

// limitKind says how a limit's value is written.
type limitKind uint8

const (
	limitCount limitKind = iota // a plain number
	limitBytes                  // a number with K, M, G, T, P or E (base 1024)
	limitSecs                   // a time span, seconds without a unit (cpu)
	limitUsecs                  // a time span, microseconds without a unit (rttime)
	limitNice                   // +N/-N is a nice value, a bare N the raw 0..40
)

// LimitNames are the keys of `limits:`, in the order of the kernel's
// resource numbers (systemd's LimitCPU= ... LimitRTTIME=).
var LimitNames = []string{"cpu", "fsize", "data", "stack", "core", "rss", "nproc", "nofile", "memlock", "as", "locks", "sigpending", "msgqueue", "nice", "rtprio", "rttime"}

var limitKinds = map[string]limitKind{
	"cpu": limitSecs, "fsize": limitBytes, "data": limitBytes, "stack": limitBytes, "core": limitBytes, "rss": limitBytes,
	"nproc": limitCount, "nofile": limitCount, "memlock": limitBytes, "as": limitBytes, "locks": limitCount,
	"sigpending": limitCount, "msgqueue": limitBytes, "nice": limitNice, "rtprio": limitCount, "rttime": limitUsecs,
}

// limits decodes `limits:`, a mapping of LimitNames to values. The result
// is in LimitNames order.
func (l *loader) limits(n *yaml.Node, path *keyPath) []Rlimit {
	f, ok := l.fields(n, path, LimitNames)
	if !ok {
		return nil
	}
	var out []Rlimit
	for _, p := range f {
		at := path.field(p.name)
		if p.val.Kind != yaml.ScalarNode || (p.val.ShortTag() != "!!int" && p.val.ShortTag() != "!!str") {
			l.errorf(p.val, at, "expected a limit such as 1024, 4096:8192 or infinity, got %s", describe(p.val)).Hint = limitHint(p.name)
			continue
		}
		r, msg := ParseRlimit(p.name, p.val.Value)
		if msg != "" {
			l.errorf(p.val, at, "%s", msg).Hint = limitHint(p.name)
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Rlimit) int { return slices.Index(LimitNames, a.Name) - slices.Index(LimitNames, b.Name) })
	return out
}

// limitHint says how name's value is written.
func limitHint(name string) string {
	const common = "; one value sets soft and hard, soft:hard sets both, infinity (or unlimited) means no limit"
	switch limitKinds[name] {
	case limitBytes:
		return "a number of bytes, or with K, M, G, T, P or E (base 1024, as systemd's LimitX=): 64M, 1G:2G" + common
	case limitSecs:
		return "seconds, or a time span such as 10min or 1h" + common
	case limitUsecs:
		return "microseconds, or a time span such as 500ms or 2s" + common
	case limitNice:
		return "a nice value with its sign, -20..+19 (-5 allows raising the priority up to nice -5), or the raw limit 0..40" + common
	default:
		return "a plain number such as 65536 (no unit)" + common
	}
}

// ParseRlimit parses the value of limit name as systemd's LimitX= does:
// one value for soft and hard, or soft:hard; infinity (or unlimited) is no
// limit. It returns a message instead when s is not valid.
func ParseRlimit(name, s string) (Rlimit, string) {
	kind, ok := limitKinds[name]
	if !ok {
		return Rlimit{}, "unknown limit " + strconv.Quote(name)
	}
	softText, hardText, pair := strings.Cut(s, ":")
	soft, msg := limitValue(kind, softText)
	if msg != "" {
		return Rlimit{}, msg
	}
	hard := soft
	if pair {
		if hard, msg = limitValue(kind, hardText); msg != "" {
			return Rlimit{}, msg
		}
		if soft > hard {
			return Rlimit{}, "the soft limit " + softText + " is above the hard limit " + hardText
		}
	}
	return Rlimit{Name: name, Soft: soft, Hard: hard}, ""
}

func limitValue(kind limitKind, s string) (uint64, string) {
	if s == "" {
		return 0, "empty limit"
	}
	if s == "infinity" || s == "unlimited" {
		return RlimInfinity, ""
	}
	switch kind {
	case limitBytes:
		return byteLimit(s)
	case limitSecs:
		us, msg := timeSpan(s, 1_000_000)
		if msg != "" || us == RlimInfinity {
			return us, msg
		}
		return (us + 999_999) / 1_000_000, "" // systemd rounds up to whole seconds
	case limitUsecs:
		return timeSpan(s, 1)
	case limitNice:
		return niceLimit(s)
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, "invalid number " + strconv.Quote(s)
		}
		return v, ""
	}
}

// byteLimit parses a number of bytes with an optional suffix K, M, G, T,
// P or E (base 1024) or B.
func byteLimit(s string) (uint64, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	num, unit := s[:i], s[i:]
	shift := strings.Index("BKMGTPE", unit) * 10
	if num == "" || len(unit) > 1 || shift < 0 {
		if strings.HasSuffix(unit, "i") {
			return 0, "invalid size " + strconv.Quote(s) + ": write " + num + unit[:len(unit)-1] + " (the suffixes are base 1024 already; Kubernetes' Ki, Mi, Gi are not systemd's)"
		}
		return 0, "invalid size " + strconv.Quote(s)
	}
	if unit == "" {
		shift = 0
	}
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil || v > math.MaxUint64>>shift {
		return 0, "size " + strconv.Quote(s) + " is too large"
	}
	return v << shift, ""
}

// timeUnits are systemd.time's span units, in microseconds.
var timeUnits = map[string]uint64{
	"us": 1, "usec": 1, "µs": 1, "μs": 1,
	"ms": 1e3, "msec": 1e3,
	"s": 1e6, "sec": 1e6, "second": 1e6, "seconds": 1e6,
	"m": 60e6, "min": 60e6, "minute": 60e6, "minutes": 60e6,
	"h": 3600e6, "hr": 3600e6, "hour": 3600e6, "hours": 3600e6,
	"d": 86400e6, "day": 86400e6, "days": 86400e6,
	"w": 604800e6, "week": 604800e6, "weeks": 604800e6,
}

// timeSpan parses a span such as "90", "1min 30s" or "500ms" to
// microseconds; a bare number is in units of def microseconds.
func timeSpan(s string, def uint64) (uint64, string) {
	var total uint64
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, "invalid time span " + strconv.Quote(s)
		}
		num := rest[:i]
		rest = strings.TrimLeft(rest[i:], " ")
		j := 0
		for j < len(rest) && (rest[j] < '0' || rest[j] > '9') && rest[j] != ' ' {
			j++
		}
		unit := rest[:j]
		rest = strings.TrimLeft(rest[j:], " ")
		mult := def
		if unit != "" {
			var ok bool
			if mult, ok = timeUnits[unit]; !ok {
				return 0, "invalid time span " + strconv.Quote(s) + ": unknown unit " + strconv.Quote(unit)
			}
		} else if rest != "" {
			return 0, "invalid time span " + strconv.Quote(s) + ": a number without a unit must stand alone"
		}
		v, err := strconv.ParseUint(num, 10, 64)
		if err != nil || v > (math.MaxUint64-1-total)/mult {
			return 0, "time span " + strconv.Quote(s) + " is too large"
		}
		total += v * mult
	}
	return total, ""
}

// niceLimit parses LimitNICE=: with a sign, a nice value -20..19 (the
// limit is 20 - nice); without, the raw limit 0..40.
func niceLimit(s string) (uint64, string) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, "invalid nice limit " + strconv.Quote(s)
	}
	if s[0] == '+' || s[0] == '-' {
		if v < -20 || v > 19 {
			return 0, "nice value " + s + " is out of range -20..+19"
		}
		return uint64(20 - v), ""
	}
	if v > 40 {
		return 0, "raw nice limit " + s + " is out of range 0..40"
	}
	return uint64(v), ""
}

// FormatRlimit writes r's value in the syntax ParseRlimit reads, as short
// as it can be said exactly.
func FormatRlimit(r Rlimit) string {
	one := func(v uint64) string {
		switch {
		case v == RlimInfinity:
			return "infinity"
		case limitKinds[r.Name] == limitBytes && v > 0:
			for i := len("EPTGMK"); i > 0; i-- {
				if shift := uint(i * 10); v%(1<<shift) == 0 {
					return strconv.FormatUint(v>>shift, 10) + string("BKMGTPE"[i])
				}
			}
		}
		return strconv.FormatUint(v, 10)
	}
	if r.Soft == r.Hard {
		return one(r.Soft)
	}
	return one(r.Soft) + ":" + one(r.Hard)
}

// umask decodes `umask:`, octal as systemd's UMask= ("0027", 027 or 0o027).
func (l *loader) umask(n *yaml.Node, path *keyPath) *uint32 {
	const hint = "an octal mode such as \"0027\" (quote it, or YAML may read a number); each bit set is taken away from new files' permissions"
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!str") {
		l.errorf(n, path, "expected an octal umask such as \"0027\", got %s", describe(n)).Hint = hint
		return nil
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(n.Value, "0o"), 8, 32)
	if err != nil || v > 0o777 || n.Value == "" {
		l.errorf(n, path, "invalid umask %q", n.Value).Hint = hint
		return nil
	}
	m := uint32(v)
	return &m
}

// CapabilityNames are Linux's capabilities, indexed by number
// (linux/capability.h).
var CapabilityNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID",
	"CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

var capabilityKeys = []string{"ambient"}

// capabilities decodes `capabilities: {ambient: [CAP_X, ...]}`: the
// capabilities a process that runs as a user: keeps across its exec
// (systemd's AmbientCapabilities=). Names are sorted and unique.
func (l *loader) capabilities(n *yaml.Node, path *keyPath, hasUser bool) []string {
	f, ok := l.fields(n, path, capabilityKeys)
	if !ok {
		return nil
	}
	v, ok := f.get("ambient")
	if !ok {
		return nil
	}
	at := path.field("ambient")
	if v.val.Kind != yaml.SequenceNode {
		l.errorf(v.val, at, "expected a list of capabilities such as [CAP_NET_BIND_SERVICE], got %s", describe(v.val))
		return nil
	}
	var out []string
	for i, c := range v.val.Content {
		name, ok := l.str(c, at.elem(i))
		if !ok {
			continue
		}
		if !slices.Contains(CapabilityNames, name) {
			e := l.errorf(c, at.elem(i), "unknown capability %q", name)
			if up := strings.ToUpper(name); slices.Contains(CapabilityNames, up) || slices.Contains(CapabilityNames, "CAP_"+up) {
				e.Hint = "write it as capabilities(7) names it: CAP_" + strings.TrimPrefix(up, "CAP_")
			} else {
				e.Hint = "see capabilities(7) for the names, e.g. CAP_NET_BIND_SERVICE"
			}
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) > 0 && !hasUser {
		l.errorf(v.key, at, "ambient capabilities need user:").Hint =
			"a process without user: runs as podvisor's own user (root has every capability already); set user: to the account the process should run as"
		return nil
	}
	slices.Sort(out)
	return out
}

// privileges decodes what the process starts with beside its user:
// limits, umask, no_new_privs and capabilities.
func (l *loader) privileges(f fieldSet, path *keyPath, proc *Process) {
	if v, ok := f.get("limits"); ok {
		proc.Limits = l.limits(v.val, path.field("limits"))
	}
	if v, ok := f.get("umask"); ok {
		proc.Umask = l.umask(v.val, path.field("umask"))
	}
	if v, ok := f.get("no_new_privs"); ok {
		proc.NoNewPrivs, _ = l.boolean(v.val, path.field("no_new_privs"))
	}
	if v, ok := f.get("capabilities"); ok {
		_, hasUser := f.get("user") // set, even if it did not resolve here (--portable)
		proc.AmbientCaps = l.capabilities(v.val, path.field("capabilities"), hasUser)
	}
}
