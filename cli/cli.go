// Package cli is cutcheck's command line as a library: cmd/cutcheck is one
// call to Main, and a user's own main can register protocols
// (protocols.Register) and then call Main to get every command for them —
// check, run with spec files naming them, reproduce over their own spec
// directory, list, traces and HTML.
//
// Exit codes: 0 success (Accept for certify), 1 a property was violated (or a
// spec's verdict differs from its expectation; Reject for certify), 2 usage
// error, 3 internal or I/O error, 4 interrupted or stopped at a limit before the
// search finished, 5 Unsupported (certify: evidence it cannot interpret).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	_ "github.com/cutcheck/cutcheck/protocols/open" // the §6.5 disciplines are shipped protocols too
)

// Exit codes; later commands keep them.
const (
	exitOK         = 0
	exitViolated   = 1
	exitUsage      = 2
	exitError      = 3
	exitIncomplete = 4
)

var version = "0.1.0"

// progName is the program's name in usage text, hints and error messages:
// the running binary's, set by Main, so that a user's own program (Main
// with protocols of its own) names itself; "cutcheck" when run is called
// directly, as the tests do. The version banners keep "cutcheck", whose
// version they give.
var progName = "cutcheck"

// Main runs the command line args (without the program name) and returns the
// process's exit code. Its messages name the running binary
// (filepath.Base(os.Args[0])): cutcheck's own, and a user's program its own.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(os.Args) > 0 {
		if name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe"); name != "" && name != "." && name != string(filepath.Separator) {
			progName = name
		}
	}
	return run(args, stdout, stderr)
}

// command is one subcommand.
type command struct {
	name, args, summary string
	run                 func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"check", "<protocol> [flags]", "explore one protocol at the given bounds and check its invariants", runCheck},
		{"run", "FILE... [flags]", "check spec files and compare each verdict with its expectation", runSpecs},
		{"merge", "DIR [flags]", "combine the shard results of one split search (check --shard) into its single-run report", runMerge},
		{"reproduce", "[--quick] [--out DIR] [--specs DIR]", "run every spec (the paper's bounded and mutated runs) and write the results table", runReproduce},
		{"certify", "BUNDLE [flags] (--from debezium: FILE…, a topic a file)", "verify a recorded run's evidence bundle: Accept, Reject or Unsupported (a certified virtual cut)", runCertify},
		{"record", "--db URL --table T --bundle FILE", "record a watermark backfill of a PostgreSQL table as an evidence bundle and Debezium events", runRecord},
		{"list", "", "list protocols (with their properties), invariants and mutations", runList},
		{"clean", "[--dir DIR] [--out DIR]", "remove what killed runs left: disk-tier directories, and reproduce's staging directories", runClean},
		{"version", "", "print the version", runVersion},
		{"help", "[command]", "show help for cutcheck or one command", runHelp},
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" {
		usage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "%s: unknown command %q (run '%s help' for the list)\n", progName, name, progName)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "%s — a model checker for change-data-capture capture protocols (Generalized DBLog)\n\nUsage:\n", progName)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s %-10s %-36s %s\n", progName, c.name, c.args, c.summary)
	}
	fmt.Fprintf(w, "\nExit codes: 0 success (certify: Accept), 1 property violated or verdict differs from\nexpectation (certify: Reject), 2 usage error, 3 internal or I/O error, 4 interrupted or\nstopped at a limit, 5 certify: Unsupported.\n")
	fmt.Fprintf(w, "Run '%s help <command>' for a command's flags.\n", progName)
}

// interrupted returns a context cancelled by Ctrl-C or SIGTERM; tests
// replace it to interrupt a command at a chosen point.
var interrupted = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return usageErr(stderr, "version", "takes no arguments, got %q", strings.Join(args, " "))
	}
	fmt.Fprintln(stdout, "cutcheck", version)
	return exitOK
}

func runHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return exitOK
	}
	if len(args) > 1 {
		return usageErr(stderr, "help", "takes at most one command name, got %q", strings.Join(args, " "))
	}
	for _, c := range commands {
		if c.name == args[0] {
			fmt.Fprintf(stdout, "Usage: %s %s %s\n\n%s.\n", progName, c.name, c.args, capitalize(c.summary))
			if n := helpNotes[c.name]; n != "" {
				fmt.Fprintf(stdout, "\n%s\n", n)
			}
			if fs := flagsFor(c.name); fs != nil {
				fmt.Fprintf(stdout, "\nFlags:\n%s", fs.FlagUsages())
			}
			return exitOK
		}
	}
	fmt.Fprintf(stderr, "%s help: unknown command %q (run '%s help' for the list)\n", progName, args[0], progName)
	return exitUsage
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// flagsFor returns the flag set of a command, for help.
func flagsFor(name string) *pflag.FlagSet {
	switch name {
	case "check":
		fs, _ := checkFlags()
		return fs
	case "run":
		fs, _ := runFlags()
		return fs
	case "reproduce":
		fs, _ := reproduceFlags()
		return fs
	case "merge":
		fs, _ := mergeFlags()
		return fs
	case "clean":
		fs, _ := cleanFlags()
		return fs
	case "certify":
		fs, _ := certifyFlags()
		return fs
	case "record":
		fs, _ := recordFlags()
		return fs
	}
	return nil
}

// parse parses a command's flags. It returns -1 to go on, or the exit code:
// 0 after --help, the usage code (with one line on stderr) after a bad flag.
func parse(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Flags of %s %s:\n%s", progName, fs.Name(), fs.FlagUsages())
			return exitOK
		}
		return usageErr(stderr, fs.Name(), "%v", err)
	}
	return -1
}

func usageErr(stderr io.Writer, cmd, format string, a ...any) int {
	fmt.Fprintf(stderr, "%s %s: %s (run '%s help %s')\n", progName, cmd, fmt.Sprintf(format, a...), progName, cmd)
	return exitUsage
}
