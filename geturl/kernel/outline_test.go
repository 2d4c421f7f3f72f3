package kernel

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/route"
	"github.com/hubdev/hub/geturl/transport"
)

func TestOutline(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "evil.ts"), []byte("export function secretThing() {}\n"), 0o644)
	p := newProject(t, map[string]string{
		"src/app.tsx": "import React from 'react';\nimport { a } from \"./a\";\n\nexport function App() {\n  const s = `${'}'}`;\n  return <div>{'}'}</div>;\n}\n\nexport class Store {\n  get(k: string) { return k; }\n}\n",
		"main.go":     "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n\ntype T struct{}\n\nfunc (T) M() {}\n",
		"notes.py":    "def f(): pass\n",
		"stub.go":     "// TODO\n",
		"link.ts":     "->" + filepath.Join(outside, "evil.ts"),
		"dir/":        "",
	})
	var o struct {
		OK       bool   `json:"ok"`
		Path     string `json:"path"`
		Language string `json:"language"`
		Imports  []struct {
			Line   int    `json:"line"`
			Module string `json:"module"`
		} `json:"imports"`
		Decls []struct {
			Line   int    `json:"line"`
			Kind   string `json:"kind"`
			Name   string `json:"name"`
			Parent string `json:"parent"`
		} `json:"declarations"`
	}
	p.ok("/o?path=src/app.tsx", &o)
	if o.Path != "/project/src/app.tsx" || len(o.Imports) != 2 || o.Imports[1].Module != "./a" {
		t.Fatalf("%+v", o)
	}
	names := []string{}
	for _, d := range o.Decls {
		names = append(names, d.Kind+":"+d.Name+"@"+strconv.Itoa(d.Line))
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "function:App@4") || !strings.Contains(joined, "class:Store@9") || !strings.Contains(joined, "method:get@10") {
		t.Fatalf("declarations %s", joined)
	}
	o.Decls = nil
	p.ok("/o?file=main.go", &o)
	if o.Language == "" || len(o.Decls) < 3 {
		t.Fatalf("go: %+v", o)
	}
	if e := p.fail("/o?path=notes.py", CodeUnsupportedLanguage); e.Repair != readBase+"/r?path=/project/notes.py" {
		t.Fatalf("repair %q", e.Repair)
	}
	// A .go file go/parser finds no package clause in was read fine: it
	// is not a read failure, and /r shows it.
	if e := p.fail("/o?path=stub.go", CodeUnsupportedLanguage); e.Repair != readBase+"/r?path=/project/stub.go" || !e.Retryable {
		t.Fatalf("go file without a package clause: %+v", e)
	}
	p.fail("/o?path=dir", CodeNotAFile)
	p.fail("/o?path=link.ts", "symlink_escape")
	p.fail("/o?path=../x.ts", "path_traversal")
	p.fail("/o", transport.CodeMissingParameter)
}

// generatedGo is about n bytes of generated Go: a table of bytes, the
// shape of a .pb.go descriptor (go/parser makes a node of each).
func generatedGo(n int) string {
	var b strings.Builder
	b.WriteString("package gen\n\nfunc Get() []byte { return table }\n\nvar table = []byte{\n")
	for b.Len() < n-16 {
		b.WriteString("\t0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71,\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// TestOutlineMemory: one /o of a 2 MiB file allocates about the file
// once (it is read into one buffer of its size; the streaming scan
// allocates next to nothing), and eight at once, from one read token,
// add to the heap no more than the outline slots hold. Before, one such
// /o allocated 52 MB (25 times the file), and eight at once grew the heap
// by 276 MiB: they all ran together.
func TestOutlineMemory(t *testing.T) {
	src := generatedGo(2 << 20)
	p := newProject(t, map[string]string{"gen.go": src})
	var o struct {
		Decls   []struct{ Name string } `json:"declarations"`
		Scanned bool                    `json:"scanned"`
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.ok("/o?path=gen.go", &o)
	runtime.ReadMemStats(&after)
	n := after.TotalAlloc - before.TotalAlloc
	t.Logf("one /o of %d bytes: %d bytes allocated (%.2f×)", len(src), n, float64(n)/float64(len(src)))
	if n > 2*uint64(len(src)) || len(o.Decls) != 2 || !o.Scanned {
		t.Fatalf("%d bytes allocated for a %d-byte file; outline %+v", n, len(src), o)
	}

	const concurrent = 8
	peak := peakHeap(func() {
		var wg sync.WaitGroup
		for range concurrent {
			wg.Go(func() {
				if _, err := p.call("/o?path=gen.go"); err != nil {
					t.Errorf("concurrent /o: %v", err)
				}
			})
		}
		wg.Wait()
	})
	// A slot holds the source and the scan's few hundred KiB; the rest
	// is the answers and the sampler's lag behind the collector.
	bound := uint64(DefaultOutlines*3*len(src) + 16<<20)
	t.Logf("%d concurrent: peak heap growth %.1f MiB (bound %.1f MiB)", concurrent, float64(peak)/(1<<20), float64(bound)/(1<<20))
	if peak > bound {
		t.Fatalf("%d concurrent /o of a %d-byte file grew the heap by %d bytes", concurrent, len(src), peak)
	}
}

// peakHeap runs fn and returns the largest growth of the heap's objects
// seen while it ran (sampled every 50 µs, from a collected start).
func peakHeap(fn func()) uint64 {
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Microsecond)
		defer tick.Stop()
		for {
			if h := read(); h > base && h-base > peak.Load() {
				peak.Store(h - base)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak.Load()
}

// TestOutlineGate: outlines beyond the slots wait, while their request
// lasts, in a bounded queue; past it /o answers the retryable
// outline_busy with the same request to fetch again.
func TestOutlineGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProject(t, map[string]string{"a.ts": "export function f() {}\n"})
		p.k = New(Options{NoRG: true, Outlines: 1})
		g := p.k.outlines
		hold, ok := g.acquire(context.Background()) // the one slot
		if !ok {
			t.Fatal("no slot")
		}
		type result struct {
			body string
			err  *transport.Error
		}
		serve := func(ctx context.Context) result {
			tg, _ := transport.ParseTarget("/o?path=a.ts")
			rt, _ := p.k.Route("/o")
			v, terr := p.k.Serve(ctx, &route.Call{Session: p.s, Bases: route.Bases{Read: readBase}, On: route.ReadBase, Route: rt}, tg)
			if terr != nil {
				return result{err: terr}
			}
			b, _ := transport.Marshal(v)
			return result{body: string(b)}
		}
		results := make(chan result, outlineWaiters)
		ctx, cancel := context.WithCancel(context.Background())
		for i := range outlineWaiters {
			c := context.Background()
			if i == 0 {
				c = ctx
			}
			go func() { results <- serve(c) }()
		}
		synctest.Wait()
		if n := g.waiting.Load(); n != outlineWaiters {
			t.Fatalf("%d waiting, want %d", n, outlineWaiters)
		}
		select {
		case r := <-results:
			t.Fatalf("answered while the slot is held: %+v", r)
		default:
		}
		// The queue is full: one more is refused at once.
		busy := serve(context.Background()).err
		if busy == nil || busy.Code != CodeOutlineBusy || !busy.Retryable || busy.Action != fault.ActionRetryLater ||
			busy.Retry != readBase+"/o?path=a.ts" {
			t.Fatalf("past the queue: %+v", busy)
		}
		// A request that ends stops waiting.
		cancel()
		synctest.Wait()
		if r := <-results; r.err == nil || r.err.Code != CodeOutlineBusy {
			t.Fatalf("canceled waiter: %+v", r)
		}
		if n := g.waiting.Load(); n != outlineWaiters-1 {
			t.Fatalf("%d waiting after a cancel", n)
		}
		// The slot freed, the others outline one at a time.
		hold()
		for range outlineWaiters - 1 {
			if r := <-results; r.err != nil || !strings.Contains(r.body, `"name":"f"`) {
				t.Fatalf("waiter: %+v", r)
			}
		}
		synctest.Wait()
		if n, held := g.waiting.Load(), len(g.slots); n != 0 || held != 0 {
			t.Fatalf("after: %d waiting, %d slots held", n, held)
		}
	})
}
