package testserver

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// OutputFile is the file, in a process's directory, that its standard
// output and standard error are appended to: what a server says before
// its log file is open (a bad argument, a missing library).
const OutputFile = "output.log"

// Process is a server process started by Run. Its methods are safe for
// concurrent use.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has ended
	mu   sync.Mutex
}

// Run starts bin with args and working directory dir, its output appended
// to OutputFile in dir, and returns without waiting for it to serve (see
// WaitReady). On Linux the process is killed when the calling program
// dies, even without a chance to clean up (a panic, a test timeout,
// SIGKILL).
func Run(bin, dir string, args []string) (*Process, error) {
	out, err := os.OpenFile(filepath.Join(dir, OutputFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testserver: %w", err)
	}
	defer out.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testserver: running %s: %w", bin, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited returns a channel closed when the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Running reports whether the process has not ended yet.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits until
// it is gone. Killing an ended process does nothing.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Terminate asks the process to shut down with SIGTERM and waits for it,
// killing it when it has not ended within timeout. On Windows it kills at
// once.
func (p *Process) Terminate(timeout time.Duration) {
	if sigTerm == nil || p.cmd.Process.Signal(sigTerm) != nil {
		p.Kill()
		return
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.Kill()
	}
}

// ErrExited is wrapped by the error of Pause or Resume on a process that
// has ended.
var ErrExited = errors.New("testserver: the process has ended")

// Pause suspends the process with SIGSTOP: its sockets stay open and it
// answers nothing, as a hung or partitioned server would. Resume lets it
// go on. Where there is no SIGSTOP (Windows) the error wraps
// errors.ErrUnsupported.
func (p *Process) Pause() error { return p.signal(sigStop, "SIGSTOP") }

// Resume continues a process that Pause suspended, with SIGCONT.
func (p *Process) Resume() error { return p.signal(sigCont, "SIGCONT") }

func (p *Process) signal(sig os.Signal, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case sig == nil:
		return fmt.Errorf("testserver: %s: %w", name, errors.ErrUnsupported)
	case !p.Running():
		return fmt.Errorf("testserver: %s to %d: %w", name, p.Pid(), ErrExited)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("testserver: %s to %d: %w", name, p.Pid(), err)
	}
	return nil
}

// FreePort returns a port of 127.0.0.1 that was free a moment ago. Another
// process may take it before the server binds it: a server that fails
// with "Address already in use" is started again on another.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testserver: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortInUse reports whether a server's log or output says that its port
// was taken ("Address already in use").
func PortInUse(log string) bool {
	return strings.Contains(log, "already in use")
}

// Tail returns the last n lines of the file at path, "" when it is empty
// or cannot be read: the end of a server's log, for an error.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
