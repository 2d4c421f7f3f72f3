// Package sample is outlined in tests.
package sample

import (
	_ "embed"
	"fmt"
	str "strings"
)

// Answer is a constant.
const Answer = 42

const (
	a, b = 1, 2
	_    = 3
)

var errBad = fmt.Errorf("bad")

type Server struct {
	name string
}

type Handler interface {
	Serve()
}

type Alias = Server

type Pair[K comparable, V any] struct {
	k K
	v V
}

func New(name string) *Server {
	return &Server{name: str.ToUpper(name)}
}

func (s *Server) Serve() {}

func (p Pair[K, V]) Key() K { return p.k }

func internal() {}
