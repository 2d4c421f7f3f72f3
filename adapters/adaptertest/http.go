package adaptertest

import (
	"bytes"
	"io"
	"net/http"
	"time"
)

// Request describes one HTTP call to the adapter.
type Request struct {
	Method string
	Path   string
	Body   []byte
	Header http.Header
	Host   string // overrides the Host header
}

// Response is a fully read HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends r to the harness's adapter and reads the whole answer.
func (h *Harness) Do(r Request) Response {
	h.T.Helper()
	resp, err := Do(h.URL(r.Path), r)
	if err != nil {
		h.T.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	return resp
}

// Do sends r to url and reads the whole answer.
func Do(url string, r Request) (Response, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	req, err := http.NewRequest(r.Method, url, bytes.NewReader(r.Body))
	if err != nil {
		return Response{}, err
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	if r.Host != "" {
		req.Host = r.Host
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, err
	}
	client.CloseIdleConnections()
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}
