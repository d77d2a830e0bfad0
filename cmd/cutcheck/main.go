// Command cutcheck is an explicit-state model checker for change-data-capture
// capture protocols: it explores every interleaving of a source committing
// transactions and a capture copying chunks and consuming the log, up to small
// bounds, and checks the theorems of the Generalized DBLog paper on every state.
//
// The command line itself is package cli; see its documentation for the exit
// codes, and for running it over protocols of your own.
package main

import (
	"os"

	"github.com/cutcheck/cutcheck/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
