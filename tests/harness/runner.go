package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// runner runs incarnations of one server: a local process or a container.
// Calls are serialized by Server.mu.
type runner interface {
	// launch starts a new incarnation listening on port, with args; it does
	// not wait for it to serve.
	launch(port int, args []string) error
	// exited is closed when the current incarnation has ended. It may be
	// nil when the runner cannot tell.
	exited() <-chan struct{}
	// kill ends the current incarnation with SIGKILL and waits for it.
	kill()
	// stop asks the current incarnation to shut down and waits for it,
	// killing it if it takes too long.
	stop()
	// close releases everything the runner holds; the server is gone.
	close()
	// bindAddr is the address the server must bind inside its environment.
	bindAddr() string
	// extraArgs are directives the environment needs, before the caller's.
	extraArgs() []string
	// outputPath is the file with the server's stdout and stderr, or "".
	outputPath() string
}

// stopTimeout bounds a graceful shutdown before the server is killed.
const stopTimeout = 10 * time.Second

// procRunner runs the server as a child process of the test binary.
type procRunner struct {
	bin  string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// newProcRunner runs bin with working directory dir.
func newProcRunner(bin, dir string) *procRunner {
	return &procRunner{bin: bin, dir: dir}
}

func (p *procRunner) bindAddr() string    { return "127.0.0.1" }
func (p *procRunner) extraArgs() []string { return nil }
func (p *procRunner) outputPath() string  { return filepath.Join(p.dir, "stdout.log") }

func (p *procRunner) launch(_ int, args []string) error {
	// Early failures (a bad directive, a missing library) go to stdout or
	// stderr before the log file is open, so keep both.
	out, err := os.OpenFile(p.outputPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(p.bin, args...)
	cmd.Dir = p.dir
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.bin, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

func (p *procRunner) exited() <-chan struct{} { return p.done }

func (p *procRunner) kill() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *procRunner) stop() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		p.kill()
	}
}

func (p *procRunner) close() { p.kill() }
