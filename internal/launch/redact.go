package launch

import (
	"context"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/podvisor/podvisor/internal/health"
)

// minRedacted is the shortest secret redacted from probe details: a
// shorter value ("1", "on") would blank every occurrence of those
// characters and garble the message while protecting next to nothing.
const minRedacted = 4

// secretWords mark an environment variable whose value is a secret when
// they appear anywhere in its name (upper-cased): DB_PASSWORD,
// GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS.
var secretWords = []string{"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "PRIVATE", "APIKEY", "AUTH", "COOKIE"}

// secretParts mark a secret when they are a whole _- separated part of the
// name: API_KEY, DB_PASS, PG_PWD, SENTRY_DSN (not KEYBOARD_LAYOUT, or the
// shell's PWD, which is a directory).
var secretParts = []string{"KEY", "PASS", "PWD", "DSN", "SALT"}

// secretName reports whether an environment variable's name says its value
// is a secret.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	if n == "PWD" || n == "OLDPWD" {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		for _, p := range secretParts {
			if part == p {
				return true
			}
		}
	}
	return false
}

// envRedactor returns a replacer of the secrets in env (KEY=VALUE, the
// environment a probe runs with) by [redacted: NAME], or nil when there
// are none: a probe's output or error reaches /status and the log, and no
// endpoint may show a secret. Secrets are the values of variables whose
// names say so (secretName), of those the config names in secret_env
// (secretEnv: kube play lists there what came from a Kubernetes Secret),
// and the passwords of URLs with credentials
// (DATABASE_URL=postgres://app:PASSWORD@db/app) in any variable. Other
// values stay: redacting every value blanked addresses, modes and paths,
// and "dial tcp ${BIND_ADDR}:1" read as a failed interpolation.
func envRedactor(env, secretEnv []string) *strings.Replacer {
	type kv struct{ k, v string }
	var pairs []kv
	for _, e := range env {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			continue
		}
		if (secretName(k) || slices.Contains(secretEnv, k)) && len(v) >= minRedacted {
			pairs = append(pairs, kv{k, v})
			continue
		}
		if pw := urlPassword(v); len(pw) >= minRedacted {
			pairs = append(pairs, kv{k, pw})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// Longest first, so a value containing another is replaced whole.
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i].v) > len(pairs[j].v) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.v, "[redacted: "+p.k+"]")
	}
	return strings.NewReplacer(args...)
}

// urlPassword returns the password of a URL with credentials
// (scheme://user:password@host), or "".
func urlPassword(v string) string {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// redactingChecker redacts secrets from a checker's details.
type redactingChecker struct {
	health.Checker
	r *strings.Replacer
}

func (c redactingChecker) Check(ctx context.Context) health.Result {
	res := c.Checker.Check(ctx)
	if c.r != nil {
		res.Detail = c.r.Replace(res.Detail)
	}
	return res
}
