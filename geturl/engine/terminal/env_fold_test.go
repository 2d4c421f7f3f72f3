package terminal

import (
	"slices"
	"strings"
	"testing"
)

// On Windows, variable names ignore case: a secret or the hub's own
// directory under any spelling is stripped, and nothing else is.
func TestChildEnvFold(t *testing.T) {
	base := []string{
		"Path=C:\\bin", "SystemRoot=C:\\Windows", "Pwd=C:\\hub", "oldPwd=C:\\", "github_Token=ghp_x",
		"Npm_Config__Auth=abc", "my_Api_Key=k", "ssh_auth_sock=\\\\.\\pipe\\ssh", "Extra_Thing=1",
	}
	got := childEnvFold(base, []string{"extra_*"}, `C:\p\src`, true)
	want := []string{"Path=C:\\bin", "SystemRoot=C:\\Windows", "ssh_auth_sock=\\\\.\\pipe\\ssh", `PWD=C:\p\src`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// Without fold (unix), pwd is another variable than PWD.
	if got := childEnvFold([]string{"pwd=x", "PWD=y"}, nil, "/p", false); !slices.Equal(got, []string{"pwd=x", "PWD=/p"}) {
		t.Fatalf("unix: %q", got)
	}
}

// On Windows output names the project in any case and with either
// separator (git prints C:/Users/..., cmd C:\USERS\...): all of it is
// /project.
func TestRedactorFold(t *testing.T) {
	r := newRedactor(`C:\Users\u\App`, "/project", true)
	in := `at C:\Users\u\App\src\a.go, c:/users/u/app/b, C:\USERS\U\APP. C:\Users\u\Apple stays? C:\Users\v\App`
	var out []byte
	for i := 0; i < len(in); i += 5 {
		out = r.write(out, []byte(in[i:min(i+5, len(in))]))
	}
	out = r.flush(out)
	want := `at /project\src\a.go, /project/b, /project. /projectle stays? C:\Users\v\App`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

// FuzzRedactorFold: with fold, the root in any case and with either
// separator never survives, whatever the read boundaries.
func FuzzRedactorFold(f *testing.F) {
	f.Add(`a C:\R\oot b c:/r/OOT`, uint8(3))
	f.Add(`C:\R\oC:\R\oot`, uint8(1))
	f.Fuzz(func(t *testing.T, s string, split uint8) {
		const root = `C:\R\oot`
		n := int(split%16) + 1
		r := newRedactor(root, "/project", true)
		var out []byte
		for i := 0; i < len(s); i += n {
			out = r.write(out, []byte(s[i:min(i+n, len(s))]))
		}
		out = r.flush(out)
		norm := strings.ToLower(strings.ReplaceAll(string(out), `\`, "/"))
		if strings.Contains(norm, "c:/r/oot") && !strings.Contains(strings.ToLower(strings.ReplaceAll(s, `\`, "/")), "/projec") {
			t.Fatalf("the root survived: %q -> %q", s, out)
		}
	})
}
