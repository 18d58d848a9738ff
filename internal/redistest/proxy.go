package redistest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A Proxy is a TCP proxy on a loopback port in front of a server, for fault
// tests: it can slow every round trip down ([Proxy.SetDelay]) or swallow all
// traffic without closing connections, as a network partition does
// ([Proxy.SetBlackhole]). Point a client at [Proxy.Addr] instead of the
// server. It is safe for concurrent use; [NewProxy] closes it when t ends.
type Proxy struct {
	target string
	ln     net.Listener
	delay  atomic.Int64 // time.Duration added to each reply
	hole   atomic.Bool

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// chunkQueue bounds the bytes in flight per connection and direction while
// a delay holds them: 256 reads, then the proxy stops reading (TCP
// backpressure), as a slow link would.
const chunkQueue = 256

// NewProxy starts a proxy to target (host:port) and closes it, with all its
// connections, when t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: proxy listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr returns the host:port clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetDelay holds every chunk the server sends for d before passing it on,
// adding d to each round trip (0 removes the delay for chunks read from
// then on).
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// SetBlackhole makes the proxy drop everything it reads, both ways, while
// on: connections stay open and nothing is answered, with no reset.
func (p *Proxy) SetBlackhole(on bool) { p.hole.Store(on) }

// Conns returns the number of client connections open through the proxy.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !p.track(client, server) {
			return
		}
		p.wg.Add(2)
		go p.pipe(client, server, false)
		go p.pipe(server, client, true)
	}
}

// track registers the two ends of a proxied connection, unless the proxy
// is closed.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_, _ = a.Close(), b.Close()
		return false
	}
	p.conns[a], p.conns[b] = struct{}{}, struct{}{}
	return true
}

func (p *Proxy) untrack(a, b net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, a)
	delete(p.conns, b)
	_, _ = a.Close(), b.Close()
}

// A chunk is what one read returned, and when it may be passed on.
type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst until either fails, holding each chunk for the
// delay when delayed is set, and dropping chunks while blackholed.
func (p *Proxy) pipe(src, dst net.Conn, delayed bool) {
	defer p.wg.Done()
	queue := make(chan chunk, chunkQueue)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.untrack(src, dst)
		failed := false
		for c := range queue { // drained to the end, so the reader never blocks
			if failed {
				continue
			}
			time.Sleep(time.Until(c.due))
			if _, err := dst.Write(c.data); err != nil {
				failed = true
				p.untrack(src, dst) // stops the reader
			}
		}
	}()
	defer close(queue)
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 && !p.hole.Load() {
			c := chunk{data: buf[:n], due: time.Now()}
			if delayed {
				c.due = c.due.Add(time.Duration(p.delay.Load()))
			}
			queue <- c
		}
		if err != nil {
			return
		}
	}
}

// close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}
