package plugin

import "testing"

func TestNarrowNeverWidens(t *testing.T) {
	session := Authority{Root: "/srv/app", Write: true, Terminal: false}
	for _, tc := range []struct {
		name string
		b    Authority
		want Authority
		ok   bool
	}{
		{"same", session, session, true},
		{"deeper root, more rights asked", Authority{Root: "/srv/app/sub", Write: true, Terminal: true}, Authority{Root: "/srv/app/sub", Write: true}, true},
		{"wider root", Authority{Root: "/srv", Write: true, Terminal: true}, Authority{Root: "/srv/app", Write: true}, true},
		{"sibling", Authority{Root: "/srv/application"}, Authority{}, false},
		{"elsewhere", Authority{Root: "/etc"}, Authority{}, false},
		{"read-only", Authority{Root: "/srv/app"}, Authority{Root: "/srv/app"}, true},
		{"bridges the session lacks", Authority{Root: "/srv/app", Write: true, Bridges: true}, Authority{Root: "/srv/app", Write: true}, true},
	} {
		got, ok := session.Narrow(tc.b)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: Narrow = %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
		if ok && (got.Write && !session.Write || got.Terminal && !session.Terminal || got.Bridges && !session.Bridges || !Contains(session.Root, got.Root)) {
			t.Errorf("%s: %+v is wider than the session's %+v", tc.name, got, session)
		}
	}
}
