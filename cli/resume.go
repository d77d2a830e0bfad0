package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
)

// resumeFlag is --resume: a checkpoint in --dir after every level, and a
// run that continues from it.
type resumeFlag struct{ on bool }

func (r *resumeFlag) register(fs *pflag.FlagSet) {
	fs.BoolVar(&r.on, "resume", false, "keep a checkpoint in --dir after every level and continue from the one there, if any: a run interrupted (Ctrl-C or kill -9) and started again with the same flags ends as an uninterrupted one; a checkpoint of another search (other flags or build) is refused")
}

// apply sets opts.Checkpoint to a directory inside dir, one per shard, and
// has the run say when it continues from a checkpoint.
func (r *resumeFlag) apply(opts *explore.Options, dir string, stdout io.Writer) error {
	if !r.on {
		return nil
	}
	switch {
	case dir == "":
		return errors.New("--resume needs --dir, where the checkpoint is kept")
	case opts.Simulate != nil:
		return errors.New("--resume cannot be combined with --simulate")
	}
	name := "checkpoint"
	if sh := opts.Shard; sh.Count > 0 {
		// Under a directory named by the search, as its result: a batch
		// job's shard resumes its own search's checkpoint, and a reused
		// volume's checkpoints of other searches stay out of its way.
		// Not by the depth limit, which a checkpoint may be resumed under
		// another of.
		search := opts.SearchIdentity().Without(explore.MaxDepthField).Fingerprint()
		name = filepath.Join(search, fmt.Sprintf("checkpoint-%d-of-%d", sh.Index, sh.Count))
	}
	opts.Checkpoint = filepath.Join(dir, name)
	opts.OnResume = func(level int, distinct uint64) {
		fmt.Fprintf(stdout, "resuming from the checkpoint in %s: level %d, %d distinct states so far\n", opts.Checkpoint, level, distinct)
	}
	return nil
}

// searchErr reports a search that could not be carried out. A checkpoint
// of another search, or one a live run holds, is a usage error (exit 2);
// anything else, a damaged checkpoint included, exit 3.
func searchErr(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "%s %s: %v\n", progName, cmd, err)
	var me *explore.MismatchError
	if errors.As(err, &me) || errors.Is(err, explore.ErrInUse) {
		return exitUsage
	}
	return exitError
}
