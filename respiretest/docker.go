package respiretest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ory/dockertest/v3"
	"github.com/ory/dockertest/v3/docker"
	"github.com/respire-go/respire/respiretest/testserver"
)

// errNoEngine is wrapped by startDocker's error when no Docker engine
// answers.
var errNoEngine = errors.New("no Docker engine answered")

// dockerEndpoint returns where the Docker engine is expected, or an error
// when nothing suggests one.
func dockerEndpoint() (string, error) {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h, nil
	}
	const sock = "/var/run/docker.sock"
	if _, err := os.Stat(sock); err != nil {
		return "", fmt.Errorf("%w (DOCKER_HOST is not set and %s does not exist)", errNoEngine, sock)
	}
	return "unix://" + sock, nil
}

// startDocker runs opts.Image with its port 6379 published on a free
// loopback port and waits until the server answers PING. The container
// is removed by Close.
func startDocker(ctx context.Context, opts *Options) (*Server, error) {
	endpoint, err := dockerEndpoint()
	if err != nil {
		return nil, err
	}
	pool, err := dockertest.NewPool(endpoint)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", errNoEngine, endpoint, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	err = pool.Client.PingWithContext(pctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", errNoEngine, endpoint, err)
	}

	image := orDefaultString(opts.Image, DefaultImage)
	repo, tag := splitImage(image)
	server := "redis-server"
	if strings.Contains(repo, "valkey") {
		server = "valkey-server"
	}
	res, err := pool.RunWithOptions(&dockertest.RunOptions{
		Repository:   repo,
		Tag:          tag,
		Cmd:          append([]string{server, "--save", "", "--appendonly", "no"}, opts.Args...),
		ExposedPorts: []string{"6379/tcp"},
		PortBindings: map[docker.Port][]docker.PortBinding{
			"6379/tcp": {{HostIP: "127.0.0.1", HostPort: ""}},
		},
	}, func(hc *docker.HostConfig) {
		hc.AutoRemove = true
		hc.RestartPolicy = docker.RestartPolicy{Name: "no"}
	})
	if err != nil {
		return nil, fmt.Errorf("respiretest: running the Docker image %s: %w", image, err)
	}
	addr := res.GetHostPort("6379/tcp")
	stop := func() error { return pool.Purge(res) }
	wctx, cancel := context.WithTimeout(ctx, orDefault(opts.StartTimeout, 2*time.Minute))
	defer cancel()
	if err := testserver.WaitReady(wctx, testserver.Probe{Addr: addr}, nil); err != nil {
		stop()
		return nil, fmt.Errorf("respiretest: the server in the Docker image %s did not answer at %s: %w", image, addr, err)
	}
	return &Server{Addr: addr, Image: image, stop: stop}, nil
}

// splitImage splits "repo:tag" (the tag after the last slash), "latest"
// when there is none.
func splitImage(image string) (repo, tag string) {
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i:], "/") {
		return image, "latest"
	}
	return image[:i], image[i+1:]
}

func orDefaultString(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
