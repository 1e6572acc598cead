package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// server is a redis-server child process on a fixed loopback port, so that
// it can be killed and started again on the same address.
type server struct {
	bin, dir string
	port     int
	cmd      *exec.Cmd
	done     chan struct{} // closed when the current process has exited
}

// findServer returns the server executable: the one named, else
// .servers/bin/redis-8.0-server above the working directory, else
// redis-server on PATH.
func findServer(named string) (string, error) {
	if named != "" {
		return named, nil
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, ".servers", "bin", "redis-8.0-server")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", errors.New("no server: run `make servers`, put redis-server on PATH, or pass -server")
	}
	return p, nil
}

// startServer starts bin on a free loopback port in dir.
func startServer(bin, dir string) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &server{bin: bin, dir: dir, port: port}
	return s, s.start()
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// start runs a new process on s.port and waits until it answers PING. The
// port may linger for a moment after a kill: it tries again for 10s.
func (s *server) start() error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 250*time.Millisecond) {
		err := s.launch()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

func (s *server) launch() error {
	out, err := os.OpenFile(filepath.Join(s.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(s.bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "server.log"),
		"--daemonize", "no", "--save", "", "--appendonly", "no")
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	t0 := time.Now()
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		if ping(s.addr()) == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited during startup (see %s)", s.bin, filepath.Join(s.dir, "server.log"))
		case <-time.After(wait):
		}
		if time.Since(t0) > 10*time.Second {
			s.kill()
			return errors.New("the server did not answer PING within 10s")
		}
	}
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// ping sends PING on a fresh connection and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING: %q", line)
	}
	return nil
}
