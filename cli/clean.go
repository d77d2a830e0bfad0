package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
)

func cleanFlags() (*pflag.FlagSet, *string) {
	fs := pflag.NewFlagSet("clean", pflag.ContinueOnError)
	dir := fs.String("dir", "", "the directory runs were given with --dir (default: the system's temporary directory)")
	fs.String("db", "", "also drop the replication slots and publications that killed record runs left on the PostgreSQL server at `URL`")
	return fs, dir
}

// runClean is `cutcheck clean`: every run already does this for its own
// --dir before it starts; clean does it on demand.
func runClean(args []string, stdout, stderr io.Writer) int {
	fs, dir := cleanFlags()
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		return usageErr(stderr, "clean", "takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	if db, _ := fs.GetString("db"); db != "" {
		if code := cleanDB(db, stdout, stderr); code != exitOK {
			return code
		}
	}
	where := *dir
	if where == "" {
		where = os.TempDir()
	}
	removed, err := explore.RemoveOrphans(*dir)
	for _, o := range removed {
		fmt.Fprintf(stdout, "removed %s (%s), left by process %d, which is no longer running\n", o.Path, size(o.Bytes), o.PID)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck clean: %v\n", err)
		return exitError
	}
	if len(removed) == 0 {
		fmt.Fprintf(stdout, "nothing to remove: no directory in %s was left by a run that is gone\n", where)
	}
	return exitOK
}

// removeOrphans clears dir of what killed runs left, saying so on stderr;
// it runs before every search, so a killed run costs disk only until the
// next one.
func removeOrphans(dir string, stderr io.Writer) {
	removed, err := explore.RemoveOrphans(dir)
	for _, o := range removed {
		fmt.Fprintf(stderr, "cutcheck: removed %s (%s), left by process %d, which is no longer running\n", o.Path, size(o.Bytes), o.PID)
	}
	if err != nil {
		fmt.Fprintf(stderr, "cutcheck: cleaning up after killed runs: %v\n", err)
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
