package explore

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// A checkpoint lets an interrupted run (cancelled, or killed outright)
// continue where it stopped, with the same final result as a run that was
// never interrupted. It is level-granular: after every level the run
// records, in Options.Checkpoint,
//
//   - levels: appended once per level, each state's fingerprint and
//     discovery key (16 bytes a state), which rebuild the seen-set and
//     the trace keys;
//   - frontier-D: the encodings of the level D to expand next;
//   - meta.json: the counters, and how much of levels and which frontier
//     file belong to the checkpoint. It is replaced (write, then rename)
//     after the others are complete, so a run killed at any moment leaves
//     the previous checkpoint intact; on resuming, whatever was appended
//     after it is cut off.
//
// A run with Options.Checkpoint continues from the checkpoint found there,
// if any, after checking that it was made by the same model (initial
// states, properties, action kinds) and options (Only, NoDeadlock,
// Symmetry, Shard); MaxDepth and Workers may differ. The level being
// expanded when the run stopped is expanded again. A finished run (pass or
// violation) removes its checkpoint; an incomplete one keeps it. Files are
// not synced: a checkpoint survives the process being killed, not the
// machine losing power. Stats.Elapsed counts only the last part of a
// resumed run.

// checkpointMeta is meta.json.
type checkpointMeta struct {
	Model       string       `json:"model"`        // modelID
	Levels      int          `json:"levels"`       // levels recorded in levels
	LevelsBytes int64        `json:"levels_bytes"` // their bytes
	Frontier    string       `json:"frontier"`     // file of the level to expand
	FrontierN   uint64       `json:"frontier_n"`
	Generated   uint64       `json:"generated"`
	Distinct    uint64       `json:"distinct"`
	QueuePeak   uint64       `json:"queue_peak"`
	Initial     uint64       `json:"initial"`
	InitGen     uint64       `json:"init_gen"`
	Coverage    []uint64     `json:"coverage"`
	ReachDepth  []int        `json:"reach_depth"`
	ShardLevels []ShardLevel `json:"shard_levels,omitempty"`
}

// checkpoint is the writer's state.
type checkpoint struct {
	dir    string
	levels *os.File
	w      *bufio.Writer
	bytes  int64 // of levels, flushed or buffered
	n      int   // levels appended
	front  string
}

// modelID identifies what a checkpoint was made by.
func (e *engine[S, A]) modelID() string {
	h := xxhash.New()
	var buf []byte
	for _, s := range e.m.Init() {
		if e.sym != nil {
			s = e.sym.Canonical(&s)
		}
		buf = e.fpenc.Encode(&s, buf[:0])
		h.Write(binary.AppendUvarint(nil, uint64(len(buf))))
		h.Write(buf)
	}
	for _, p := range e.props {
		fmt.Fprintf(h, "prop %s %v\n", p.Name, p.Kind)
	}
	for _, n := range e.names {
		fmt.Fprintf(h, "kind %s\n", n)
	}
	// The properties checked, as selected (Only, With, OptIn), not the
	// options that selected them.
	fmt.Fprintf(h, "checked %v %v nodeadlock %v symmetry %v shard %+v\n", e.always, e.transition, e.opts.NoDeadlock, e.symmetry, e.opts.Shard)
	return fmt.Sprintf("%016x", h.Sum64())
}

// openCheckpoint prepares Options.Checkpoint and reads the checkpoint
// there, if any (nil when there is none).
func (e *engine[S, A]) openCheckpoint() (*checkpointMeta, error) {
	dir := e.opts.Checkpoint
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("explore: checkpoint directory: %w", err)
	}
	e.ckpt = &checkpoint{dir: dir}
	data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		f, err := os.Create(filepath.Join(dir, "levels"))
		if err != nil {
			return nil, fmt.Errorf("explore: checkpoint: %w", err)
		}
		e.ckpt.levels, e.ckpt.w = f, bufio.NewWriterSize(f, 1<<20)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("explore: checkpoint: %w", err)
	}
	var meta checkpointMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("explore: checkpoint %s: %w", dir, err)
	}
	if meta.Model != e.modelID() {
		return nil, fmt.Errorf("explore: the checkpoint in %s was made by another model or other options", dir)
	}
	if len(meta.Coverage) != len(e.names) || len(meta.ReachDepth) != len(e.props) {
		return nil, fmt.Errorf("explore: checkpoint %s does not fit the model", dir)
	}
	f, err := os.OpenFile(filepath.Join(dir, "levels"), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("explore: checkpoint: %w", err)
	}
	if err := f.Truncate(meta.LevelsBytes); err != nil {
		f.Close()
		return nil, fmt.Errorf("explore: checkpoint: %w", err)
	}
	e.ckpt.levels, e.ckpt.w = f, bufio.NewWriterSize(f, 1<<20)
	e.ckpt.bytes, e.ckpt.n, e.ckpt.front = meta.LevelsBytes, meta.Levels, meta.Frontier
	return &meta, nil
}

// appendLevel records a level's fingerprints and keys, given as runs.
func (c *checkpoint) appendLevel(fps, keys [][]uint64) error {
	var n uint64
	for _, r := range fps {
		n += uint64(len(r))
	}
	var tmp [16]byte
	hdr := binary.AppendUvarint(nil, n)
	if _, err := c.w.Write(hdr); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	c.bytes += int64(len(hdr))
	for r := range fps {
		for i, fp := range fps[r] {
			binary.LittleEndian.PutUint64(tmp[:8], fp)
			binary.LittleEndian.PutUint64(tmp[8:], keys[r][i])
			if _, err := c.w.Write(tmp[:]); err != nil {
				return fmt.Errorf("explore: checkpoint: %w", err)
			}
		}
	}
	c.bytes += int64(n) * 16
	c.n++
	return nil
}

// saveCheckpoint records the frontier and the counters: with the levels
// appended so far, a complete checkpoint.
func (e *engine[S, A]) saveCheckpoint() error {
	c := e.ckpt
	if c == nil {
		return nil
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	name := fmt.Sprintf("frontier-%d", e.depth)
	if err := e.writeCheckpointFrontier(filepath.Join(c.dir, name)); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	meta := checkpointMeta{
		Model: e.modelID(), Levels: c.n, LevelsBytes: c.bytes, Frontier: name, FrontierN: e.front.n,
		Generated: e.generated.Load(), Distinct: e.distinct.Load(), QueuePeak: e.queuePeak.Load(),
		Initial: e.initial.Load(), InitGen: e.initGen.Load(), Coverage: e.coverage, ReachDepth: e.reachDepth,
		ShardLevels: e.shardLevels,
	}
	data, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.dir, "meta.json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "meta.json")); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	if c.front != "" && c.front != name {
		os.Remove(filepath.Join(c.dir, c.front))
	}
	c.front = name
	return nil
}

// writeCheckpointFrontier writes the frontier's encodings to path.
func (e *engine[S, A]) writeCheckpointFrontier(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if e.front.file != nil {
		if _, err := e.front.file.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(f, e.front.file); err != nil {
			return err
		}
		return f.Close()
	}
	qw := newQueueWriter(f)
	for _, b := range e.front.batches {
		for i := range b.len() {
			if err := qw.write(b.state(b.data, i)); err != nil {
				return err
			}
		}
	}
	if err := qw.flush(); err != nil {
		return err
	}
	return f.Close()
}

// resume rebuilds the run from a checkpoint: the seen-set and trace keys
// level by level, then the frontier and the counters.
func (e *engine[S, A]) resume(ctx context.Context, meta *checkpointMeta) error {
	f := e.ckpt.levels
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.LimitReader(f, meta.LevelsBytes), 1<<20)
	var tmp [16]byte
	for d := range meta.Levels {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("explore: checkpoint level %d: %w", d, err)
		}
		fps, keys := make([]uint64, n), make([]uint64, n)
		for i := range n {
			if _, err := io.ReadFull(r, tmp[:]); err != nil {
				return fmt.Errorf("explore: checkpoint level %d: %w", d, err)
			}
			fps[i], keys[i] = binary.LittleEndian.Uint64(tmp[:8]), binary.LittleEndian.Uint64(tmp[8:])
		}
		if err := e.trace.add([][]uint64{keys}, e.nw); err != nil {
			return err
		}
		if err := e.addSeen(ctx, [][]uint64{fps}); err != nil {
			return err
		}
		if err := e.checkBudget(ctx); err != nil {
			return err
		}
	}
	if _, err := f.Seek(meta.LevelsBytes, io.SeekStart); err != nil {
		return err
	}
	qf, err := os.Open(filepath.Join(e.ckpt.dir, meta.Frontier))
	if err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	defer qf.Close()
	qr := bufio.NewReaderSize(qf, 1<<20)
	var bs []*batch
	for i := uint64(0); i < meta.FrontierN; i++ {
		if i%(8*unitSize) == 0 {
			bs = append(bs, e.pool.get())
		}
		if err := readState(qr, bs[len(bs)-1]); err != nil {
			e.release(bs)
			return fmt.Errorf("explore: checkpoint frontier: %w", err)
		}
	}
	e.front = frontier{n: meta.FrontierN, batches: bs}
	e.depth = meta.Levels - 1
	e.depthNow.Store(int64(e.depth))
	e.generated.Store(meta.Generated)
	e.distinct.Store(meta.Distinct)
	e.queue.Store(meta.FrontierN)
	e.queuePeak.Store(meta.QueuePeak)
	e.initial.Store(meta.Initial)
	e.initGen.Store(meta.InitGen)
	copy(e.coverage, meta.Coverage)
	copy(e.reachDepth, meta.ReachDepth)
	for p, d := range e.reachDepth {
		e.reached[p].Store(d >= 0)
	}
	e.shardLevels = slices.Clone(meta.ShardLevels)
	return e.checkBudget(ctx)
}

// closeCheckpoint closes the checkpoint's files and, after a finished
// run, removes them.
func (e *engine[S, A]) closeCheckpoint(finished bool) error {
	c := e.ckpt
	if c == nil {
		return nil
	}
	e.ckpt = nil
	err := c.w.Flush()
	if cerr := c.levels.Close(); err == nil {
		err = cerr
	}
	if !finished {
		return err
	}
	for _, name := range []string{"meta.json", "levels", c.front} {
		if name != "" {
			os.Remove(filepath.Join(c.dir, name))
		}
	}
	os.Remove(c.dir) // only if empty
	return nil
}

// exploreCheckpointed is explore with a checkpoint after every level,
// continuing from the one in Options.Checkpoint if there is one.
func (e *engine[S, A]) exploreCheckpointed(ctx context.Context) (res *Result[S, A], err error) {
	meta, err := e.openCheckpoint()
	if err != nil {
		return nil, err
	}
	defer func() {
		finished := err == nil && res != nil && res.Verdict != Incomplete
		if cerr := e.closeCheckpoint(finished); err == nil && cerr != nil {
			res, err = nil, cerr
		}
	}()
	if meta != nil {
		if err := e.resume(ctx, meta); err != nil {
			return nil, err
		}
		return e.levels(ctx)
	}
	v, err := e.initLevel(ctx)
	if err != nil {
		return nil, err
	}
	if v != nil {
		return e.violated(v)
	}
	if err := e.saveCheckpoint(); err != nil {
		return nil, err
	}
	return e.levels(ctx)
}
