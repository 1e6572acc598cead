package respire

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

func optErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidOption, field, fmt.Sprintf(format, args...))
}

// validate reports the first bad field.
func (o *Options) validate() error {
	switch o.Protocol {
	case 0, 2, 3:
	default:
		return optErr("Protocol", "%d is not 2 or 3", o.Protocol)
	}
	if err := o.Cluster.validate(); err != nil {
		return err
	}
	if err := o.Sentinel.validate(o); err != nil {
		return err
	}
	if o.Cluster != nil && o.Addr != "" {
		return optErr("Addr", "%q given with Cluster: list the nodes to start from in Cluster.Addrs", o.Addr)
	}
	if o.ReadFrom < ReadPrimary || o.ReadFrom > ReadZone {
		return optErr("ReadFrom", "unknown mode %d", o.ReadFrom)
	}
	if err := o.validateZone(); err != nil {
		return err
	}
	if err := o.ClientCache.validate(o.Protocol); err != nil {
		return err
	}
	switch o.Network {
	case "", "tcp", "tcp4", "tcp6", "unix":
	default:
		return optErr("Network", "%q is not tcp or unix", o.Network)
	}
	if o.DB < 0 {
		return optErr("DB", "%d is negative", o.DB)
	}
	if o.Connections < 0 {
		return optErr("Connections", "%d is negative", o.Connections)
	}
	if o.BatchConnections < 0 {
		return optErr("BatchConnections", "%d is negative (NoBatchConnections turns them off)", o.BatchConnections)
	}
	if o.NoBatchConnections && o.BatchConnections > 0 {
		return optErr("BatchConnections", "%d given with NoBatchConnections", o.BatchConnections)
	}
	if o.BlockingPoolSize < 0 {
		return optErr("BlockingPoolSize", "%d is negative", o.BlockingPoolSize)
	}
	if o.PubSubBuffer < 0 {
		return optErr("PubSubBuffer", "%d is negative", o.PubSubBuffer)
	}
	if o.PubSubBufferBytes < 0 {
		return optErr("PubSubBufferBytes", "%d is negative", o.PubSubBufferBytes)
	}
	if o.RetryReads < 0 {
		return optErr("RetryReads", "%d is negative", o.RetryReads)
	}
	if o.NoRetryReads && o.RetryReads > 0 {
		return optErr("RetryReads", "%d given with NoRetryReads", o.RetryReads)
	}
	if err := o.checkReadMode(); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"DialTimeout", o.DialTimeout}, {"MinRetryBackoff", o.MinRetryBackoff},
		{"MaxRetryBackoff", o.MaxRetryBackoff}, {"HealthCheckInterval", o.HealthCheckInterval},
		{"StallTimeout", o.StallTimeout},
	} {
		if d.v < 0 {
			return optErr(d.name, "%v is negative", d.v)
		}
	}
	if o.Limits.MaxBulk < 0 || o.Limits.MaxAggregate < 0 || o.Limits.MaxDepth < 0 || o.Limits.MaxLine < 0 || o.Limits.MaxNodes < 0 {
		return optErr("Limits", "negative limit")
	}
	if o.WatchRetries < 0 {
		return optErr("WatchRetries", "%d is negative", o.WatchRetries)
	}
	if o.MinRetryBackoff > 0 && o.MaxRetryBackoff > 0 && o.MinRetryBackoff > o.MaxRetryBackoff {
		return optErr("MaxRetryBackoff", "%v is below MinRetryBackoff %v", o.MaxRetryBackoff, o.MinRetryBackoff)
	}
	if err := checkClientName(o.ClientName); err != nil {
		return err
	}
	if o.Credentials != nil && (o.Username != "" || o.Password != "") {
		return optErr("Credentials", "given with Username or Password: the provider gives both")
	}
	return o.checkAddr()
}

// checkReadMode refuses an unknown ReadMode, and a ReadSpin that the mode
// would ignore.
func (o *Options) checkReadMode() error {
	if o.ReadMode < ReadModeDefault || o.ReadMode > ReadModeFiller {
		return optErr("ReadMode", "unknown mode %d", int(o.ReadMode))
	}
	switch {
	case o.ReadSpin < 0:
		return optErr("ReadSpin", "%v is negative (ReadModeDirect turns polling off)", o.ReadSpin)
	case o.ReadSpin > 0 && o.readMode() != ReadModeSpin && o.ReadMode == ReadModeDefault:
		return optErr("ReadSpin", "%v given with ClientCache and ReadModeDefault, which does not poll then: set ReadMode to ReadModeSpin to poll anyway", o.ReadSpin)
	case o.ReadSpin > 0 && o.readMode() != ReadModeSpin:
		return optErr("ReadSpin", "%v given with %v, which does not poll", o.ReadSpin, o.ReadMode)
	}
	return nil
}

// checkAddr checks Addr for the network it is dialed on.
func (o *Options) checkAddr() error {
	unix := o.Network == "unix" || o.Network == "" && strings.HasPrefix(o.Addr, "/")
	switch {
	case unix && o.Addr == "":
		return optErr("Addr", "network unix needs the path of a socket")
	case unix:
		if strings.IndexByte(o.Addr, 0) >= 0 {
			return optErr("Addr", "socket path %q has a NUL byte", o.Addr)
		}
		return nil
	case o.Addr == "":
		return nil // localhost:6379
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return optErr("Addr", "%q is not host:port (an IPv6 address goes in brackets, as in [::1]:6379)", o.Addr)
	}
	if err := checkPort("Addr", port); err != nil {
		return err
	}
	return checkHost("Addr", host)
}

// checkHost refuses a host that no resolver finds: empty, or neither an IP
// address nor a name of letters, digits, '-', '_' and '.'.
func checkHost(field, host string) error {
	if host == "" {
		return optErr(field, "the host is empty; write localhost for this machine")
	}
	if strings.IndexByte(host, ':') >= 0 {
		if a, err := netip.ParseAddr(host); err == nil && a.Is6() && plainZone(a.Zone()) {
			return nil
		}
		return optErr(field, "host %q has a ':' that does not start the port; an IPv6 address goes in brackets, as in [::1]:6379", host)
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return optErr(field, "host %q has the character %q, which no host name has", host, c)
		}
	}
	return nil
}

// checkPort refuses a port that is not a number from 1 to 65535 (a service
// name such as "redis" included).
func checkPort(field, port string) error {
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return optErr(field, "port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// checkClientName refuses a name the server would refuse at every
// handshake: it takes only '!' to '~'.
func checkClientName(name string) error {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < '!' || c > '~' {
			return optErr("ClientName", "%q has the character %q; the server takes only printable ASCII without spaces", name, c)
		}
	}
	return nil
}
