package transport

import (
	"errors"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
)

func TestCheckRole(t *testing.T) {
	str := func(s string) resp.Value { return resp.Value{Type: resp.TypeBulkString, Str: s} }
	arr := func(vs ...resp.Value) treeReply { return treeReply{resp.Value{Type: resp.TypeArray, Elems: vs}} }
	master := arr(str("master"), resp.Value{Type: resp.TypeInteger, Int: 10}, resp.Value{Type: resp.TypeArray})
	synced := arr(str("slave"), str("127.0.0.1"), resp.Value{Type: resp.TypeInteger, Int: 6379}, str("connected"), resp.Value{Type: resp.TypeInteger, Int: 10})
	syncing := arr(str("slave"), str("127.0.0.1"), resp.Value{Type: resp.TypeInteger, Int: 6379}, str("sync"), resp.Value{Type: resp.TypeInteger, Int: -1})
	sentinel := arr(str("sentinel"), resp.Value{Type: resp.TypeArray})
	for _, tc := range []struct {
		name string
		want string
		r    treeReply
		ok   bool
	}{
		{"master as master", "master", master, true},
		{"replica as master", "master", synced, false},
		{"sentinel as master", "master", sentinel, false},
		{"synced replica", "replica", synced, true},
		{"syncing replica", "replica", syncing, false},
		{"master as replica", "replica", master, false},
		{"empty reply", "master", arr(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRole(tc.r, &Config{Addr: "h:1", Role: tc.want})
			if tc.ok != (err == nil) {
				t.Fatalf("checkRole = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrWrongRole) {
				t.Fatalf("%v does not wrap ErrWrongRole", err)
			}
			if err != nil && (&HandshakeError{Step: "ROLE", Err: err}).Permanent() {
				t.Fatalf("a wrong role is permanent")
			}
		})
	}
}
