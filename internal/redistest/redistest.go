// Package redistest gives tests a real redis-server: the one REDIS_URL names
// when it answers (make test starts one), or one started for the test run.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server this process started.
type Server struct {
	Addr string
	cmd  *exec.Cmd
}

// Start runs a throwaway redis-server on a free loopback port, keeping
// nothing on disk. Stop or Kill it when done.
func Start() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not installed (make test installs it): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "redistest")
	if err != nil {
		return nil, err
	}
	return startServer(bin, port, dir)
}

// startServer runs redis-server on port with dir as its working directory
// and waits until it answers.
func startServer(bin string, port int, dir string, extra ...string) (*Server, error) {
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--dir", dir}, extra...)
	cmd := exec.Command(bin, args...)
	// The server dies with the test binary: a shared one outlives every
	// test, and nothing else would stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	for i := 0; i < 100; i++ {
		if c.Ping(context.Background()).Err() == nil {
			return s, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Kill()
	return nil, fmt.Errorf("redis-server on %s did not answer", s.Addr)
}

// URL is the server's redis:// address.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Kill ends the server at once, as a crash would.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// Pause stops the server's process (SIGSTOP) until Resume: it takes
// connections, as the kernel queues them, and answers nothing, as a
// stalled or starved host does.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
)

// URL returns a Redis for tests: REDIS_URL when it answers, else a server
// started once for this test binary. Without either the test is skipped.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		o, err := redis.ParseURL(u)
		if err == nil {
			c := redis.NewClient(o)
			err = c.Ping(context.Background()).Err()
			c.Close()
		}
		if err == nil {
			return u
		}
		t.Fatalf("REDIS_URL=%s does not answer: %v", u, err)
	}
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if sharedErr != nil {
		t.Skipf("no Redis for this test: %v", sharedErr)
	}
	return shared.URL()
}
