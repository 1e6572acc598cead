package conformance

import (
	"errors"
	"sort"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// Helpers of the conf_a_* files (string, generic, bitmap, hyperloglog, list
// and set commands). Every name carries the "ca" prefix so as not to clash
// with the other case files of the package.

// caPtr returns a pointer to v, for optional arguments.
func caPtr[T any](v T) *T { return &v }

// caNil asserts err is respire.Nil.
func caNil(e *Env, err error) {
	e.Helper()
	require.Error(e, err)
	require.True(e, errors.Is(err, respire.Nil), "want respire.Nil, got %v", err)
}

// caSorted returns a sorted copy of s.
func caSorted(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// caNulls builds the []respire.Null[string] of an MGET-like reply; a nil
// element is a null.
func caNulls(vals ...*string) []respire.Null[string] {
	out := make([]respire.Null[string], len(vals))
	for i, v := range vals {
		if v != nil {
			out[i] = respire.Null[string]{V: *v, Valid: true}
		}
	}
	return out
}

// caS returns a pointer to s, for caNulls.
func caS(s string) *string { return &s }
