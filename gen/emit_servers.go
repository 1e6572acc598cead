package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// maxServers is how many servers a serverSet (uint32) can hold.
const maxServers = 32

// specServerRow is one server of the spec as package respire sees it.
type specServerRow struct {
	id, konst, product, prefix, name string
}

// specServerRows derives, from the spec's server ids, the constant, the
// product and the version prefix a handshake is matched against: a
// server "redis-8.6.3" is constant serverRedis86 and matches every Redis
// 8.6.x. Two ids of one product and minor version cannot be told apart
// at run time, so they are refused.
func specServerRows(ids []string) ([]specServerRow, error) {
	if len(ids) > maxServers {
		return nil, fmt.Errorf("the spec has %d servers; a serverSet holds %d", len(ids), maxServers)
	}
	seen := map[string]string{}
	rows := make([]specServerRow, 0, len(ids))
	for _, id := range ids {
		prod, ver, ok := strings.Cut(id, "-")
		parts := strings.Split(ver, ".")
		if !ok || prod == "" || len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("server id %q is not product-major.minor.patch", id)
		}
		k := serverConst(id)
		if prev, dup := seen[k]; dup {
			return nil, fmt.Errorf("servers %s and %s share the version %s.%s; keep one of them in the spec", prev, id, parts[0], parts[1])
		}
		seen[k] = id
		mm := parts[0] + "." + parts[1]
		rows = append(rows, specServerRow{id: id, konst: k, product: prod, prefix: mm + ".", name: prod + " " + mm})
	}
	return rows, nil
}

// emitServers writes the server bits and the table that maps a handshake
// (server product and version) to them, so that a server added to the
// spec needs no hand edit in package respire.
func (g *generator) emitServers(f *jen.File) error {
	rows, err := specServerRows(g.cfg.Spec.Servers)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("the spec lists no servers")
	}
	var consts []jen.Code
	var table []jen.Code
	for i, r := range rows {
		c := jen.Id(r.konst)
		if i == 0 {
			c = c.Id("serverSet").Op("=").Lit(1).Op("<<").Iota()
		}
		consts = append(consts, c.Comment(r.id))
		table = append(table, jen.Values(jen.Dict{
			jen.Id("bit"):     jen.Id(r.konst),
			jen.Id("product"): jen.Lit(r.product),
			jen.Id("prefix"):  jen.Lit(r.prefix),
			jen.Id("name"):    jen.Lit(r.name),
		}))
	}
	f.Comment("The servers of spec/commands.json, one bit each in a serverSet.")
	f.Const().Defs(consts...)
	f.Comment("specServers maps a handshake's server product and version to its spec server.")
	f.Var().Id("specServers").Op("=").Index().Id("specServer").Values(table...)
	return nil
}
