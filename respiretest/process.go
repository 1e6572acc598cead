package respiretest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startProcess runs bin on a free loopback port in a new temporary
// directory and waits until it answers PING.
func startProcess(ctx context.Context, bin string, opts *Options) (*Server, error) {
	return startProcessArgs(ctx, bin, opts.StartTimeout, func(port int, dir string) ([]string, error) {
		return append(serverArgs(port, dir), opts.Args...), nil
	})
}

// serverArgs are the arguments of every data server: the port, loopback
// only, nothing persisted, the log in dir.
func serverArgs(port int, dir string) []string {
	return []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, logName), "--daemonize", "no",
	}
}

// logName is the name of a server's log file in its directory.
const logName = "server.log"

// startProcessArgs runs bin in a new temporary directory with the
// arguments that args returns for a free loopback port and that
// directory (args may write files there; the server must log to logName
// in it), and waits until it answers PING within timeout (default 10s).
func startProcessArgs(ctx context.Context, bin string, timeout time.Duration, args func(port int, dir string) ([]string, error)) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(timeout, 10*time.Second))
	defer cancel()
	dir, err := os.MkdirTemp("", "respiretest-")
	if err != nil {
		return nil, fmt.Errorf("respiretest: %w", err)
	}
	// A port found free may be taken before the server binds it: try a
	// few.
	for attempt := 1; ; attempt++ {
		srv, retry, err := launch(ctx, bin, dir, args)
		if err == nil {
			return srv, nil
		}
		if !retry || attempt == 3 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// launch starts bin once; retry reports a port taken meanwhile.
func launch(ctx context.Context, bin, dir string, argsFor func(port int, dir string) ([]string, error)) (srv *Server, retry bool, err error) {
	port, err := freePort()
	if err != nil {
		return nil, false, fmt.Errorf("respiretest: finding a free port: %w", err)
	}
	logPath := filepath.Join(dir, logName)
	os.Remove(logPath) // an earlier attempt's complaint is not this one's
	args, err := argsFor(port, dir)
	if err != nil {
		return nil, false, fmt.Errorf("respiretest: %w", err)
	}
	stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, false, fmt.Errorf("respiretest: %w", err)
	}
	defer stderr.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("respiretest: running %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := awaitReady(ctx, addr, exited); err != nil {
		cmd.Process.Kill()
		<-exited
		out := tail(logPath) + tail(stderr.Name())
		return nil, strings.Contains(out, "already in use"),
			fmt.Errorf("respiretest: %s did not start at %s: %w\n%s", bin, addr, err, out)
	}
	stop := func() error {
		cmd.Process.Kill()
		<-exited
		return os.RemoveAll(dir)
	}
	return &Server{Addr: addr, Binary: bin, Dir: dir, stop: stop, proc: cmd.Process, exited: exited}, false, nil
}

// awaitReady polls addr with PING until the server answers (anything but
// LOADING), the process exits, or ctx ends.
func awaitReady(ctx context.Context, addr string, exited <-chan struct{}) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ping(ctx, addr)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("the server exited")
		case <-ctx.Done():
			return fmt.Errorf("%w (last try: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// ping sends PING on a new connection; a reply other than LOADING, an
// error included (NOAUTH when Args set a password), means the server is
// up.
func ping(ctx context.Context, addr string) error {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.HasPrefix(line, "-LOADING") {
		return fmt.Errorf("the server is loading")
	}
	return nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last lines of a log file, for an error.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "  " + strings.Join(lines, "\n  ") + "\n"
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
