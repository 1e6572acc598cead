package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Spec is the whole command table: every command and subcommand known to
// at least one of Servers.
type Spec struct {
	// Servers names every dump merged into this spec ("redis-7.0.15",
	// "valkey-8.1.1"), in the order of CompareServers.
	Servers []string `json:"servers"`
	// Commands is sorted by Name.
	Commands []Command `json:"commands"`
}

// Command describes one command or one subcommand. Subcommands are
// entries of their own, named "CONTAINER SUB", with Container set.
type Command struct {
	Name            string   `json:"name"`
	Container       string   `json:"container,omitempty"`
	Group           string   `json:"group"`
	Summary         string   `json:"summary,omitempty"`
	Since           string   `json:"since,omitempty"`
	Complexity      string   `json:"complexity,omitempty"`
	DocFlags        []string `json:"doc_flags,omitempty"`
	DeprecatedSince string   `json:"deprecated_since,omitempty"`
	ReplacedBy      string   `json:"replaced_by,omitempty"`
	// Module is the name of the server module that provides the command
	// (Redis 8 ships vector sets as the "vectorset" module); empty for
	// built-in commands.
	Module string `json:"module,omitempty"`
	// History lists the changes the server documents for the command,
	// oldest first.
	History []HistoryEntry `json:"history,omitempty"`
	// Arity is the number of words of a call, the command name (and for a
	// subcommand the container) included; negative means "at least -Arity".
	Arity         int      `json:"arity"`
	Flags         []string `json:"flags,omitempty"`
	ACLCategories []string `json:"acl_categories,omitempty"`
	Tips          []string `json:"tips,omitempty"`
	// FirstKey, LastKey and KeyStep are the legacy key positions of
	// COMMAND INFO (0 = no keys). Position 0 is the command name; for a
	// subcommand the container is 0 and the subcommand 1. A negative
	// LastKey counts from the end.
	FirstKey  int        `json:"first_key"`
	LastKey   int        `json:"last_key"`
	KeyStep   int        `json:"key_step"`
	KeySpecs  []KeySpec  `json:"key_specs,omitempty"`
	Arguments []Argument `json:"arguments,omitempty"`
	// Servers lists the servers that have this command.
	Servers []string `json:"servers"`
}

// HistoryEntry is one line of a command's documented history.
type HistoryEntry struct {
	Version string `json:"version"`
	Change  string `json:"change"`
}

// Argument is one argument of a command, as COMMAND DOCS describes it.
// Arguments of type "oneof" and "block" hold their parts in Arguments.
type Argument struct {
	Name            string `json:"name"`
	DisplayText     string `json:"display_text,omitempty"`
	Type            string `json:"type"`
	Token           string `json:"token,omitempty"`
	Optional        bool   `json:"optional,omitempty"`
	Multiple        bool   `json:"multiple,omitempty"`
	MultipleToken   bool   `json:"multiple_token,omitempty"`
	Since           string `json:"since,omitempty"`
	DeprecatedSince string `json:"deprecated_since,omitempty"`
	// KeySpecIndex points into the command's KeySpecs. It is meaningful,
	// and written to JSON, only when Type is "key".
	KeySpecIndex int        `json:"key_spec_index"`
	Value        string     `json:"value,omitempty"`
	Summary      string     `json:"summary,omitempty"`
	Arguments    []Argument `json:"arguments,omitempty"`
	// Servers is set only when the argument is missing on some server that
	// has the command; it then lists the servers that have the argument.
	Servers []string `json:"servers,omitempty"`
}

// argumentJSON is Argument as written: key_spec_index only for keys.
type argumentJSON struct {
	Name            string     `json:"name"`
	DisplayText     string     `json:"display_text,omitempty"`
	Type            string     `json:"type"`
	Token           string     `json:"token,omitempty"`
	Optional        bool       `json:"optional,omitempty"`
	Multiple        bool       `json:"multiple,omitempty"`
	MultipleToken   bool       `json:"multiple_token,omitempty"`
	Since           string     `json:"since,omitempty"`
	DeprecatedSince string     `json:"deprecated_since,omitempty"`
	KeySpecIndex    *int       `json:"key_spec_index,omitempty"`
	Value           string     `json:"value,omitempty"`
	Summary         string     `json:"summary,omitempty"`
	Arguments       []Argument `json:"arguments,omitempty"`
	Servers         []string   `json:"servers,omitempty"`
}

// MarshalJSON writes key_spec_index only for arguments of type "key",
// where 0 is a valid index.
func (a Argument) MarshalJSON() ([]byte, error) {
	w := argumentJSON{
		Name: a.Name, DisplayText: a.DisplayText, Type: a.Type, Token: a.Token,
		Optional: a.Optional, Multiple: a.Multiple, MultipleToken: a.MultipleToken,
		Since: a.Since, DeprecatedSince: a.DeprecatedSince, Value: a.Value,
		Summary: a.Summary, Arguments: a.Arguments, Servers: a.Servers,
	}
	if a.Type == "key" {
		i := a.KeySpecIndex
		w.KeySpecIndex = &i
	}
	return json.Marshal(w)
}

// KeySpec says where a command's keys are and what it does with them.
type KeySpec struct {
	BeginSearch BeginSearch `json:"begin_search"`
	FindKeys    FindKeys    `json:"find_keys"`
	// Flags are the server's key-spec flags as given (upper-case "RW",
	// "RO", "OW", "RM"; lower-case "access", "insert", ...), sorted.
	Flags []string `json:"flags,omitempty"`
	Notes string   `json:"notes,omitempty"`
}

// BeginSearch finds the first key: at a fixed index ("index"), after a
// keyword ("keyword") or not statically ("unknown").
type BeginSearch struct {
	Type string          `json:"type"`
	Spec BeginSearchSpec `json:"spec"`
}

// BeginSearchSpec holds the fields of every BeginSearch type; only those
// of the spec's Type are written.
type BeginSearchSpec struct {
	Index     int    `json:"index"`     // type "index"
	Keyword   string `json:"keyword"`   // type "keyword"
	StartFrom int    `json:"startfrom"` // type "keyword"; negative = from the end
}

// MarshalJSON writes only the spec fields that belong to b.Type.
func (b BeginSearch) MarshalJSON() ([]byte, error) {
	var spec any = struct{}{}
	switch b.Type {
	case "index":
		spec = struct {
			Index int `json:"index"`
		}{b.Spec.Index}
	case "keyword":
		spec = struct {
			Keyword   string `json:"keyword"`
			StartFrom int    `json:"startfrom"`
		}{b.Spec.Keyword, b.Spec.StartFrom}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Spec any    `json:"spec"`
	}{b.Type, spec})
}

// FindKeys finds the keys from the first one: a range ("range"), a count
// given by an argument ("keynum") or not statically ("unknown").
type FindKeys struct {
	Type string       `json:"type"`
	Spec FindKeysSpec `json:"spec"`
}

// FindKeysSpec holds the fields of every FindKeys type; only those of the
// spec's Type are written.
type FindKeysSpec struct {
	LastKey   int `json:"lastkey"`   // type "range": relative to the first key; negative = from the end
	KeyStep   int `json:"keystep"`   // types "range" and "keynum"
	Limit     int `json:"limit"`     // type "range": with lastkey -1, take 1/limit of the rest
	KeyNumIdx int `json:"keynumidx"` // type "keynum": relative to the first key position
	FirstKey  int `json:"firstkey"`  // type "keynum": relative to the first key position
}

// MarshalJSON writes only the spec fields that belong to f.Type.
func (f FindKeys) MarshalJSON() ([]byte, error) {
	var spec any = struct{}{}
	switch f.Type {
	case "range":
		spec = struct {
			LastKey int `json:"lastkey"`
			KeyStep int `json:"keystep"`
			Limit   int `json:"limit"`
		}{f.Spec.LastKey, f.Spec.KeyStep, f.Spec.Limit}
	case "keynum":
		spec = struct {
			KeyNumIdx int `json:"keynumidx"`
			FirstKey  int `json:"firstkey"`
			KeyStep   int `json:"keystep"`
		}{f.Spec.KeyNumIdx, f.Spec.FirstKey, f.Spec.KeyStep}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Spec any    `json:"spec"`
	}{f.Type, spec})
}

// Load reads a spec written by Marshal.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("spec: %s: %w", path, err)
	}
	return s, nil
}

// Parse decodes a spec written by Marshal. Like Dump it is strict: a field
// it does not know, as a misspelt key in a hand edit would be, is an error
// rather than dropped, and so is anything after the spec's JSON object.
func Parse(data []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the spec")
	}
	return &s, nil
}

// Marshal returns the file form of s: normalized (commands sorted by name,
// flag, category, tip and server lists sorted), 2-space indented, with a
// trailing newline. s itself is not modified.
func (s *Spec) Marshal() ([]byte, error) {
	n := s.normalized()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Lookup returns the command or subcommand called name ("GET",
// "client kill"; case and repeated spaces do not matter), or nil.
func (s *Spec) Lookup(name string) *Command {
	name = strings.ToUpper(strings.Join(strings.Fields(name), " "))
	for i := range s.Commands {
		if s.Commands[i].Name == name {
			return &s.Commands[i]
		}
	}
	return nil
}

// normalized returns a copy of s in canonical order. Argument order is
// meaningful and kept.
func (s *Spec) normalized() *Spec {
	n := &Spec{
		Servers:  sortedServers(s.Servers),
		Commands: make([]Command, len(s.Commands)),
	}
	for i, c := range s.Commands {
		c.DocFlags = sortedStrings(c.DocFlags)
		c.Flags = sortedStrings(c.Flags)
		c.ACLCategories = sortedStrings(c.ACLCategories)
		c.Tips = sortedStrings(c.Tips)
		c.Servers = sortedServers(c.Servers)
		c.KeySpecs = slices.Clone(c.KeySpecs)
		for j := range c.KeySpecs {
			c.KeySpecs[j].Flags = sortedStrings(c.KeySpecs[j].Flags)
		}
		c.Arguments = normalizedArgs(c.Arguments)
		n.Commands[i] = c
	}
	slices.SortStableFunc(n.Commands, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	if n.Servers == nil {
		n.Servers = []string{}
	}
	if n.Commands == nil {
		n.Commands = []Command{}
	}
	return n
}

func normalizedArgs(args []Argument) []Argument {
	if args == nil {
		return nil
	}
	out := make([]Argument, len(args))
	for i, a := range args {
		a.Servers = sortedServers(a.Servers)
		a.Arguments = normalizedArgs(a.Arguments)
		out[i] = a
	}
	return out
}

func sortedStrings(v []string) []string {
	if len(v) == 0 {
		return nil
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return slices.Compact(v)
}

func sortedServers(v []string) []string {
	if len(v) == 0 {
		return nil
	}
	v = slices.Clone(v)
	slices.SortFunc(v, CompareServers)
	return slices.Compact(v)
}
