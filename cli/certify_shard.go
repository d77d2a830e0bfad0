package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cutcheck/cutcheck/certify"
)

// certifyPartDir is where the parts of one bundle's split verification
// go under --shard-dir: named by the bundle's digest, so that parts of
// another recording never mix with them.
func certifyPartDir(shardDir, bundle string) string {
	return filepath.Join(shardDir, "certify-"+bundle[:16])
}

func partFileName(sp certify.Split, ext string) string {
	return fmt.Sprintf("part-%d-of-%d.%s", sp.Index, sp.Count, ext)
}

// partEnvelope is a part on disk: the part, the build that made it, and a
// checksum of both, so that a file cut short or edited is refused.
type partEnvelope struct {
	Format   string          `json:"format"`
	Version  string          `json:"version"`
	Checksum string          `json:"checksum"` // of the part's compact JSON
	Part     json.RawMessage `json:"part"`
}

// runCertifyPart verifies one part of a split verification of in and
// writes it under dir: its three streams, then the part itself, each to a
// temporary name renamed into place. Exit codes: 0 when the part met no
// failure, 1 (Reject) or 5 (Unsupported) when it did (the merged verdict
// cannot be Accept), its result written either way.
func runCertifyPart(in io.Reader, opt certify.Options, sp certify.Split, dir string, assumes []string, asJSON bool, stdout, stderr io.Writer) int {
	fail := func(err error) int { return certifyFailed(stderr, fmt.Sprintf("part %v: ", sp), err) }
	var tmps [3]*os.File
	defer func() {
		for _, f := range tmps {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}()
	var w [3]io.Writer
	for i := range tmps {
		f, err := os.CreateTemp(dir, fmt.Sprintf(".part%s%d-*", tmpMark, os.Getpid())) // clean's pattern
		if err != nil {
			return fail(err)
		}
		tmps[i], w[i] = f, f
	}
	part, err := certify.VerifyPart(in, opt, sp, w)
	if errors.Is(err, certify.ErrRequire) {
		return usageErr(stderr, "certify", "--require-scope: %s", strings.TrimPrefix(err.Error(), certify.ErrRequire.Error()+": "))
	}
	if err != nil {
		return fail(err)
	}
	if part.Cut != nil {
		part.Assumes = append(part.Assumes, assumes...) // the converter's
	}
	raw, err := json.Marshal(part)
	if err != nil {
		return fail(err)
	}
	env, err := json.MarshalIndent(partEnvelope{Format: certify.PartFormat, Version: version, Checksum: checksum(raw), Part: raw}, "", "  ")
	if err != nil {
		return fail(err)
	}
	to := certifyPartDir(dir, part.Bundle)
	if err := os.MkdirAll(to, 0o755); err != nil {
		return fail(err)
	}
	for i, f := range tmps {
		if err := f.Close(); err != nil {
			return fail(err)
		}
		if err := os.Rename(f.Name(), filepath.Join(to, partFileName(sp, certify.PartFileNames[i]))); err != nil {
			return fail(err)
		}
		tmps[i] = nil
	}
	out, err := openOut("--shard-dir", filepath.Join(to, partFileName(sp, "json")))
	if err == nil {
		err = out.write(func(w io.Writer) error { _, err := w.Write(append(env, '\n')); return err })
	}
	if err != nil {
		return fail(err)
	}
	code := exitOK
	switch {
	case part.Stop != nil && part.Stop.Failure.Obligation == "Unsupported":
		code = exitUnsupported
	case part.Stop != nil || len(part.Fails) > 0:
		code = exitViolated
	}
	if asJSON {
		// what the lines below say, for a script: the part file holds the rest
		b, err := json.MarshalIndent(struct {
			Part     string          `json:"part"`
			Bundle   string          `json:"bundle_sha256"`
			Lines    int64           `json:"lines"`
			Keys     int             `json:"keys"`
			Stop     *certify.Placed `json:"stop,omitempty"`
			Failures int             `json:"failures"`
			File     string          `json:"file"`
			Merge    string          `json:"merge"`
		}{sp.String(), part.Bundle, part.Stats.Lines, part.Stats.ScopeKeys, part.Stop, len(part.Fails), out.path, to}, "", "  ")
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return code
	}
	fmt.Fprintf(stdout, "part %v of bundle %.16s: %d lines, %d keys of its own\n", sp, part.Bundle, part.Stats.Lines, part.Stats.ScopeKeys)
	switch {
	case part.Stop != nil:
		fmt.Fprintf(stdout, "the verification stops at line %d: %s\n", part.Stop.At.Line, part.Stop.Failure)
	case len(part.Fails) > 0:
		fmt.Fprintf(stdout, "failures among its keys: %d obligations (the merge names the first)\n", len(part.Fails))
	}
	fmt.Fprintf(stdout, "part result: %s (combine all %d with '%s merge %s')\n", out.path, sp.Count, progName, to)
	return code
}

// partFiles finds the parts in dir, or in its one subdirectory holding
// some (a --shard-dir).
func partFiles(dir string) ([]string, error) {
	names, _ := filepath.Glob(filepath.Join(dir, "part-*-of-*.json"))
	if len(names) > 0 {
		return names, nil
	}
	subs, _ := filepath.Glob(filepath.Join(dir, "*", "part-*-of-*.json"))
	dirs := map[string]bool{}
	for _, n := range subs {
		dirs[filepath.Dir(n)] = true
	}
	if len(dirs) > 1 {
		var list []string
		for d := range dirs {
			list = append(list, filepath.Base(d))
		}
		sort.Strings(list)
		return nil, fmt.Errorf("%s holds the parts of %d bundles (%s): merge one of its directories", dir, len(dirs), strings.Join(list, ", "))
	}
	return subs, nil
}

// readPart reads one part, refusing a damaged one or one of another build.
func readPart(name string) (*certify.Part, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var env partEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%s: not a part of a split verification: %v", name, err)
	}
	if env.Format != certify.PartFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", name, env.Format, certify.PartFormat)
	}
	var compact bytes.Buffer
	if env.Part == nil || json.Compact(&compact, env.Part) != nil || checksum(compact.Bytes()) != env.Checksum {
		return nil, fmt.Errorf("%s: damaged or edited: its part does not match its checksum", name)
	}
	if env.Version != version {
		return nil, fmt.Errorf("%s: written by %s %s, this is %s", name, progName, env.Version, version)
	}
	var p certify.Part
	dec := json.NewDecoder(&compact)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: not a part: %v", name, err)
	}
	return &p, nil
}

// mergeParts is `merge DIR` on the parts of a split verification: the
// whole verification's answer, and certify's exit code.
func mergeParts(names []string, o *mergeOpts, stdout, stderr io.Writer) int {
	sort.Strings(names)
	var parts []*certify.Part
	var files [][3]io.Reader
	for _, name := range names {
		p, err := readPart(name)
		if err != nil {
			fmt.Fprintf(stderr, "%s merge: %v\n", progName, err)
			return exitUsage
		}
		var fs [3]io.Reader
		for i, ext := range certify.PartFileNames {
			f, err := os.Open(filepath.Join(filepath.Dir(name), partFileName(p.Split, ext)))
			if err != nil {
				fmt.Fprintf(stderr, "%s merge: part %v: %v\n", progName, p.Split, pathErr(err))
				return exitUsage
			}
			defer f.Close()
			fs[i] = f
		}
		parts, files = append(parts, p), append(files, fs)
	}
	res, err := certify.MergeParts(parts, files)
	if err != nil {
		fmt.Fprintf(stderr, "%s merge: %v\n", progName, err)
		return exitUsage
	}
	head := stdout
	if o.stdoutJSON {
		head = stderr // stdout is the result's JSON alone, as certify --json's
	}
	fmt.Fprintf(head, "%s %s: merged %d parts of the verification of bundle %.16s\n", progName, version, len(parts), parts[0].Bundle)
	if o.jsonOut != "" {
		out, err := openOut("--json", o.jsonOut)
		if err == nil {
			err = out.write(func(w io.Writer) error {
				b, err := json.MarshalIndent(res, "", "  ")
				if err == nil {
					_, err = w.Write(append(b, '\n'))
				}
				return err
			})
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s merge: %v\n", progName, err)
			return exitError
		}
	}
	return report(res, o.stdoutJSON, stdout, stderr)
}

// mergeBundleParts is certify --shard merge/N: the n parts of the bundle
// in, found under shardDir by its digest, merged; nothing else there is
// read.
func mergeBundleParts(in io.Reader, shardDir string, n int, asJSON bool, stdout, stderr io.Writer) int {
	h := sha256.New()
	if _, err := io.Copy(h, in); err != nil {
		fmt.Fprintf(stderr, "%s certify: %v\n", progName, err)
		return exitError
	}
	dir := certifyPartDir(shardDir, hex.EncodeToString(h.Sum(nil)))
	names, _ := filepath.Glob(filepath.Join(dir, "part-*-of-*.json"))
	if len(names) == 0 {
		fmt.Fprintf(stderr, "%s certify: %s holds no parts of this bundle's verification\n", progName, dir)
		return exitUsage
	}
	want := make(map[string]bool)
	for i := range n {
		want[filepath.Join(dir, partFileName(certify.Split{Index: i, Count: n}, "json"))] = true
	}
	for _, name := range names {
		if !want[name] {
			fmt.Fprintf(stderr, "%s certify: %s is not a part of a split into %d\n", progName, name, n)
			return exitUsage
		}
	}
	return mergeParts(names, &mergeOpts{stdoutJSON: asJSON}, stdout, stderr)
}
