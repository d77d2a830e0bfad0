package explore

import (
	"bufio"
	"bytes"
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
//   - meta.json: the search's identity, the counters, how much of levels
//     and which frontier file belong to the checkpoint, and a checksum of
//     each (and of itself). It is replaced (write, then rename) after the
//     others are complete, so a run killed at any moment leaves the
//     previous checkpoint intact; on resuming, whatever was appended after
//     it is cut off.
//
// A run with Options.Checkpoint continues from the checkpoint found there,
// if any, after checking that it is of the same search: the same
// SearchIdentity (but for MaxDepth, which may differ, as may Workers and
// the budget) and the same model (initial states, properties selected,
// action kinds). A checkpoint of another search is refused with a
// *MismatchError naming the field that differs; a damaged one (a file cut
// short, zeroed or changed) with ErrDamaged: it is never extended or
// trusted. While a run uses the directory its owner file is locked, and a
// second run is refused (ErrInUse). The level being expanded when the run
// stopped is expanded again. A finished run (pass or violation) removes
// its checkpoint; an incomplete one keeps it. Files are not synced: a
// checkpoint survives the process being killed, not the machine losing
// power. Stats.Elapsed counts only the last part of a resumed run.

// ErrDamaged is a checkpoint whose files do not match their checksums.
var ErrDamaged = errors.New("damaged")

// ErrInUse is a checkpoint directory another live run holds.
var ErrInUse = errors.New("in use by a live run")

// checkpointMeta is meta.json's content.
type checkpointMeta struct {
	Identity      Identity     `json:"identity"`     // Options.SearchIdentity
	Model         string       `json:"model"`        // modelID
	Levels        int          `json:"levels"`       // levels recorded in levels
	LevelsBytes   int64        `json:"levels_bytes"` // their bytes
	LevelsSum     string       `json:"levels_sum"`   // and their checksum
	Frontier      string       `json:"frontier"`     // file of the level to expand
	FrontierN     uint64       `json:"frontier_n"`
	FrontierBytes int64        `json:"frontier_bytes"`
	FrontierSum   string       `json:"frontier_sum"`
	Generated     uint64       `json:"generated"`
	Distinct      uint64       `json:"distinct"`
	QueuePeak     uint64       `json:"queue_peak"`
	Initial       uint64       `json:"initial"`
	InitGen       uint64       `json:"init_gen"`
	Coverage      []uint64     `json:"coverage"`
	ReachDepth    []int        `json:"reach_depth"`
	ShardLevels   []ShardLevel `json:"shard_levels,omitempty"`
}

// metaFile is meta.json: the meta and a checksum of it (of its compact
// JSON).
type metaFile struct {
	Format   string          `json:"format"`
	Checksum string          `json:"checksum"`
	Meta     json.RawMessage `json:"meta"`
}

const checkpointFormat = "cutcheck-checkpoint/2"

// checkpoint is the writer's state.
type checkpoint struct {
	dir    string
	owner  *os.File // locked while the run lasts
	levels *os.File
	w      *bufio.Writer
	sum    *xxhash.Digest // of levels, as appended
	bytes  int64          // of levels, flushed or buffered
	n      int            // levels appended
	front  string
}

// modelID identifies the model a checkpoint was made by.
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
	fmt.Fprintf(h, "constraints state %v action %v\n", e.cons.state != nil, e.cons.action != nil)
	// The properties checked, as selected (Only, With, OptIn), not the
	// options that selected them.
	fmt.Fprintf(h, "checked %v %v nodeadlock %v symmetry %v shard %+v\n", e.always, e.transition, e.opts.NoDeadlock, e.symmetry, e.opts.Shard)
	return fmt.Sprintf("%016x", h.Sum64())
}

func sumString(d *xxhash.Digest) string { return fmt.Sprintf("xxh64:%016x", d.Sum64()) }

// damaged is the error of a checkpoint file that cannot be trusted.
func damaged(dir, format string, a ...any) error {
	return fmt.Errorf("explore: the checkpoint in %s is %w: %s; remove the directory to start afresh", dir, ErrDamaged, fmt.Sprintf(format, a...))
}

// hashFile checks that the first size bytes of path hash to sum and that
// the file has no fewer; more are allowed where allowLonger (appended
// after the checkpoint was taken, and cut off).
func hashFile(dir, path string, size int64, sum string, allowLonger bool) (*xxhash.Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, damaged(dir, "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, damaged(dir, "%v", err)
	}
	if fi.Size() < size || !allowLonger && fi.Size() != size {
		return nil, damaged(dir, "%s holds %d bytes, the checkpoint %d", filepath.Base(path), fi.Size(), size)
	}
	h := xxhash.New()
	if _, err := io.Copy(h, io.LimitReader(bufio.NewReaderSize(f, 1<<20), size)); err != nil {
		return nil, damaged(dir, "%v", err)
	}
	if got := sumString(h); got != sum {
		return nil, damaged(dir, "%s does not match its checksum", filepath.Base(path))
	}
	return h, nil
}

// readMeta reads and checks meta.json (nil when there is none).
func readMeta(dir string) (*checkpointMeta, error) {
	data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("explore: checkpoint: %w", err)
	}
	var mf metaFile
	if err := json.Unmarshal(data, &mf); err != nil || mf.Meta == nil {
		return nil, damaged(dir, "meta.json is not a checkpoint's")
	}
	if mf.Format != checkpointFormat {
		return nil, damaged(dir, "meta.json has format %q, not %q", mf.Format, checkpointFormat)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, mf.Meta); err != nil {
		return nil, damaged(dir, "meta.json: %v", err)
	}
	if sumString(digestOf(compact.Bytes())) != mf.Checksum {
		return nil, damaged(dir, "meta.json does not match its checksum")
	}
	var meta checkpointMeta
	if err := json.Unmarshal(mf.Meta, &meta); err != nil {
		return nil, damaged(dir, "meta.json: %v", err)
	}
	if meta.Frontier != filepath.Base(meta.Frontier) || meta.Frontier == "" || meta.Levels < 1 || meta.LevelsBytes < 0 {
		return nil, damaged(dir, "meta.json names no frontier or levels")
	}
	return &meta, nil
}

func digestOf(b []byte) *xxhash.Digest {
	h := xxhash.New()
	h.Write(b)
	return h
}

// openCheckpoint prepares Options.Checkpoint, locks it, and reads and
// checks the checkpoint there, if any (nil when there is none).
func (e *engine[S, A]) openCheckpoint() (meta *checkpointMeta, err error) {
	dir := e.opts.Checkpoint
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("explore: checkpoint directory: %w", err)
	}
	owner, err := lock(dir)
	if err != nil {
		return nil, err
	}
	e.ckpt = &checkpoint{dir: dir, owner: owner, sum: xxhash.New()}
	defer func() {
		if err != nil {
			e.ckpt.owner.Close()
			e.ckpt = nil
		}
	}()
	meta, err = readMeta(dir)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		f, err := os.Create(filepath.Join(dir, "levels"))
		if err != nil {
			return nil, fmt.Errorf("explore: checkpoint: %w", err)
		}
		e.ckpt.levels, e.ckpt.w = f, bufio.NewWriterSize(f, 1<<20)
		return nil, nil
	}
	what := "the checkpoint in " + dir
	if err := e.opts.SearchIdentity().Without(MaxDepthField).Check(what, meta.Identity.Without(MaxDepthField)); err != nil {
		return nil, err
	}
	if id := e.modelID(); meta.Model != id {
		return nil, &MismatchError{What: what, Field: "model (initial states, properties, actions)", Here: id, There: meta.Model}
	}
	if len(meta.Coverage) != len(e.names) || len(meta.ReachDepth) != len(e.props) {
		return nil, damaged(dir, "its counters do not fit the model")
	}
	// Both files are checked in full before anything is read from them.
	sum, err := hashFile(dir, filepath.Join(dir, "levels"), meta.LevelsBytes, meta.LevelsSum, true)
	if err != nil {
		return nil, err
	}
	if _, err := hashFile(dir, filepath.Join(dir, meta.Frontier), meta.FrontierBytes, meta.FrontierSum, false); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "levels"), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("explore: checkpoint: %w", err)
	}
	if err := f.Truncate(meta.LevelsBytes); err != nil { // never longer: hashFile saw at least this much
		f.Close()
		return nil, fmt.Errorf("explore: checkpoint: %w", err)
	}
	e.ckpt.levels, e.ckpt.w, e.ckpt.sum = f, bufio.NewWriterSize(f, 1<<20), sum
	e.ckpt.bytes, e.ckpt.n, e.ckpt.front = meta.LevelsBytes, meta.Levels, meta.Frontier
	return meta, nil
}

// The levels file is a sequence of chunks: a tag, a count (uvarint) and
// that many 64-bit words. A level is its fingerprints (any number of
// chunks, in any order: they go to the seen-set), its keys (in level
// order: the trace keys), and an end. A level expanded in passes
// (passes.go) records each pass's fingerprints as the pass settles them
// and its keys as the passes are merged, so a checkpointed run can keep
// to its budget.
const (
	chunkFps  = 'f'
	chunkKeys = 'k'
	chunkEnd  = 'e'
)

// chunk appends one chunk of the given runs.
func (c *checkpoint) chunk(tag byte, runs [][]uint64) error {
	var n uint64
	for _, r := range runs {
		n += uint64(len(r))
	}
	if n == 0 && tag != chunkEnd {
		return nil
	}
	hdr := binary.AppendUvarint([]byte{tag}, n)
	c.sum.Write(hdr)
	if _, err := c.w.Write(hdr); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	var tmp [8]byte
	for _, r := range runs {
		for _, v := range r {
			binary.LittleEndian.PutUint64(tmp[:], v)
			c.sum.Write(tmp[:])
			if _, err := c.w.Write(tmp[:]); err != nil {
				return fmt.Errorf("explore: checkpoint: %w", err)
			}
		}
	}
	c.bytes += int64(len(hdr)) + int64(n)*8
	return nil
}

// appendLevel records a whole level's fingerprints and keys, given as runs.
func (c *checkpoint) appendLevel(fps, keys [][]uint64) error {
	if err := c.chunk(chunkFps, fps); err != nil {
		return err
	}
	if err := c.chunk(chunkKeys, keys); err != nil {
		return err
	}
	return c.endLevel()
}

// endLevel ends the level recorded in parts (appendFps, appendKeys).
func (c *checkpoint) endLevel() error {
	c.n++
	return c.chunk(chunkEnd, nil)
}

// appendFps records some of a level's fingerprints (nil-safe).
func (c *checkpoint) appendFps(fps [][]uint64) error {
	if c == nil {
		return nil
	}
	return c.chunk(chunkFps, fps)
}

// appendKeys records the level's next keys, in level order (nil-safe).
func (c *checkpoint) appendKeys(keys []uint64) error {
	if c == nil {
		return nil
	}
	return c.chunk(chunkKeys, [][]uint64{keys})
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
	path := filepath.Join(c.dir, name)
	if err := e.writeCheckpointFrontier(path); err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	fsum, fbytes, err := sumFile(path)
	if err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	meta := checkpointMeta{
		Identity: e.opts.SearchIdentity(), Model: e.modelID(),
		Levels: c.n, LevelsBytes: c.bytes, LevelsSum: sumString(c.sum),
		Frontier: name, FrontierN: e.front.n, FrontierBytes: fbytes, FrontierSum: fsum,
		Generated: e.generated.Load(), Distinct: e.distinct.Load(), QueuePeak: e.queuePeak.Load(),
		Initial: e.initial.Load(), InitGen: e.initGen.Load(), Coverage: e.coverage, ReachDepth: e.reachDepth,
		ShardLevels: e.shardLevels,
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	data, err := json.Marshal(metaFile{Format: checkpointFormat, Checksum: sumString(digestOf(raw)), Meta: raw})
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

// sumFile is the checksum and size of a file just written.
func sumFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := xxhash.New()
	n, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20))
	return sumString(h), n, err
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
	left := meta.LevelsBytes
	var keys []uint64
	for d := 0; d < meta.Levels; {
		tag, err := r.ReadByte()
		if err != nil {
			return damaged(e.ckpt.dir, "level %d cannot be read", d)
		}
		n, err := binary.ReadUvarint(r)
		left -= 1 + int64(len(binary.AppendUvarint(nil, n)))
		if err != nil || n > uint64(max(left, 0))/8 {
			return damaged(e.ckpt.dir, "level %d cannot be read", d)
		}
		left -= int64(n) * 8
		words := make([]uint64, n)
		var tmp [8]byte
		for i := range words {
			if _, err := io.ReadFull(r, tmp[:]); err != nil {
				return damaged(e.ckpt.dir, "level %d cannot be read", d)
			}
			words[i] = binary.LittleEndian.Uint64(tmp[:])
		}
		switch tag {
		case chunkFps:
			if err := e.addSeen(ctx, [][]uint64{words}); err != nil {
				return err
			}
		case chunkKeys:
			keys = append(keys, words...)
		case chunkEnd:
			if err := e.trace.add([][]uint64{keys}, e.nw); err != nil {
				return err
			}
			keys = nil
			d++
			if err := e.checkBudget(ctx); err != nil {
				return err
			}
		default:
			return damaged(e.ckpt.dir, "level %d cannot be read", d)
		}
	}
	if _, err := f.Seek(meta.LevelsBytes, io.SeekStart); err != nil {
		return err
	}
	if err := e.resumeFrontier(ctx, meta); err != nil {
		return err
	}
	e.depth = meta.Levels - 1
	if e.grade != nil {
		e.grade0 = e.keptInitGrade()
	}
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
	if e.opts.OnResume != nil {
		e.opts.OnResume(e.depth, meta.Distinct)
	}
	return e.checkBudget(ctx)
}

// resumeFrontier installs the checkpoint's frontier: in memory, or, when
// it would take much of the budget, as the run's frontier file (the run
// then goes to disk, as it would have when it grew that large).
func (e *engine[S, A]) resumeFrontier(ctx context.Context, meta *checkpointMeta) error {
	qf, err := os.Open(filepath.Join(e.ckpt.dir, meta.Frontier))
	if err != nil {
		return fmt.Errorf("explore: checkpoint: %w", err)
	}
	defer qf.Close()
	if e.opts.MemBudget > 0 && meta.FrontierBytes > e.share()/4 {
		if err := e.toDisk(ctx, true); err != nil {
			return err
		}
		f, err := e.dir.create("queue")
		if err != nil {
			return err
		}
		e.front = frontier{n: meta.FrontierN, file: f}
		if _, err := io.Copy(f, qf); err != nil {
			return fmt.Errorf("explore: checkpoint frontier: %w", err)
		}
		return nil
	}
	qr := bufio.NewReaderSize(qf, 1<<20)
	var bs []*batch
	for i := uint64(0); i < meta.FrontierN; i++ {
		if i%(8*unitSize) == 0 {
			bs = append(bs, e.pool.get())
		}
		if err := readState(qr, bs[len(bs)-1]); err != nil {
			e.release(bs)
			return damaged(e.ckpt.dir, "its frontier cannot be read: %v", err)
		}
	}
	e.front = frontier{n: meta.FrontierN, batches: bs}
	return nil
}

// closeCheckpoint closes the checkpoint's files and, after a finished
// run, removes them.
func (e *engine[S, A]) closeCheckpoint(finished bool) error {
	c := e.ckpt
	if c == nil {
		return nil
	}
	e.ckpt = nil
	defer c.owner.Close() // last: the lock guards the directory until then
	err := c.w.Flush()
	if cerr := c.levels.Close(); err == nil {
		err = cerr
	}
	if !finished {
		return err
	}
	for _, name := range []string{"meta.json", "levels", c.front, ownerFile} {
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
