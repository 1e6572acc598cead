package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ory/dockertest/v3"
	"github.com/ory/dockertest/v3/docker"
	"github.com/respire-go/respire/respiretest/testserver"
)

// Containers are the fallback when no server binary is installed. They are
// best effort: the server directory is bind-mounted at the same path inside
// the container, so TLS files, the log and a unix socket work only with a
// Docker engine on this machine.

// dockerImages maps each flavor to its official image and server command.
var dockerImages = map[Flavor]struct{ repo, tag, command string }{
	Redis70:  {"redis", "7.0.15", "redis-server"},
	Redis80:  {"redis", "8.0.2", "redis-server"},
	Valkey81: {"valkey/valkey", "8.1.1", "valkey-server"},
	Redis86:  {"redis", "8.6.3", "redis-server"},
	Valkey91: {"valkey/valkey", "9.1.2", "valkey-server"},
}

// dockerPool returns a pool for a Docker engine that answers a ping, or nil.
var dockerPool = sync.OnceValue(func() *dockertest.Pool {
	if os.Getenv("DOCKER_HOST") == "" {
		if _, err := os.Stat("/var/run/docker.sock"); err != nil {
			return nil
		}
	}
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := pool.Client.PingWithContext(ctx); err != nil {
		return nil
	}
	return pool
})

// dockerAvailable reports whether a Docker engine is reachable.
func dockerAvailable() bool { return dockerPool() != nil }

// dockerRunner runs the server in a container whose port is published on
// the same loopback port of the host.
type dockerRunner struct {
	pool    *dockertest.Pool
	flavor  Flavor
	dir     string
	res     *dockertest.Resource
	stopped bool
}

// newDockerRunner prepares a container for flavor, sharing dir with it.
func newDockerRunner(f Flavor, dir string) (*dockerRunner, error) {
	if _, ok := dockerImages[f]; !ok {
		return nil, fmt.Errorf("no Docker image for %s", f)
	}
	// The server runs as its own user inside the container.
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, err
	}
	return &dockerRunner{pool: dockerPool(), flavor: f, dir: dir}, nil
}

// Inside the container the server must listen on its network interface, and
// protected mode would refuse the forwarded connections.
func (d *dockerRunner) bindAddr() string    { return "0.0.0.0" }
func (d *dockerRunner) extraArgs() []string { return []string{"--protected-mode", "no"} }
func (d *dockerRunner) outputPath() string  { return "" }

func (d *dockerRunner) launch(ctx context.Context, port int, args []string, probe testserver.Probe) error {
	err := d.start(port, args)
	if err != nil && (strings.Contains(err.Error(), "already allocated") || strings.Contains(err.Error(), "address already in use")) {
		return fmt.Errorf("%w: %v", testserver.ErrPortInUse, err)
	}
	if err == nil {
		if err = testserver.WaitReady(ctx, probe, nil); err != nil {
			d.kill()
		}
	}
	return err
}

// start runs the container, or starts it again.
func (d *dockerRunner) start(port int, args []string) error {
	if d.res != nil {
		// A restart: the container keeps its command and port binding.
		if err := d.pool.Client.StartContainer(d.res.Container.ID, nil); err != nil {
			return err
		}
		d.stopped = false
		return nil
	}
	img := dockerImages[d.flavor]
	p := docker.Port(strconv.Itoa(port) + "/tcp")
	res, err := d.pool.RunWithOptions(&dockertest.RunOptions{
		Repository:   img.repo,
		Tag:          img.tag,
		Cmd:          append([]string{img.command}, args...),
		ExposedPorts: []string{string(p)},
		PortBindings: map[docker.Port][]docker.PortBinding{
			p: {{HostIP: "127.0.0.1", HostPort: strconv.Itoa(port)}},
		},
		Mounts: []string{d.dir + ":" + d.dir},
	}, func(hc *docker.HostConfig) {
		hc.AutoRemove = false
		hc.RestartPolicy = docker.RestartPolicy{Name: "no"}
	})
	if err != nil {
		return fmt.Errorf("running %s:%s: %w", img.repo, img.tag, err)
	}
	d.res = res
	return nil
}

func (d *dockerRunner) kill() {
	if d.res == nil || d.stopped {
		return
	}
	d.pool.Client.KillContainer(docker.KillContainerOptions{ID: d.res.Container.ID, Signal: docker.SIGKILL})
	d.pool.Client.WaitContainer(d.res.Container.ID)
	d.stopped = true
}

func (d *dockerRunner) stop() {
	if d.res == nil || d.stopped {
		return
	}
	d.pool.Client.StopContainer(d.res.Container.ID, uint(stopTimeout/time.Second))
	d.stopped = true
}

func (d *dockerRunner) close() {
	if d.res != nil {
		d.pool.Purge(d.res)
		d.res = nil
	}
}
