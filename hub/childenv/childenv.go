package childenv

import (
	"os"
	"strings"

	"github.com/hubdev/hub/internal/lazyre"
)

// SecretNamePatterns are the environment variable names stripped from every
// child of the hub, matched case-insensitively; "*" matches any run of
// characters (including none). They are deliberately broad: a harmless
// variable lost costs little, a token printed by `env` into an agent's
// transcript costs a credential.
var SecretNamePatterns = []string{
	"*TOKEN*",             // GITHUB_TOKEN, GH_TOKEN, NPM_TOKEN, HF_TOKEN, *_AUTH_TOKEN
	"*SECRET*",            // AWS_SECRET_ACCESS_KEY, CLIENT_SECRET, SECRET_KEY_BASE
	"*PASSWORD*",          // PGPASSWORD, MYSQL_ROOT_PASSWORD
	"*PASSWD*",            //
	"*PASSPHRASE*",        //
	"*_PASS",              // SMTP_PASS, DB_PASS
	"SSHPASS",             // sshpass -e
	"*_PAT",               // GH_PAT, ADO_PAT (personal access tokens)
	"*_PAT_*",             //
	"*_PWD",               // MYSQL_PWD (PWD and OLDPWD are handled apart)
	"*CREDENTIAL*",        // GOOGLE_APPLICATION_CREDENTIALS, *_CREDENTIALS
	"*API_KEY*",           // OPENAI_API_KEY, ANTHROPIC_API_KEY
	"*APIKEY*",            //
	"*AUTHKEY*",           // TS_AUTHKEY, TAILSCALE_AUTHKEY
	"*_KEY",               // STRIPE_KEY, *_PRIVATE_KEY, *_ACCESS_KEY
	"*_KEYS",              //
	"*PRIVATE_KEY*",       //
	"*ACCESS_KEY*",        // AWS_ACCESS_KEY_ID
	"*_AUTH",              // NPM_CONFIG__AUTH
	"*_AUTH_*",            // DOCKER_AUTH_CONFIG
	"AUTH_*",              // AUTH_HEADER
	"AUTH",                //
	"*JWT*",               // CI_JOB_JWT, JWT (a bearer token by another name)
	"OP_SESSION_*",        // 1Password CLI session tokens
	"BW_SESSION",          // Bitwarden CLI session key
	"*COOKIE*",            //
	"*_DSN",               // SENTRY_DSN
	"*CONNECTION_STRING*", // AZURE_STORAGE_CONNECTION_STRING
	"*WEBHOOK*",           // SLACK_WEBHOOK_URL
	"AWS_*",               // every AWS setting, as the brief asks
	"GETMCP_OPENCODE_*",
	"OPENCODE_SERVER_*",
}

// keptNames are never stripped although a pattern matches them: they are
// not secrets (SSH_AUTH_SOCK is a socket path that git over ssh needs).
var keptNames = map[string]bool{
	"SSH_AUTH_SOCK":          true,
	"TOKENIZERS_PARALLELISM": true,
}

// maxScannedValue bounds how much of one value IsSecret reads; a longer
// value (no ordinary variable comes near it) is stripped unread.
const maxScannedValue = 64 << 10

// startRe matches values whose start is a credential: a Go MySQL DSN
// (user:pw@tcp(host)/db), a well-known token format, or an Authorization
// value. Anchored, it costs one pass at most. Compiled on first use.
var startRe = lazyre.New(`^(` +
	`[^\s:/@]+:[^\s@]+@(tcp|unix)\(|` +
	`ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abpr]-|sk-ant-|sk-proj-|AKIA[0-9A-Z]{12}|pypi-AgE|[sr]k_live_|` +
	`eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]*\.|npm_[A-Za-z0-9]{36}|hf_[A-Za-z]{30}|AIza[0-9A-Za-z_-]{35}|sk-[A-Za-z0-9_-]{20}|` +
	`(?i:bearer|basic|token)\s+\S)`)

// pemRe matches private key material, once the cheap test for its marker
// passed; compiled on first use.
var pemRe = lazyre.New(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)

// IsSecret reports whether an environment variable is stripped from the
// hub's children: its name matches SecretNamePatterns or extra (and is
// not SSH_AUTH_SOCK or TOKENIZERS_PARALLELISM), or its value looks like a
// credential (secretValue).
func IsSecret(name, value string, extra ...string) bool {
	up := strings.ToUpper(name)
	if keptNames[up] {
		return false
	}
	for _, p := range SecretNamePatterns {
		if globMatch(p, up) {
			return true
		}
	}
	for _, p := range extra {
		if globMatch(strings.ToUpper(p), up) {
			return true
		}
	}
	return secretValue(value)
}

// secretValue reports whether a value looks like a credential, wherever
// it sits in the value: its start (startRe), a credential's key=value or
// JSON key (credentialKey), a distinctive token prefix (tokenInside), an
// Authorization header or bearer token (authInside), private key material,
// or a URL that carries one (secretURL). A value too long to scan counts
// as one. Every rule is a linear scan: no regular expression runs
// unanchored over a value.
func secretValue(v string) bool {
	return len(v) > maxScannedValue || startRe().MatchString(v) || credentialKey(v) || tokenInside(v) ||
		authInside(v) || strings.Contains(v, "PRIVATE KEY-----") && pemRe().MatchString(v) || secretURL(v)
}

// Strip is env without its secrets (IsSecret, with extra name patterns)
// and without malformed entries (no "=", or an empty name); what remains
// keeps its order. env is not modified.
func Strip(env []string, extra ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || IsSecret(name, value, extra...) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Environ is the environment a child of the hub starts from: the hub's
// own (os.Environ) without its secrets.
func Environ() []string { return Strip(os.Environ()) }

// globMatch matches s against a pattern whose only metacharacter is *.
func globMatch(pattern, s string) bool {
	px, sx := 0, 0
	star, mark := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			star, mark = px, sx
			px++
		case px < len(pattern) && pattern[px] == s[sx]:
			px++
			sx++
		case star >= 0:
			px = star + 1
			mark++
			sx = mark
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}
