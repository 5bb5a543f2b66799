package launch

import (
	"context"
	"testing"

	"github.com/podvisor/podvisor/internal/health"
)

type detailChecker string

func (d detailChecker) Check(context.Context) health.Result { return health.Result{Detail: string(d)} }

// TestProbeDetailRedactsSecretsOnly: a probe's failure text hides the
// values of secret-looking variables and URL passwords, names what it hid,
// and leaves addresses, modes and paths alone.
func TestProbeDetailRedactsSecretsOnly(t *testing.T) {
	env := []string{
		"BIND_ADDR=127.0.0.1",
		"LOG_MODE=production",
		"DATA_DIR=/var/lib/app-data",
		"PWD=/srv/application",
		"DB_PASSWORD=hunter22-very-secret",
		"API_KEY=k-0123456789",
		"GITHUB_TOKEN=ghp_abcdefgh",
		"DATABASE_URL=postgres://app:pg-s3cret-pw@db.internal:5432/app",
		"SHORT_TOKEN=ab",
		"LICENSE=lic-4242-abcd", // a secret by secret_env, not by its name
	}
	tests := []struct{ detail, want string }{
		{"dial tcp 127.0.0.1:1: connect: connection refused", "dial tcp 127.0.0.1:1: connect: connection refused"},
		{"mode production in /var/lib/app-data (cwd /srv/application)", "mode production in /var/lib/app-data (cwd /srv/application)"},
		{"login failed with hunter22-very-secret", "login failed with [redacted: DB_PASSWORD]"},
		{"key=k-0123456789 token=ghp_abcdefgh", "key=[redacted: API_KEY] token=[redacted: GITHUB_TOKEN]"},
		{"connect postgres://app:pg-s3cret-pw@db.internal:5432/app: refused", "connect postgres://app:[redacted: DATABASE_URL]@db.internal:5432/app: refused"},
		{"ab cd", "ab cd"},
		{"license lic-4242-abcd refused", "license [redacted: LICENSE] refused"},
	}
	r := envRedactor(env, []string{"LICENSE"})
	if r == nil {
		t.Fatal("no redactor for an environment with secrets")
	}
	for _, tt := range tests {
		res := redactingChecker{detailChecker(tt.detail), r}.Check(context.Background())
		if res.Detail != tt.want {
			t.Errorf("%q\nredacted to %q\nwant        %q", tt.detail, res.Detail, tt.want)
		}
	}
	if r := envRedactor([]string{"BIND_ADDR=127.0.0.1", "HOME=/home/someone"}, nil); r != nil {
		t.Errorf("a redactor for an environment without secrets: %v", r.Replace("127.0.0.1 /home/someone"))
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"DB_PASSWORD": true, "PGPASSWORD": true, "AWS_SECRET_ACCESS_KEY": true, "API_KEY": true,
		"GITHUB_TOKEN": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "REDIS_PASS": true, "SENTRY_DSN": true,
		"db_password": true, "BIND_ADDR": false, "KEYBOARD": false, "PWD": false, "OLDPWD": false,
		"LOG_LEVEL": false, "PATH": false, "HOME": false, "MODE": false,
	} {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%q) = %v, want %v", name, got, want)
		}
	}
}
