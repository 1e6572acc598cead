package topology

import (
	"fmt"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Merge combines the replies of the parts of a command fanned out to
// several nodes, as its response_policy tip says: one_succeeded,
// all_succeeded, agg_sum, agg_min, agg_max, agg_logical_and/or; otherwise
// the elements of a command split by slot (split, keys[i] the key indexes
// part i carried) go back to their keys' places, the arrays of an unsplit
// fan-out are concatenated, and any other reply is the first part's. An
// error reply of any part is the merged reply.
func Merge(policy string, replies []resp.Value, keys [][]int, split bool) (resp.Value, error) {
	type part struct {
		v    resp.Value
		keys []int
	}
	parts := make([]part, len(replies))
	for i := range replies {
		parts[i] = part{v: replies[i]}
		if i < len(keys) {
			parts[i].keys = keys[i]
		}
	}
	var firstErr *resp.Value
	for _, p := range parts {
		if p.v.Type == resp.TypeSimpleError || p.v.Type == resp.TypeBulkError {
			if firstErr == nil {
				firstErr = &p.v
			}
		}
	}
	switch policy {
	case "one_succeeded":
		for _, p := range parts {
			if p.v.Type != resp.TypeSimpleError && p.v.Type != resp.TypeBulkError {
				return p.v, nil
			}
		}
		return *firstErr, nil
	}
	if firstErr != nil {
		return *firstErr, nil
	}
	switch policy {
	case "all_succeeded", "special":
		return parts[0].v, nil
	case "agg_sum", "agg_min", "agg_max":
		// Integers, or arrays of integers aggregated element by element
		// (WAITAOF's two counts).
		out := parts[0].v
		out.Elems = append([]resp.Value(nil), out.Elems...)
		for _, p := range parts {
			if !sameShape(&out, &p.v) {
				return resp.Value{}, fmt.Errorf("cannot aggregate a %s reply of %d elements with a %s of %d", p.v.Type, len(p.v.Elems), out.Type, len(out.Elems))
			}
		}
		for _, p := range parts[1:] {
			foldInt(policy, &out, &p.v)
			for i := range out.Elems {
				foldInt(policy, &out.Elems[i], &p.v.Elems[i])
			}
		}
		return out, nil
	case "agg_logical_and", "agg_logical_or":
		out := parts[0].v
		out.Elems = append([]resp.Value(nil), out.Elems...)
		for _, p := range parts[1:] {
			for i := range out.Elems {
				if i < len(p.v.Elems) {
					a, b := out.Elems[i].Int != 0, p.v.Elems[i].Int != 0
					r := a && b
					if policy == "agg_logical_or" {
						r = a || b
					}
					out.Elems[i].Int = 0
					if r {
						out.Elems[i].Int = 1
					}
				}
			}
		}
		return out, nil
	}
	if split {
		// Each key's reply back in its place.
		n := 0
		for _, p := range parts {
			n += len(p.keys)
		}
		out := resp.Value{Type: parts[0].v.Type, Elems: make([]resp.Value, n)}
		for _, p := range parts {
			if len(p.v.Elems) != len(p.keys) {
				return resp.Value{}, fmt.Errorf("a part of %d keys got %d replies", len(p.keys), len(p.v.Elems))
			}
			for j, k := range p.keys {
				out.Elems[k] = p.v.Elems[j]
			}
		}
		return out, nil
	}
	if t := parts[0].v.Type; t == resp.TypeArray || t == resp.TypeSet {
		out := resp.Value{Type: t}
		for _, p := range parts {
			out.Elems = append(out.Elems, p.v.Elems...)
		}
		return out, nil
	}
	return parts[0].v, nil
}

// sameShape reports whether a and b are both integers or both arrays of as
// many integers, as numeric response policies need.
func sameShape(a, b *resp.Value) bool {
	switch {
	case a.Type == resp.TypeInteger && b.Type == resp.TypeInteger:
		return true
	case a.Type != resp.TypeArray || b.Type != resp.TypeArray || len(a.Elems) != len(b.Elems):
		return false
	}
	for i := range a.Elems {
		if a.Elems[i].Type != resp.TypeInteger || b.Elems[i].Type != resp.TypeInteger {
			return false
		}
	}
	return true
}

// foldInt folds the integer b into acc by policy (agg_sum, agg_min or
// agg_max); non-integers are left alone.
func foldInt(policy string, acc, b *resp.Value) {
	if acc.Type != resp.TypeInteger {
		return
	}
	switch policy {
	case "agg_sum":
		acc.Int += b.Int
	case "agg_min":
		acc.Int = min(acc.Int, b.Int)
	default:
		acc.Int = max(acc.Int, b.Int)
	}
}
