package harness

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
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

// procRunner runs the server as a child process of the test binary, with
// testserver.Run.
type procRunner struct {
	bin  string
	dir  string
	proc *testserver.Process // the current incarnation; nil before the first
}

// newProcRunner runs bin with working directory dir.
func newProcRunner(bin, dir string) *procRunner {
	return &procRunner{bin: bin, dir: dir}
}

func (p *procRunner) bindAddr() string    { return "127.0.0.1" }
func (p *procRunner) extraArgs() []string { return nil }
func (p *procRunner) outputPath() string  { return filepath.Join(p.dir, testserver.OutputFile) }

func (p *procRunner) launch(_ int, args []string) error {
	proc, err := testserver.Run(p.bin, p.dir, args)
	if err != nil {
		return err
	}
	p.proc = proc
	return nil
}

func (p *procRunner) exited() <-chan struct{} {
	if p.proc == nil {
		return nil
	}
	return p.proc.Exited()
}

func (p *procRunner) kill() {
	if p.proc != nil {
		p.proc.Kill()
	}
}

func (p *procRunner) stop() {
	if p.proc != nil {
		p.proc.Terminate(stopTimeout)
	}
}

func (p *procRunner) close() { p.kill() }

// running reports whether the current incarnation runs.
func (p *procRunner) running() bool { return p != nil && p.proc != nil && p.proc.Running() }

// pause pauses (SIGSTOP) or resumes (SIGCONT) the current incarnation.
func (p *procRunner) pause(pause bool) error {
	switch {
	case !p.running():
		return errors.New("the process is not running")
	case pause:
		return p.proc.Pause()
	}
	return p.proc.Resume()
}
