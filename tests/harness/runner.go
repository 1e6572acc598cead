package harness

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// runner runs incarnations of one server: a local process or a container.
// Calls are serialized by Server.mu.
type runner interface {
	// launch starts a new incarnation listening on port, with args, and
	// waits until it serves (probe answers PING) or ctx ends. Its error
	// wraps testserver.ErrPortInUse when the port was taken.
	launch(ctx context.Context, port int, args []string, probe testserver.Probe) error
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
	bin, dir string
	logPath  string              // the server's log file
	proc     *testserver.Process // the current incarnation; nil before the first
}

// newProcRunner runs bin with working directory dir; the server logs to
// logPath.
func newProcRunner(bin, dir, logPath string) *procRunner {
	return &procRunner{bin: bin, dir: dir, logPath: logPath}
}

func (p *procRunner) bindAddr() string    { return "127.0.0.1" }
func (p *procRunner) extraArgs() []string { return nil }
func (p *procRunner) outputPath() string  { return filepath.Join(p.dir, testserver.OutputFile) }

func (p *procRunner) launch(ctx context.Context, _ int, args []string, probe testserver.Probe) error {
	proc, err := testserver.Launch(ctx, p.bin, p.dir, args, probe, p.logPath)
	if err != nil {
		return err
	}
	p.proc = proc
	return nil
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
