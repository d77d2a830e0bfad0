package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cutcheck/cutcheck/certify"
)

// exitUnsupported: certify met evidence it cannot interpret (never Accept).
const exitUnsupported = 5

type certifyOpts struct {
	json                 bool
	advance, scope, from string
	table, signal, key   string
	writeBundle, offsets string
	notifications        string
	chunkBounds, maxKey  string
	jsonColumns          string
	redelivery           string
	require              string
	mem, dir             string
	shard, shardDir      string
	progress             time.Duration
}

func certifyFlags() (*pflag.FlagSet, *certifyOpts) {
	o := &certifyOpts{}
	fs := pflag.NewFlagSet("certify", pflag.ContinueOnError)
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	fs.StringVar(&o.advance, "advance", "", "after an Accept, advance the cut by this continuation segment (§11 of 003)")
	fs.StringVar(&o.scope, "scope", "", "restrict the cut to a sub-scope: keys=a,b,c, range=LO..HI (LO inclusive, HI exclusive, either may be empty) or a JSON scope")
	fs.StringVar(&o.from, "from", "", "the input's format: empty for a bundle, debezium for a Debezium-style recording")
	fs.StringVar(&o.table, "table", "", "with --from debezium: the captured table: schema.table (PostgreSQL), db.table (MySQL), or its name if no other schema has one")
	fs.StringVar(&o.signal, "signal-table", "debezium_signal", "with --from debezium: the signalling table")
	fs.StringVar(&o.key, "key", "id", "with --from debezium: the primary-key columns, in key order (a,b)")
	fs.StringVar(&o.offsets, "offsets", "", "with --from debezium: the connector's recorded Kafka Connect offsets (states chunk ends and the maximum key)")
	fs.StringVar(&o.notifications, "notifications", "", "with --from debezium: the connector's recorded incremental-snapshot notifications (state chunk ends, the maximum key, completion)")
	fs.StringVar(&o.chunkBounds, "chunk-bounds", "", "with --from debezium: a JSON array of the last key each closed window's chunk read (null: read nothing)")
	fs.StringVar(&o.maxKey, "max-key", "", "with --from debezium: the snapshot's maximum key (JSON; an array for several key columns)")
	fs.StringVar(&o.jsonColumns, "json-columns", "", "with --from debezium: columns compared as parsed JSON (a,b), besides those the events' schema types io.debezium.data.Json")
	fs.StringVar(&o.redelivery, "redelivery", "drop", "with --from debezium: a redelivered event (a position and content already delivered) is dropped (drop: the Accept rests on a consumer that applies each position once) or applied again where it came (apply)")
	fs.StringVar(&o.require, "require-scope", "", "exit 1 if an Accept certifies less than this scope (all, or as --scope), naming the keys it leaves out")
	fs.StringVar(&o.mem, "mem", "", "memory budget, e.g. 512MiB or 4GiB; past it per-key states and the emitted stream's backlog spill to --dir (default: 3/4 of the machine's memory)")
	fs.StringVar(&o.dir, "dir", "", "directory for the spill files and, with --from debezium, the converter's spool and bundle (default: the system's temporary directory; removed at the end)")
	fs.StringVar(&o.writeBundle, "write-bundle", "", "with --from debezium: also write the converted bundle to this file")
	fs.StringVar(&o.shard, "shard", "", "verify one part of an N-way split: i/N (0 ≤ i < N), or auto/N to take i from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm); '"+progName+" merge' combines the N parts into the whole verification's answer")
	fs.DurationVar(&o.progress, "progress", 10*time.Second, "interval between progress lines on stderr while converting and verifying (0 = none)")
	fs.StringVar(&o.shardDir, "shard-dir", ".", "directory under which a part is written, to certify-BUNDLE/part-I-of-N.*, BUNDLE naming the bundle by its SHA-256")
	return fs, o
}

// runCertify answers whether a recorded run is a certified virtual cut.
// Exit codes: 0 Accept, 1 Reject (or an Accept narrower than
// --require-scope), 5 Unsupported, 2 usage, 3 I/O.
func runCertify(args []string, stdout, stderr io.Writer) int {
	fs, o := certifyFlags()
	if code := parse(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if fs.NArg() != 1 && (o.from != "debezium" || fs.NArg() == 0) {
		return usageErr(stderr, "certify", "takes one bundle file (or - for standard input; with --from debezium one file a topic), got %d arguments", fs.NArg())
	}
	var opt certify.Options
	if o.scope != "" {
		spec, err := scopeFlag(o.scope)
		if err != nil {
			return usageErr(stderr, "certify", "--scope: %v", err)
		}
		opt.Restrict = spec
	}
	switch o.require {
	case "":
	case "all":
		opt.Require = &certify.ScopeSpec{Ranges: []certify.RangeSpec{{}}}
	default:
		spec, err := scopeFlag(o.require)
		if err != nil {
			return usageErr(stderr, "certify", "--require-scope: all, or %v", err)
		}
		opt.Require = spec
	}
	if o.progress < 0 || o.progress > 0 && o.progress < minProgress {
		return usageErr(stderr, "certify", "--progress must be 0 (no progress lines) or at least %v, got %v", minProgress, o.progress)
	}
	start := time.Now()
	// Ctrl-C stops the run at its next batch, its files removed (exit 4);
	// a second one ends the process at once (a pipe that does not end).
	ctx, stopSignals := interrupted()
	defer stopSignals()
	go func() { <-ctx.Done(); stopSignals() }()
	opt.Stop = ctx.Done()
	opt.Progress = o.progress
	// a stage's rate is of its own lines since its first line here
	stage, since, from := "", start, int64(0)
	opt.OnProgress = func(now string, s certify.Stats) {
		rate := ""
		if now != stage {
			stage, since, from = now, time.Now(), s.Lines
		} else {
			rate = "  " + count(uint64(float64(s.Lines-from)/max(time.Since(since).Seconds(), 1e-3))) + " lines/s"
		}
		events := "  " + count(uint64(s.Events)) + " events"
		switch stage {
		case "partitioning", "distributing":
			events = "" // the lines are only written out
		case "merging": // the parts' streams, no lines
			fmt.Fprintf(stderr, "progress: %s  %s\n", stage, time.Since(start).Round(time.Second))
			return
		}
		fmt.Fprintf(stderr, "progress: %s: %s lines%s%s  %s\n", stage, count(uint64(s.Lines)), events, rate, time.Since(start).Round(time.Second))
	}
	opt.Mem, opt.Dir = defaultBudget(), o.dir
	if o.mem != "" {
		n, err := parseBytes(o.mem)
		if err != nil {
			return usageErr(stderr, "certify", "--mem: %v", err)
		}
		if n < certify.MinMem {
			return usageErr(stderr, "certify", "--mem: %s is below 64MiB, the least budget a verification can keep to", o.mem)
		}
		opt.Mem = n
	}
	var split *certify.Split
	mergeN := 0
	if o.shard != "" {
		spec := o.shard
		if n, ok := strings.CutPrefix(spec, "merge/"); ok {
			spec = "0/" + n
		}
		sh, err := parseShard(spec, os.Getenv)
		if err == nil && (o.scope != "" || o.advance != "") {
			err = errors.New("--shard verifies the whole scope of one bundle: not with --scope or --advance (restrict or advance the merged answer's bundle instead)")
		}
		if err == nil && spec != o.shard {
			mergeN = sh.Count
		} else if err == nil {
			err = (&shardFlags{dir: o.shardDir}).writable()
		}
		if err != nil {
			return usageErr(stderr, "certify", "%v", err)
		}
		split = &certify.Split{Index: sh.Index, Count: sh.Count}
	}
	removeOrphans(o.dir, stderr)
	in, closeIn, err := openInput(fs.Arg(0))
	if err != nil {
		return usageErr(stderr, "certify", "%s: %v", fs.Arg(0), err) // a bad input: nothing has run
	}
	defer closeIn()
	var notes []string
	var conv certify.Conversion
	switch o.from {
	case "":
	case "debezium":
		dopt, code := o.debezium(stderr)
		if code >= 0 {
			return code
		}
		dopt.Mem, dopt.Stop = opt.Mem, opt.Stop
		dopt.Progress = o.progress
		dopt.OnProgress = func(stage string, n int64) {
			what := map[string]string{"reading": "records read", "placing": "events placed"}[stage]
			fmt.Fprintf(stderr, "progress: converting: %s %s  %s\n", count(uint64(n)), what, time.Since(start).Round(time.Second))
		}
		for _, r := range []io.Reader{dopt.Offsets, dopt.Notifications} {
			if r != nil {
				defer r.(io.Closer).Close()
			}
		}
		ins := []certify.DebeziumInput{{Name: fs.Arg(0), R: in}}
		for _, name := range fs.Args()[1:] {
			r, closeR, err := openInput(name)
			if err != nil {
				return usageErr(stderr, "certify", "%s: %v", name, err)
			}
			defer closeR()
			ins = append(ins, certify.DebeziumInput{Name: name, R: r})
		}
		// the converted bundle goes to a file beside the spill, not memory
		b, remove, err := certify.SpoolFile(o.dir)
		if err != nil {
			fmt.Fprintf(stderr, "%s certify: %v\n", progName, err)
			return exitError
		}
		defer remove()
		var f *certify.Failure
		conv, f, err = certify.FromDebeziumFiles(ins, b, dopt)
		notes = conv.Notes
		if err == nil && f == nil {
			_, err = b.Seek(0, io.SeekStart)
		}
		if err != nil {
			return certifyFailed(stderr, "", err)
		}
		if f != nil {
			return report(&certify.Result{Verdict: verdictOf(f), Failure: f}, o.json, stdout, stderr)
		}
		if o.writeBundle != "" {
			out, err := openOut("--write-bundle", o.writeBundle)
			if err == nil {
				err = out.write(func(w io.Writer) error { _, err := io.Copy(w, b); return err })
			}
			if err == nil {
				_, err = b.Seek(0, io.SeekStart)
			}
			if err != nil {
				fmt.Fprintf(stderr, "%s certify: %v\n", progName, err)
				return exitError
			}
		}
		in = b
	default:
		return usageErr(stderr, "certify", "--from %q: the formats are a bundle (default) and debezium", o.from)
	}
	if o.advance != "" {
		seg, err := os.Open(o.advance)
		if err != nil {
			fmt.Fprintf(stderr, "%s certify: %v\n", progName, err)
			return exitError
		}
		defer seg.Close()
		opt.Segment = seg
	}
	if mergeN > 0 {
		stopSignals() // the merge writes nothing: Ctrl-C ends it at once
		return mergeBundleParts(in, o.shardDir, mergeN, o.json, stdout, stderr)
	}
	if split != nil {
		code := runCertifyPart(in, opt, *split, o.shardDir, conv.Assumes, o.json, stdout, stderr)
		for _, n := range notes {
			fmt.Fprintf(stderr, "%s certify: %s\n", progName, n)
		}
		return code
	}
	res, err := certify.Verify(in, opt)
	if errors.Is(err, certify.ErrRequire) {
		return usageErr(stderr, "certify", "--require-scope: %s", strings.TrimPrefix(err.Error(), certify.ErrRequire.Error()+": "))
	}
	if err != nil {
		return certifyFailed(stderr, "", err)
	}
	if res.Verdict == certify.Accept {
		res.Assumes = append(res.Assumes, conv.Assumes...)
	}
	code := report(res, o.json, stdout, stderr)
	for _, n := range notes { // what the converter left out of the scope, and why
		fmt.Fprintf(stderr, "%s certify: %s\n", progName, n)
	}
	return code
}

// certifyFailed reports a conversion's or verification's error (of part
// if not ""): 4 for an interruption, else 3.
func certifyFailed(stderr io.Writer, part string, err error) int {
	if errors.Is(err, certify.ErrStopped) {
		fmt.Fprintf(stderr, "%s certify: %sinterrupted: nothing certified\n", progName, part)
		return exitIncomplete
	}
	fmt.Fprintf(stderr, "%s certify: %s%v\n", progName, part, err)
	return exitError
}

// debezium reads the converter's flags; code >= 0 is an exit.
func (o *certifyOpts) debezium(stderr io.Writer) (certify.DebeziumOptions, int) {
	opt := certify.DebeziumOptions{Table: o.table, SignalTable: o.signal, Redelivery: o.redelivery, Dir: o.dir}
	if o.redelivery != "drop" && o.redelivery != "apply" {
		return opt, usageErr(stderr, "certify", "--redelivery %q: drop or apply", o.redelivery)
	}
	if o.jsonColumns != "" {
		opt.JSONColumns = strings.Split(o.jsonColumns, ",")
	}
	for _, col := range strings.Split(o.key, ",") {
		if col = strings.TrimSpace(col); col == "" {
			return opt, usageErr(stderr, "certify", "--key %q: an empty column name", o.key)
		}
		opt.Key = append(opt.Key, col)
	}
	if o.chunkBounds != "" {
		if err := json.Unmarshal([]byte(o.chunkBounds), &opt.ChunkBounds); err != nil {
			return opt, usageErr(stderr, "certify", "--chunk-bounds: a JSON array of keys: %v", err)
		}
	}
	if o.maxKey != "" {
		if !json.Valid([]byte(o.maxKey)) {
			return opt, usageErr(stderr, "certify", "--max-key %q is not JSON", o.maxKey)
		}
		opt.MaxKey = json.RawMessage(o.maxKey)
	}
	for _, in := range []struct {
		name string
		to   *io.Reader
	}{{o.offsets, &opt.Offsets}, {o.notifications, &opt.Notifications}} {
		if in.name == "" {
			continue
		}
		f, err := os.Open(in.name)
		if err != nil {
			fmt.Fprintf(stderr, "%s certify: %v\n", progName, err)
			return opt, exitError
		}
		*in.to = f
	}
	return opt, -1
}

func verdictOf(f *certify.Failure) certify.Verdict {
	if f.Obligation == "Unsupported" {
		return certify.Unsupported
	}
	return certify.Reject
}

func report(res *certify.Result, asJSON bool, stdout, stderr io.Writer) int {
	if asJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "%s certify: %v\n", progName, err)
			return exitError
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprintln(stdout, res.Line())
	}
	switch res.Verdict {
	case certify.Accept:
		if res.Cut != nil && res.Cut.Omitted != "" {
			return exitViolated // an Accept narrower than --require-scope
		}
		return exitOK
	case certify.Unsupported:
		return exitUnsupported
	}
	return exitViolated
}

func openInput(name string) (io.Reader, func(), error) {
	if name == "-" {
		return os.Stdin, func() {}, nil
	}
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return nil, nil, errors.New("is a directory; give a bundle file")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, pathErr(err)
	}
	return f, func() { f.Close() }, nil
}

// scopeFlag reads --scope: keys=a,b,c; range=LO..HI; or a JSON scope.
func scopeFlag(s string) (*certify.ScopeSpec, error) {
	quote := func(x string) json.RawMessage { b, _ := json.Marshal(x); return b }
	switch {
	case strings.HasPrefix(s, "keys="):
		spec := &certify.ScopeSpec{Keys: []json.RawMessage{}}
		for _, k := range strings.Split(strings.TrimPrefix(s, "keys="), ",") {
			spec.Keys = append(spec.Keys, quote(k))
		}
		return spec, nil
	case strings.HasPrefix(s, "range="):
		lo, hi, ok := strings.Cut(strings.TrimPrefix(s, "range="), "..")
		if !ok {
			return nil, fmt.Errorf("a range is LO..HI")
		}
		var r certify.RangeSpec
		if lo != "" {
			r.Ge = quote(lo)
		}
		if hi != "" {
			r.Lt = quote(hi)
		}
		return &certify.ScopeSpec{Ranges: []certify.RangeSpec{r}}, nil
	}
	var spec certify.ScopeSpec
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("not keys=…, range=… or a JSON scope: %v", err)
	}
	return &spec, nil
}
