package jsonstr

import "testing"

// TestPlainRunWithoutAVX2: the SSE2 loop alone, as a CPU without AVX2
// runs it.
func TestPlainRunWithoutAVX2(t *testing.T) {
	if !useAVX2 {
		t.Log("this CPU has no AVX2: the other tests ran the SSE2 loop alone")
	}
	defer func(was bool) { useAVX2 = was }(useAVX2)
	useAVX2 = false
	for b := range escapeInputs() {
		checkPlainRun(t, "plainRun (SSE2)", b, plainRun)
	}
}
