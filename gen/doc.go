// Package gen generates respire's command surface from the command spec
// (spec/commands.json, package gen/spec) and the reply notation
// (spec/replies.txt, grammar in spec/REPLIES.md). cmd/respgen's "gen"
// subcommand runs it; "go generate ./..." runs that.
//
// The pipeline, one file each:
//
//   - notation.go parses the reply notation (ParseReplies), with line numbers.
//   - args.go prepares each command's arguments: alternate shapes of merged
//     specs, durations and times (classify), counted "num..." arguments,
//     tokens that name blocks, and the shaping of reply variants.
//   - layout.go decides the Go form of every argument: parameter, Options
//     field, enum, choice struct, block struct (see its comment).
//   - registry.go names and deduplicates the generated types.
//   - replytypes.go maps reply types to Go types, readers and decoders.
//   - names.go turns Redis names into Go names (MethodName).
//   - generate.go, emit.go and emit_types.go build and render the files.
//
// Generated code calls a small internal surface of package respire
// (newCmd, exec, x.arg..., decoders of decode.go, helpers of methods.go); it
// knows nothing of the transport.
package gen
