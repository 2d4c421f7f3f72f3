package childenv

import (
	"regexp"
	"strings"
	"testing"
)

// Credentials the name patterns and the first value rules let through: a
// Bitwarden session, a Tailscale auth key, passwords inside connection
// strings and queries, connection URLs of every scheme, webhook URLs, and
// tokens inside a longer value. Each row is a value a terminal child must
// not see; the harmless rows must still reach it.
func TestIsSecretValues(t *testing.T) {
	for _, name := range []string{"BW_SESSION", "bw_session", "TS_AUTHKEY", "TAILSCALE_AUTHKEY", "NGROK_AUTHTOKEN",
		"AZURE_STORAGE_CONNECTION_STRING", "APPLICATIONINSIGHTS_CONNECTION_STRING"} {
		if !IsSecret(name, "x") {
			t.Errorf("name %s kept", name)
		}
	}
	for _, name := range []string{"PATH", "HOME", "LANG", "TERM", "DESKTOP_SESSION", "XDG_SESSION_TYPE",
		"AUTHOR", "KEYBOARD", "MAKEFLAGS", "LS_COLORS"} {
		if IsSecret(name, "ordinary") {
			t.Errorf("name %s stripped", name)
		}
	}
	strip := []string{
		// connection URLs with a password in the userinfo
		"postgres://app:hunter2@db:5432/app", "postgresql://u:p@h/db",
		"mongodb+srv://user:pa55@cluster0.abcd.mongodb.net/app?retryWrites=true",
		"mongodb://u:p@h1:27017,h2:27017/db", "redis://:secretpw@cache:6379/0", "rediss://default:pw@h:6380",
		"amqp://guest:guest@rabbit:5672/", "amqps://u:p@h/vhost", "mysql://root:pw@localhost/db",
		"sqlserver://sa:Passw0rd@host?database=app", "http://user:pw@proxy:3128", "https://u:p%40ss@h",
		"https://u:p@ss@h/x", "https://x-access-token:ghs_abc@github.com/o/r.git", "jdbc:postgresql://u:p@h/db",
		"db=postgres://u:p@h/d other=1", "primary;redis://:p@h",
		// passwords and other credentials as key=value inside a value
		"Server=tcp:x.database.windows.net,1433;Initial Catalog=db;User ID=u;Password=pw;",
		"Host=h;Username=u;Pwd=x", "Data Source=h; password = x", "host=db user=app password=hunter2 dbname=app",
		"postgres://h/db?user=u&password=p", "jdbc:mysql://h/db?user=u&password=p",
		"jdbc:sqlserver://h;databaseName=db;password=p", "-Djavax.net.ssl.trustStorePassword=changeit",
		"https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc",
		"https://acct.blob.core.windows.net/c?sv=2020-08-04&sig=abc%3D", "https://api.example.com/v1?api_key=abc",
		"https://x.example/?access_token=abc", "https://maps.googleapis.com/maps/api/js?key=AIzaSyA",
		"ldap://h/?bind_pass=x", "--db-pass=x", "auth.secret=x", "opts,client_secret=x",
		`{"user":"u","password":"p"}`, `{"auth": {"token": "x"}}`, `{"apiKey":"k"}`,
		// webhooks
		"https://hooks.slack.com/services/T000/B000/XXXX", "https://HOOKS.SLACK.COM./services/T/B/X",
		"https://hooks.slack.com/workflows/T/A/1/x", "https://discord.com/api/webhooks/123/abc",
		"https://discordapp.com/api/webhooks/123/abc", "https://canary.discord.com/api/v10/webhooks/1/a",
		"https://outlook.office.com/webhook/abc@def/IncomingWebhook/x/y",
		"https://contoso.webhook.office.com/webhookb2/abc/IncomingWebhook/def/ghi",
		"https://prod-00.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=1",
		"https://hooks.zapier.com/hooks/catch/123/abc/", "https://chat.googleapis.com/v1/spaces/AAA/messages",
		"https://api.telegram.org/bot123:ABC/sendMessage", "https://maker.ifttt.com/trigger/e/with/key/abc",
		"https://chat.example.org/hooks/xjw8e7bq5fr4bkyy3hzmcbrnya", "https://git.example/api/webhook/0123456789abcdef",
		"notify=https://hooks.slack.com/services/T/B/X",
		// tokens inside a longer value
		"https://ghp_abcdefghijklmnop@github.com/o/r", "Authorization: Bearer abcdefghij", "-H authorization:x",
		"curl bearer abcdefghijkl", "creds aws:AKIAIOSFODNN7EXAMPLE", "xoxb-123456789-abcdefgh",
		"token=glpat-abcdefghijklmnop",
		strings.Repeat("a", maxScannedValue+1), // too long to read: stripped unread
	}
	for _, v := range strip {
		if !IsSecret("ANYTHING", v) {
			t.Errorf("value %q kept", v)
		}
	}
	keep := []string{
		"/usr/local/bin:/usr/bin:/bin", "/home/u", "en_US.UTF-8", "C.UTF-8", "xterm-256color",
		"http://localhost:3000", "http://127.0.0.1:8080/api", "http://[::1]:5173/", "https://example.com/a@b",
		"git@github.com:o/r", "ssh://git@github.com/o/r.git", "https://github.com/o/r", "postgres://app@db/app",
		"http://user:@host", "http://localhost:3000/webhooks/stripe", "https://example.com/hooks/short",
		"https://example.com/path?page=2&sort=asc", "https://example.com/?q=token", "https://slack.com/services/x",
		"rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:ex=01;32:*.tar=01;31",
		" --jobserver-auth=fifo:/tmp/GMfifo123 -j4", "--max-old-space-size=4096", "-R", "| /usr/bin/lesspipe %s",
		"Server=db;Database=app;Integrated Security=true", "1.2.3.4 51234 5.6.7.8 22", "unix:path=/run/user/1000/bus",
		"keyboard=us", "monkey=1", "bypass=1", "/home/u/ghp_notes", "a-bearer-token", "AKIAFOO", "sessions=3",
		`{"name":"x","tokens":3}`, strings.Repeat("a", maxScannedValue),
	}
	for _, v := range keep {
		if IsSecret("ANYTHING", v) {
			t.Errorf("value %.80q stripped", v)
		}
	}
}

// FuzzSecretValue: the value rules never panic on any bytes; a connection
// URL with a password is found wherever it sits after a space, whatever
// its user, password and host; and a harmless URL before a clean value
// never makes it a secret.
func FuzzSecretValue(f *testing.F) {
	f.Add("DATABASE_URL", "app", "hunter2", "db:5432")
	f.Add("x://", "", "p@ss:w", "[::1]:1")
	f.Add(strings.Repeat("://", 70), "u", "p", "h")
	f.Add("Authorization:", "u", "p", "hooks.slack.com")
	f.Add("eyJ", "", "%40", "h")
	f.Fuzz(func(t *testing.T, prefix, user, pass, host string) {
		clean := !secretValue(prefix)
		const stops = " \t\r\n\"'<>`,;|"
		if pass != "" && !strings.ContainsAny(user+pass+host, stops+"/?#") && !strings.ContainsAny(user, ":@") &&
			!strings.ContainsAny(host, "@") {
			v := prefix + " postgres://" + user + ":" + pass + "@" + host + "/db"
			if !secretValue(v) {
				t.Fatalf("%q kept", v)
			}
		}
		if clean && len(prefix) < maxScannedValue-64 && strings.Count(prefix, "://") < maxURLs-1 {
			v := "http://localhost:3000/" + strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' {
					return r
				}
				return -1
			}, user)
			if len(v) < 22+16 && secretValue(v+" "+prefix) {
				t.Fatalf("%q made %q a secret", v, prefix)
			}
		}
	})
}

// The scanners say in a few linear loops what these expressions say, and
// the expressions, unanchored, cost milliseconds on a long value. Built in
// the fuzz target, not at init (TestInitIsCheap measures the init).
func valueExpressions() (credentialKeyRe, tokenInsideRe, authInsideRe *regexp.Regexp) {
	credentialKeyRe = regexp.MustCompile(`(?i:(^|[;&?,\s])[a-z0-9_.-]*(password|passwd|secret|token|api[_-]?key|accountkey|sharedaccesskey|signature)\s*=)|` +
		`(?i:(^|[;&?,\s])([a-z0-9_.-]*[_.-])?(pwd|pass|sig|key)\s*=)|` +
		`(?i:"[a-z0-9_.-]*(password|passwd|secret|token|api_?key|private_?key|access_?key)"\s*:\s*"[^"])`)
	tokenInsideRe = regexp.MustCompile(`(^|[^A-Za-z0-9])(gh[pousr]_|github_pat_|glpat-|xox[abpr]-|sk-ant-|sk-proj-|[sr]k_live_|pypi-AgE)[A-Za-z0-9_-]{8}|` +
		`(^|[^A-Za-z0-9])AKIA[0-9A-Z]{16}([^A-Za-z0-9]|$)`)
	authInsideRe = regexp.MustCompile(`(?i:authorization:\s*\S|\sbearer\s+[A-Za-z0-9._~+/=-]{8})`)
	return
}

// FuzzValueScanners: on any ASCII value shorter than the scanners' look
// back (the expressions fold case beyond ASCII, the Kelvin sign for k),
// each scanner agrees with its expression.
func FuzzValueScanners(f *testing.F) {
	for _, s := range []string{"a;db_pass = x", `{"apiKey" : "k"}`, `"token":""`, "bypass=1", " Bearer abcdefgh",
		"Authorization:\tx", "x/AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLEX", "ghp_abcdefg", "-ghp_abcdefgh", "q?sig=", "=", `"":"x"`} {
		f.Add(s)
	}
	credentialKeyRe, tokenInsideRe, authInsideRe := valueExpressions()
	f.Fuzz(func(t *testing.T, v string) {
		if len(v) >= maxKey {
			return
		}
		for i := 0; i < len(v); i++ {
			if v[i] >= 0x80 {
				return
			}
		}
		if got, want := credentialKey(v), credentialKeyRe.MatchString(v); got != want {
			t.Errorf("credentialKey(%q) = %v, the expression says %v", v, got, want)
		}
		if got, want := tokenInside(v), tokenInsideRe.MatchString(v); got != want {
			t.Errorf("tokenInside(%q) = %v, the expression says %v", v, got, want)
		}
		if got, want := authInside(v), authInsideRe.MatchString(v); got != want {
			t.Errorf("authInside(%q) = %v, the expression says %v", v, got, want)
		}
	})
}
