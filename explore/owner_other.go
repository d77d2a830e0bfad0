//go:build !unix

package explore

import "os"

// Without flock, directories are not marked, and none is ever judged an
// orphan.
func claim(string) (*os.File, error) { return nil, nil }

func removeIfOrphan(string) (*Orphan, error) { return nil, nil }

// Without flock, a checkpoint directory is not locked: runs must not
// share one.
func lock(dir string) (*os.File, error) { return os.Open(dir) }
