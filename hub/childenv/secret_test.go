package childenv

import "testing"

func TestIsSecret(t *testing.T) {
	for _, name := range []string{
		"GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
		"github_token", "Hf_Token", "SLACK_BOT_TOKEN", "VAULT_TOKEN", "CODECOV_TOKEN",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
		"AZURE_CLIENT_SECRET", "CLIENT_SECRET", "SECRET_KEY_BASE", "JWT_SECRET",
		"PGPASSWORD", "MYSQL_ROOT_PASSWORD", "DB_PASSWD", "SSH_PASSPHRASE", "SMTP_PASS", "MYSQL_PWD",
		"GOOGLE_APPLICATION_CREDENTIALS", "DOCKER_CREDENTIALS", "STRIPE_API_KEY", "MAPS_APIKEY",
		"STRIPE_KEY", "SIGNING_PRIVATE_KEY", "DEPLOY_KEYS", "NPM_CONFIG__AUTH", "DOCKER_AUTH_CONFIG",
		"SESSION_COOKIE", "SENTRY_DSN", "SLACK_WEBHOOK_URL",
		"GETMCP_OPENCODE_PASSWORD", "GETMCP_OPENCODE_URL", "OPENCODE_SERVER_PASSWORD",
		"STITCHSLOP_TOKEN", "GH_PAT", "ADO_PAT_RW", "SSHPASS", "AUTH_HEADER",
	} {
		if !IsSecret(name, "x") {
			t.Errorf("%s kept", name)
		}
	}
	for _, name := range []string{
		"PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER", "SHELL", "TMPDIR", "GOPATH", "GOCACHE",
		"NODE_ENV", "EDITOR", "SSH_AUTH_SOCK", "TOKENIZERS_PARALLELISM", "XAUTHORITY", "KEYTIMEOUT",
		"COLORTERM", "NO_COLOR", "CI", "HOSTNAME", "SSH_ASKPASS", "PAGER", "AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"PATTERN", "XPATH", "MANPATH", "BYPASS_CACHE",
	} {
		if IsSecret(name, "ordinary value") {
			t.Errorf("%s stripped", name)
		}
	}
	for _, v := range []string{
		"postgres://app:hunter2@db:5432/app", "http://user:pw@proxy:3128", "redis://:pw@cache:6379",
		"ghp_abcdefghijklmnop", "github_pat_11AAA", "glpat-xyz", "xoxb-1-2", "sk-ant-api03-x",
		"sk-proj-abc", "AKIAABCDEFGHIJKLMNOP", "Bearer eyJhbGciOi", "basic dXNlcjpwdw==",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE", `{"type":"service_account","private_key":"x"}`,
	} {
		if !IsSecret("ANYTHING", v) {
			t.Errorf("value %q kept", v)
		}
	}
	for _, v := range []string{"http://localhost:3000", "https://example.com/a@b", "git@github.com:o/r", "sk-", "/home/u",
		"bearer", "tokens are fun", "-----BEGIN CERTIFICATE-----"} {
		if IsSecret("ANYTHING", v) {
			t.Errorf("value %q stripped", v)
		}
	}
	if !IsSecret("MY_INTERNAL_THING", "x", "my_internal_*") {
		t.Error("extra pattern ignored")
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		ok   bool
	}{
		{"*TOKEN*", "TOKEN", true}, {"*TOKEN*", "A_TOKEN_B", true}, {"*_KEY", "A_KEY", true},
		{"*_KEY", "A_KEYS", false}, {"*_KEY", "KEY", false}, {"AWS_*", "AWS_", true},
		{"AWS_*", "XAWS_A", false}, {"a*b*c", "aXbYbZc", true}, {"a*b*c", "aXbYbZ", false}, {"", "", true},
	} {
		if globMatch(tc.p, tc.s) != tc.ok {
			t.Errorf("globMatch(%q, %q) != %v", tc.p, tc.s, tc.ok)
		}
	}
}
