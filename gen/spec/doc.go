// Package spec is the command table that respire's generated code is built
// from: the Go model of spec/commands.json, a dumper that reads it from a
// live Redis or Valkey server (COMMAND DOCS and COMMAND INFO), and a merger
// that combines the dumps of several servers into one file.
//
// Start with Spec and Command (model.go). Dump (dump.go) talks to one
// server through a minimal RESP2 client of its own, so that this package
// depends on nothing else in the repository. Merge (merge.go) explains which
// server wins when dumps disagree.
package spec
