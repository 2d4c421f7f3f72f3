package childenv

import "testing"

// Credentials that slipped through the first set of rules: a bare AUTH, a
// CI job's JWT, a 1Password CLI session, and values that carry a password
// without a URL scheme (a Go MySQL DSN, an ADO.NET or Azure connection
// string) or a token format the prefix list missed.
func TestIsSecretMore(t *testing.T) {
	for _, name := range []string{"AUTH", "CI_JOB_JWT", "JWT", "OP_SESSION_my"} {
		if !IsSecret(name, "x") {
			t.Errorf("%s kept", name)
		}
	}
	for _, v := range []string{
		"root:hunter2@tcp(127.0.0.1:3306)/app",
		"app:pw@unix(/run/mysqld.sock)/db",
		"Server=db;Database=app;User Id=sa;Password=hunter2;",
		"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==;",
		"Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=abc=",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
		"npm_abcdefghijklmnopqrstuvwxyz0123456789",
		"hf_abcdefghijklmnopqrstuvwxyzABCD",
		"AIzaSyA1234567890abcdefghijklmnopqrstuv",
		"pypi-AgEIcHlwaS5vcmcCJGI",
		"sk-abcdefghijklmnopqrstuvwxyz012345",
		"sk_live_abcdefghijklmnop", "rk_live_abcdefghijklmnop",
	} {
		if !IsSecret("ANYTHING", v) {
			t.Errorf("value %q kept", v)
		}
	}
	for _, v := range []string{"eyJ", "Server=db;Database=app", "npm_config", "hf_home", "sk-short",
		"user@host", "a:b", "AUTHOR", "pw=1"} {
		if IsSecret("ANYTHING", v) {
			t.Errorf("value %q stripped", v)
		}
	}
	if IsSecret("AUTHOR", "x") || IsSecret("JWKS_URL", "x") {
		t.Error("an ordinary name stripped")
	}
}
