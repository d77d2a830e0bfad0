package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
	"github.com/cutcheck/cutcheck/record"
)

type cleanOpts struct{ dir, out, outputs, signal string }

func cleanFlags() (*pflag.FlagSet, *cleanOpts) {
	o := &cleanOpts{}
	fs := pflag.NewFlagSet("clean", pflag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", "", "the directory runs were given with --dir (default: the system's temporary directory)")
	fs.StringVar(&o.out, "out", "results", "the directory reproduce was given with --out: its staging directories left by killed runs are removed")
	fs.String("db", "", "also remove what killed record runs left in the PostgreSQL database at `URL`: idle cutcheck_ slots, their publications, their signal rows, and the signalling tables record created, once empty")
	fs.StringVar(&o.signal, "signal-table", "debezium_signal", "with --db: a signalling table record runs used that record did not create (their rows are removed from it too)")
	fs.StringVar(&o.outputs, "outputs", ".", "the directory of record's --bundle, --events and --notifications: their partial files left by killed runs are removed")
	return fs, o
}

// runClean is `cutcheck clean`: every run already does this for its own
// --dir (reproduce for its --out) before it starts; clean does it on demand.
func runClean(args []string, stdout, stderr io.Writer) int {
	fs, o := cleanFlags()
	dir := &o.dir
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return usageErr(stderr, "clean", "takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	if db, _ := fs.GetString("db"); db != "" {
		if code := cleanDB(db, o.signal, stdout, stderr); code != exitOK {
			return code
		}
	}
	where := *dir
	if where == "" {
		where = os.TempDir()
	} else if fi, err := os.Stat(where); err != nil || !fi.IsDir() {
		// A --dir that is not there cannot hold a killed run's files: most
		// likely a typo, which "nothing to remove" would hide.
		switch {
		case err == nil:
			return usageErr(stderr, "clean", "--dir: %s is a file; give the directory runs were given with --dir", where)
		case os.IsNotExist(err):
			return usageErr(stderr, "clean", "--dir: there is no directory %s", where)
		}
		return usageErr(stderr, "clean", "--dir: %s: %v", where, pathErr(err))
	}
	removed, err := explore.RemoveOrphans(*dir)
	for _, o := range removed {
		fmt.Fprintf(stdout, "removed %s (%s), left by process %d, which is no longer running\n", o.Path, size(o.Bytes), o.PID)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s clean: %v\n", progName, err)
		return exitError
	}
	// record's spool files and partial outputs of processes that are gone
	spools, err := record.CleanFiles("")
	for _, l := range spools {
		fmt.Fprintf(stdout, "removed %s (%s), left by process %d, which is no longer running\n", l.Path, size(l.Bytes), l.PID)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s clean: %v\n", progName, err)
		return exitError
	}
	outs, err := staleOutputs(o.outputs)
	for _, line := range outs {
		fmt.Fprintln(stdout, line)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s clean: %v\n", progName, pathErr(err))
		return exitError
	}
	var sets []string
	if o.out != "" {
		sets, err = cleanSets(o.out)
		for _, line := range sets {
			fmt.Fprintln(stdout, line)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s clean: %v\n", progName, err)
			return exitError
		}
	}
	if len(removed)+len(sets)+len(spools)+len(outs) == 0 {
		fmt.Fprintf(stdout, "nothing to remove: no directory or record spool in %s was left by a run that is gone, no partial output in %s, and nothing beside %s by a reproduce\n", where, o.outputs, o.out)
	}
	return exitOK
}

// removeOrphans clears dir of what killed runs left, saying so on stderr;
// it runs before every search, so a killed run costs disk only until the
// next one.
func removeOrphans(dir string, stderr io.Writer) {
	removed, err := explore.RemoveOrphans(dir)
	for _, o := range removed {
		fmt.Fprintf(stderr, "%s: removed %s (%s), left by process %d, which is no longer running\n", progName, o.Path, size(o.Bytes), o.PID)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: cleaning up after killed runs: %v\n", progName, err)
	}
}

// size prints a byte count in binary units.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
