// Command respgen maintains respire's generated command surface.
//
//	respgen spec --addr HOST:PORT [--addr ...] [--out spec/commands.json]
//	respgen gen  --spec spec/commands.json --replies spec/replies.txt --out respire/
//
// "spec" dumps the command tables of live servers into the spec file; "gen"
// writes respire/zz_*.go from the spec and the reply notation. Run either
// with -h for its flags.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "spec":
		err = runSpec(os.Args[2:])
	case "gen":
		err = runGen(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "respgen: unknown subcommand %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "respgen:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  respgen spec --addr HOST:PORT [--addr HOST:PORT ...] [--out spec/commands.json]
  respgen gen  --spec spec/commands.json --replies spec/replies.txt --out respire/
`)
}
