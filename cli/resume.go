package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/explore"
)

// resumeFlag is --resume: a checkpoint in --dir after every level, and a
// run that continues from it.
type resumeFlag struct{ on bool }

func (r *resumeFlag) register(fs *pflag.FlagSet) {
	fs.BoolVar(&r.on, "resume", false, "keep a checkpoint in --dir after every level and continue from the one there, if any: a run interrupted (Ctrl-C or kill -9) and started again with the same flags ends as an uninterrupted one")
}

// apply sets opts.Checkpoint to a directory inside dir, one per shard.
func (r *resumeFlag) apply(opts *explore.Options, dir string) error {
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
		name = fmt.Sprintf("checkpoint-%d-of-%d", sh.Index, sh.Count)
	}
	opts.Checkpoint = filepath.Join(dir, name)
	return nil
}
