package hub

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

func TestDateHeaderOncePerSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) // the start of a second
		first := DateHeader()
		if want := time.Now().UTC().Format(http.TimeFormat); len(first) != 1 || first[0] != want {
			t.Fatalf("DateHeader() = %q, want [%q]", first, want)
		}
		time.Sleep(999 * time.Millisecond)
		if again := DateHeader(); &again[0] != &first[0] {
			t.Fatalf("formatted again within the second: %q", again)
		}
		time.Sleep(time.Millisecond)
		next := DateHeader()
		if want := time.Now().UTC().Format(http.TimeFormat); next[0] != want || next[0] == first[0] {
			t.Fatalf("DateHeader() a second later = %q, want [%q]", next, want)
		}
	})
}

// TestDateHeaderReplacesNetHTTPs: net/http sends the handler's Date, once.
func TestDateHeaderReplacesNetHTTPs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = DateHeader()
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	before := time.Now().Truncate(time.Second)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	after := time.Now()
	got := resp.Header.Values("Date")
	if len(got) != 1 {
		t.Fatalf("Date headers: %q", got)
	}
	at, err := http.ParseTime(got[0])
	if err != nil || at.Before(before) || at.After(after) {
		t.Fatalf("Date %q (%v), want a time between %v and %v", got[0], err, before, after)
	}
}
