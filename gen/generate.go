package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"slices"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/respire-go/respire/gen/spec"
)

// Config says what to generate from.
type Config struct {
	Spec    *spec.Spec
	Replies *Replies
	// AllowMissing skips commands that have no reply entry instead of
	// failing; Skipped lists them. For bringing up a new spec only.
	AllowMissing bool
	// Package is the package name of the output (default "respire").
	Package string
	// Supplement adds to what the servers' COMMAND DOCS say; nil for none.
	Supplement *Supplement
	// SharedSafe are the commands the spec marks as dealing with
	// connections that were reviewed as safe on a shared connection, with
	// why (see connstate.go); nil means the reviewed list of the
	// repository. For tests with specs of their own.
	SharedSafe map[string]string
}

// Output is the generated files, by base name, and what was left out.
type Output struct {
	Files   map[string][]byte
	Skipped []string // commands without a reply entry (AllowMissing)
	Methods int
	Types   int
	// Notes name supplement entries the servers' own docs now cover.
	Notes []string
}

// MissingError lists the commands of the spec that have no reply entry.
type MissingError struct{ Commands []string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("%d command(s) of the spec have no entry in the replies file; add them (see spec/REPLIES.md): %s",
		len(e.Commands), strings.Join(e.Commands, ", "))
}

// method is one generated method (a command, or one variant of it).
type method struct {
	name    string
	base    string // the base method of a variant, "" for the base
	cmd     *spec.Command
	info    string
	c       *container
	args    []*arg
	opts    *typeDecl
	res     resKind
	rt      *gtype
	dec     string
	forced  []string
	omitted []string
	variant *Variant
	reply   *Type
	// lease is the decoder of the Lease and Append forms (lease.go), for
	// a method whose reply is one bulk string read from a key; "" for none.
	lease string
}

type generator struct {
	cfg      Config
	reg      *registry
	rep      *replies
	methods  []*method
	excluded []excludedCmd
	// sharedListed are the generated commands of Config.SharedSafe, for
	// zz_excluded.md.
	sharedListed []string
	infos        []*spec.Command
	skipped      []string
	emitted      map[string]bool
	lacks        map[string]map[string][]string          // from the supplement: command, server, arguments
	zero         map[string]map[string]string            // from the supplement: command, argument, what 0 means
	without      map[string]map[string]map[string]string // from the supplement: TypesWithout by command
	units        map[string]map[string]string            // from the supplement: command, argument, unit
}

type excludedCmd struct {
	name, reason string
	servers      []string
	group        string
	container    bool // a container command (CLIENT, CONFIG): not callable on its own
	setup        bool // Options.OnConnect may send it ("NAME: - [setup] reason")
}

// Generate builds the generated files.
func Generate(cfg Config) (*Output, error) {
	if cfg.Package == "" {
		cfg.Package = "respire"
	}
	sp, lacks, notes, err := applySupplement(cfg.Spec, cfg.Supplement)
	if err != nil {
		return nil, err
	}
	cfg.Spec = sp
	g := &generator{cfg: cfg, reg: newRegistry(), emitted: map[string]bool{}, lacks: lacks, zero: map[string]map[string]string{},
		without: map[string]map[string]map[string]string{}, units: map[string]map[string]string{}}
	if cfg.Supplement != nil {
		for _, e := range cfg.Supplement.Commands {
			g.zero[e.Name] = e.Zero
			g.without[e.Name] = e.TypesWithout
			g.units[e.Name] = e.Units
		}
	}
	g.rep = newReplies(cfg.Replies, g.reg)
	if err := g.build(); err != nil {
		return nil, err
	}
	if err := g.reg.assignNames(); err != nil {
		return nil, err
	}
	files, err := g.emit()
	if err != nil {
		return nil, err
	}
	return &Output{Files: files, Skipped: g.skipped, Methods: len(g.methods), Types: len(g.reg.decls), Notes: notes}, nil
}

// build turns every command into methods.
func (g *generator) build() error {
	s := g.cfg.Spec
	containers := map[string]bool{}
	for _, c := range s.Commands {
		if c.Container != "" {
			containers[c.Container] = true
		}
	}
	var missing []string
	var errs []error
	known := map[string]bool{}
	generated := map[string]bool{}
	for i := range s.Commands {
		cmd := &s.Commands[i]
		known[cmd.Name] = true
		e := g.cfg.Replies.Entries[cmd.Name]
		switch {
		case e == nil && containers[cmd.Name]:
			continue // not callable on its own
		case e == nil && g.cfg.AllowMissing:
			g.skipped = append(g.skipped, cmd.Name)
			continue
		case e == nil:
			missing = append(missing, cmd.Name)
			continue
		case e.Reply == nil:
			g.excluded = append(g.excluded, excludedCmd{cmd.Name, e.Excluded, cmd.Servers, cmd.Group, containers[cmd.Name], e.Setup})
			continue
		}
		generated[cmd.Name] = true
		if err := g.buildCommand(cmd, e); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s: %w", g.cfg.Replies.File, e.Line, cmd.Name, err))
		}
	}
	if len(missing) > 0 {
		return &MissingError{Commands: missing}
	}
	for _, name := range sortedKeys(g.cfg.Replies.Entries) {
		if !known[name] {
			e := g.cfg.Replies.Entries[name]
			errs = append(errs, fmt.Errorf("%s:%d: %s is not a command of the spec", g.cfg.Replies.File, e.Line, name))
		}
	}
	excluded := map[string]bool{}
	for _, e := range g.excluded {
		excluded[e.name] = true
	}
	listed, connErrs := checkConnState(s, generated, excluded, g.sharedSafe(), g.cfg.Replies.File)
	g.sharedListed = listed
	errs = append(errs, connErrs...)
	if err := g.checkNames(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// clientMethods and batchMethods are the hand-written methods that a
// generated one must not collide with.
var clientMethods = map[string]bool{"Do": true, "Close": true, "Stats": true, "NewBatch": true}
var batchMethods = map[string]bool{"Exec": true, "Len": true}

func (g *generator) checkNames() error {
	seen := map[string]string{}
	var errs []error
	for _, m := range g.methods {
		if clientMethods[m.name] || batchMethods[m.name] {
			errs = append(errs, fmt.Errorf("%s: method name %s is taken by a hand-written method", m.cmd.Name, m.name))
		}
		names := []string{m.name}
		if m.lease != "" {
			names = append(names, m.name+"Lease", m.name+"Append")
		}
		for _, n := range names {
			if prev, dup := seen[n]; dup {
				errs = append(errs, fmt.Errorf("%s and %s both make a method %s", prev, m.cmd.Name, n))
			}
			seen[n] = m.cmd.Name
		}
	}
	return errors.Join(errs...)
}

func infoVar(name string) string {
	r := strings.NewReplacer(" ", "_", "-", "_", "|", "_", ".", "_")
	return "cmd" + r.Replace(name)
}

func (g *generator) buildCommand(cmd *spec.Command, e *Entry) error {
	baseName, err := MethodName(cmd.Name)
	if err != nil {
		return err
	}
	args := buildArgs(cmd)
	if err := applyLacks(args, cmd, g.lacks[cmd.Name]); err != nil {
		return err
	}
	if err := applyZero(args, cmd, g.zero[cmd.Name]); err != nil {
		return err
	}
	if err := applyUnits(args, cmd, g.units[cmd.Name]); err != nil {
		return err
	}
	g.infos = append(g.infos, cmd)
	var all []string
	for _, v := range e.Variants {
		for _, sel := range v.all() {
			if _, err := findSelector(args, sel); err != nil {
				return fmt.Errorf("variant %s: %w", strings.Join(v.all(), "+"), err)
			}
		}
		all = append(all, v.all()...)
	}
	base, err := g.buildMethod(cmd, baseName, "", args, nil, all, e.Reply, nil, nil)
	if err != nil {
		return err
	}
	for i := range e.Variants {
		v := &e.Variants[i]
		var others []string
		for j, w := range e.Variants {
			if j != i {
				for _, s := range w.all() {
					if !slices.Contains(v.all(), s) {
						others = append(others, s)
					}
				}
			}
		}
		name := v.Method
		if name == "" {
			name = baseName
			for _, s := range v.all() {
				parts := strings.Split(s, ".")
				name += fieldName(parts[len(parts)-1])
			}
		}
		if _, err := g.buildMethod(cmd, name, baseName, args, v.Selectors, others, v.Reply, v, base.opts); err != nil {
			return fmt.Errorf("variant %s: %w", strings.Join(v.all(), "+"), err)
		}
	}
	return nil
}

// buildMethod builds one method; a variant whose optional arguments are
// those of the base method shares baseOpts.
func (g *generator) buildMethod(cmd *spec.Command, name, base string, args []*arg, force, omit []string, reply *Type, v *Variant, baseOpts *typeDecl) (*method, error) {
	shaped, err := applyVariant(args, force, omit)
	if err != nil {
		return nil, err
	}
	if err := retypeWithout(shaped, cmd.Name, g.without[cmd.Name]); err != nil {
		return nil, err
	}
	c, err := layout(g.reg, name, cmd.Name, shaped, true, nil)
	if err != nil {
		return nil, err
	}
	m := &method{name: name, base: base, cmd: cmd, info: infoVar(cmd.Name), c: c, args: shaped,
		forced: force, omitted: omit, variant: v, reply: reply}
	m.res, m.rt, m.dec, err = g.rep.result(reply, name+"Reply")
	if err != nil {
		return nil, err
	}
	if hasKeyParam(c) {
		m.lease = g.rep.leaseDecoder(reply)
	}
	if len(c.opts) > 0 {
		sig := "opts:" + optsSig(c)
		if baseOpts != nil && baseOpts.sig == sig {
			m.opts = baseOpts
		} else {
			m.opts = g.reg.add(&typeDecl{kind: declOptions, name: name + "Options", sig: sig, fields: c, users: []string{name}})
		}
	}
	g.methods = append(g.methods, m)
	return m, nil
}

func optsSig(c *container) string {
	var b strings.Builder
	for _, s := range c.opts {
		fmt.Fprintf(&b, "%s:%d:%s;", s.name, s.form, s.typ.sig())
	}
	return b.String()
}

// emit renders all files.
func (g *generator) emit() (map[string][]byte, error) {
	files := map[string][]byte{}
	render := func(name string, f *jen.File) error {
		var buf bytes.Buffer
		if err := f.Render(&buf); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			return fmt.Errorf("%s: gofmt: %w", name, err)
		}
		files[name] = src
		return nil
	}
	newFile := func(doc string) *jen.File {
		f := jen.NewFile(g.cfg.Package)
		f.HeaderComment("Code generated by respgen. DO NOT EDIT.")
		f.PackageComment(doc)
		f.ImportName(respPkg, "resp")
		return f
	}

	cmds := newFile("")
	g.emitInfos(cmds)
	batch := newFile("")
	for _, m := range g.methods {
		if err := g.emitMethod(cmds, batch, m); err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
	}
	types := newFile("")
	if err := g.emitTypes(types); err != nil {
		return nil, err
	}
	decs := newFile("")
	g.emitReaders(decs)
	srvs := newFile("")
	if err := g.emitServers(srvs); err != nil {
		return nil, err
	}

	// Drop the package comments we do not want (jen needs a non-nil file).
	for name, f := range map[string]*jen.File{"zz_commands.go": cmds, "zz_batch.go": batch, "zz_types.go": types, "zz_decoders.go": decs, "zz_servers.go": srvs} {
		if err := render(name, f); err != nil {
			return nil, err
		}
	}
	files["zz_excluded.md"] = g.excludedDoc()
	return files, nil
}

func (g *generator) excludedDoc() []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Code generated by respgen. DO NOT EDIT. -->\n\n")
	b.WriteString("# Commands without a generated method\n\n")
	b.WriteString("These commands of `spec/commands.json` have no typed method on `Client` or `Batch`,\n")
	b.WriteString("because they change the state of the connection they run on, which the client\n")
	b.WriteString("shares between callers. The reasons come from `spec/replies.txt`. `Client.Do`,\n")
	b.WriteString("`Client.DoBlocking`, `Batch.Do` and `Tx.Do` refuse every one of them but the\n")
	b.WriteString("container commands with an `*ArgError` that names the safe way; `Client.WithConn`\n")
	b.WriteString("runs them on a connection of the caller's own, closed afterwards.\n\n")
	b.WriteString("Those marked *setup* set an attribute that every connection of a client may carry\n")
	b.WriteString("alike: `Options.OnConnect` may send them on each new connection (`SetupConn.Do`).\n\n")
	b.WriteString("| Command | Group | Reason |\n|---|---|---|\n")
	ex := slices.Clone(g.excluded)
	sort.Slice(ex, func(i, j int) bool { return ex[i].name < ex[j].name })
	for _, e := range ex {
		reason := strings.ReplaceAll(e.reason, "|", "\\|")
		if e.setup {
			reason = "*setup*: " + reason
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", e.name, e.group, reason)
	}
	var safe strings.Builder
	sharedSafeDoc(&safe, g.sharedListed, g.sharedSafe())
	b.WriteString(safe.String())
	return b.Bytes()
}

// hasKeyParam reports a method that takes a key as a parameter: its reply
// is then data read from the keyspace, worth an allocation-free form, and
// not text about the server (INFO, CLIENT LIST).
func hasKeyParam(c *container) bool {
	for _, s := range c.params {
		if s.a.scalar == scKey {
			return true
		}
	}
	return false
}
