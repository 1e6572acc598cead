package respire

// The command methods (zz_commands.go, zz_batch.go), their argument and
// reply types (zz_types.go), their decoders (zz_decoders.go) and the list of
// commands without a method (zz_excluded.md) are generated from the command
// spec and the reply notation. After changing either, or the generator,
// run "go generate ./..." from the repository root.

//go:generate go run ../cmd/respgen gen --spec ../spec/commands.json --replies ../spec/replies.txt --supplement ../spec/supplement.json --out .
