//go:build !amd64

package jsonstr

func plainRun(b []byte) (i, shrink int) { return plainRunGeneric(b) }
