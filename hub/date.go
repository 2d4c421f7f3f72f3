package hub

import (
	"net/http"
	"sync/atomic"
	"time"
)

// httpDate is a Date header value and the second it names.
type httpDate struct {
	sec int64
	v   []string
}

var date atomic.Pointer[httpDate]

// DateHeader is the value of a response's Date header for now, formatted
// once a second and shared: a handler that sets it (h["Date"] =
// DateHeader()) spares net/http formatting one per response. Callers
// must not modify it.
func DateHeader() []string {
	now := time.Now()
	if d := date.Load(); d != nil && d.sec == now.Unix() {
		return d.v
	}
	d := &httpDate{sec: now.Unix(), v: []string{now.UTC().Format(http.TimeFormat)}}
	date.Store(d)
	return d.v
}
