package testserver

import (
	"context"
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

// Process is a server process started by Launch. Its methods are safe for
// concurrent use.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has ended
	mu   sync.Mutex
}

// run starts bin with args and working directory dir, its output appended
// to OutputFile in dir, and returns without waiting for it to serve. On
// Linux the process is killed when the calling program dies, even without
// a chance to clean up (a panic, a test timeout, SIGKILL).
func run(bin, dir string, args []string) (*Process, error) {
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

// pid returns the process ID.
func (p *Process) pid() int { return p.cmd.Process.Pid }

// exited returns a channel closed when the process has ended.
func (p *Process) exited() <-chan struct{} { return p.done }

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

// errExited is wrapped by the error of Pause or Resume on a process that
// has ended.
var errExited = errors.New("testserver: the process has ended")

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
		return fmt.Errorf("testserver: %s to %d: %w", name, p.pid(), errExited)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("testserver: %s to %d: %w", name, p.pid(), err)
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

// ErrPortInUse is wrapped by the error of Launch when the server could not
// bind its port: another process took it after FreePort found it free, or
// a killed server's port lingers. Launch again on another port, or on the
// same one a moment later.
var ErrPortInUse = errors.New("testserver: address already in use")

// Launch runs bin with args and working directory dir, its output
// appended to OutputFile in dir, and waits until it serves, as WaitReady
// does with probe. On Linux the process is killed when the calling
// program dies, even without a chance to clean up (a panic, a test
// timeout, SIGKILL). When it does not, the process is
// killed and the error holds the end of what it wrote meanwhile to its
// log file (logPath, "" for none) and to OutputFile, and wraps
// ErrPortInUse when that says its port was taken.
func Launch(ctx context.Context, bin, dir string, args []string, probe Probe, logPath string) (*Process, error) {
	outPath := filepath.Join(dir, OutputFile)
	logFrom, outFrom := fileSize(logPath), fileSize(outPath)
	p, err := run(bin, dir, args)
	if err != nil {
		return nil, err
	}
	err = WaitReady(ctx, probe, p.exited())
	if err == nil {
		return p, nil
	}
	p.Kill()
	said := strings.TrimSpace(readFrom(logPath, logFrom) + "\n" + readFrom(outPath, outFrom))
	if strings.Contains(said, "already in use") {
		err = fmt.Errorf("%w: %v", ErrPortInUse, err)
	}
	return nil, fmt.Errorf("%s did not start at %s: %w\n%s", bin, probe.Addr, err, lastLines(said, 10))
}

// fileSize returns the size of the file at path, 0 if there is none.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if path == "" || err != nil {
		return 0
	}
	return st.Size()
}

// readFrom returns the contents of the file at path from offset on.
func readFrom(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if path == "" || err != nil || int64(len(b)) < offset {
		return ""
	}
	return string(b[offset:])
}

// Tail returns the last n lines of the file at path, "" when it is empty
// or cannot be read: the end of a server's log, for an error.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return lastLines(string(b), n)
}

// lastLines returns the last n lines of s, without the final newline.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
