package respire

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
)

// Script is a Lua script run by its SHA1 digest, so that its source is
// sent to the server once rather than with every call:
//
//	var incrBy = respire.NewScript(`return redis.call("INCRBY", KEYS[1], ARGV[1])`)
//	r, err := incrBy.Run(ctx, client, []string{"counter"}, 5)
//	n, err := r.Int64()
//
// Run sends EVALSHA; when the server does not know the script (NOSCRIPT:
// first use, a restart, SCRIPT FLUSH, a failover), it sends SCRIPT LOAD and
// EVALSHA again. Scripts loaded with SCRIPT LOAD stay on the server until
// SCRIPT FLUSH, unlike those sent with EVAL, which newer servers may evict.
//
// A Script is immutable and safe for concurrent use; declare it once, as a
// package-level variable. In a Batch or a Tx, which cannot fall back on
// NOSCRIPT, call Load first and queue EvalSha(s.Hash(), ...).
type Script struct {
	src  string
	hash string
}

// NewScript returns the script whose Lua source is src. The digest is
// computed here, once.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{src: src, hash: hex.EncodeToString(sum[:])}
}

// Hash returns the script's SHA1 digest in lower-case hex, as EVALSHA
// takes it.
func (s *Script) Hash() string { return s.hash }

// Source returns the script's Lua source.
func (s *Script) Source() string { return s.src }

// Load sends the script to the server (SCRIPT LOAD) without running it.
func (s *Script) Load(ctx context.Context, c *Client) error {
	h, err := c.ScriptLoad(ctx, s.src)
	if err != nil {
		return err
	}
	if h != s.hash {
		return fmt.Errorf("respire: SCRIPT LOAD returned digest %s, want %s", h, s.hash)
	}
	return nil
}

// Run runs the script with EVALSHA, loading it first if the server lacks
// it. keys are the keys it touches (KEYS[1], ...), args its other arguments
// (ARGV[1], ...), of the types Client.Do takes (string, []byte, integers,
// floats, bool as 1 or 0, time.Duration as whole milliseconds); another type
// is an *ArgError before anything is sent. The reply is the script's return value; an error the
// script raises is an *Error. A null reply (a script returning false or
// nil) gives Nil, as with Client.Do.
func (s *Script) Run(ctx context.Context, c *Client, keys []string, args ...any) (Reply, error) {
	return s.run(ctx, c, &cmdEVALSHA, keys, args)
}

// RunRO is Run with EVALSHA_RO: the server refuses a script that writes,
// and may run it on a read-only replica. The script must declare no write
// (with a shebang line, "#!lua flags=no-writes") or only read. It needs
// Redis 7.0 or Valkey 7.2 or later.
func (s *Script) RunRO(ctx context.Context, c *Client, keys []string, args ...any) (Reply, error) {
	return s.run(ctx, c, &cmdEVALSHA_RO, keys, args)
}

func (s *Script) run(ctx context.Context, c *Client, info *cmdInfo, keys []string, args []any) (Reply, error) {
	r, err := s.evalSha(ctx, c, info, keys, args)
	if isNoScript(err) {
		if err := s.Load(ctx, c); err != nil {
			return Reply{}, err
		}
		r, err = s.evalSha(ctx, c, info, keys, args)
	}
	if err == nil && r.IsNull() {
		err = Nil
	}
	return r, err
}

// evalSha sends EVALSHA (or EVALSHA_RO, as info says) as the generated
// EvalSha does, keys recorded for routing, with args converted as Do
// converts its arguments.
func (s *Script) evalSha(ctx context.Context, c *Client, info *cmdInfo, keys []string, args []any) (Reply, error) {
	x := c.newCmd(info)
	argsEvalSha(x, s.hash, keys, args) // EVALSHA and EVALSHA_RO take the same arguments
	return execAny[Reply](ctx, c, x, decReplyNull)
}

// isNoScript reports the server's NOSCRIPT error. The nil check comes
// first so that a successful run does not allocate the target of As.
func isNoScript(err error) bool {
	if err == nil {
		return false
	}
	var e *Error
	return errors.As(err, &e) && e.Prefix == "NOSCRIPT"
}
