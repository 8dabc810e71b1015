package compact

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// stagingKey names the staging directories of one encoded directory, so a
// compaction can tell its directory's dead stagings from other ones.
func stagingKey(encoded string) string {
	sum := sha256.Sum256([]byte(encoded))
	return hex.EncodeToString(sum[:8])
}

// newStaging is a fresh staging directory for encoded.
func (c *Compactor) newStaging(encoded string) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return path.Join(c.o.Topic.CompactionStagingRoot(), stagingKey(encoded)+"-"+hex.EncodeToString(r[:]))
}

// output is one file a run was merged into.
type output struct {
	partition  int32
	start, end int64
	records    int64
	temp       string
}

// build writes the generation of plan into a new staging directory: each
// run merged, each lone file copied, every file closed and under its final
// name. Nothing outside the staging directory changes.
func (c *Compactor) build(ctx context.Context, plan Plan) (staging string, outputs int, err error) {
	staging = c.newStaging(plan.Dir)
	for _, in := range plan.Copies {
		if err := c.copyFile(ctx, in.Path, path.Join(staging, path.Base(in.Path))); err != nil {
			return staging, outputs, err
		}
		outputs++
	}
	for i, run := range plan.Runs {
		outs, err := c.mergeRun(ctx, run, path.Join(staging, fmt.Sprintf("run-%d", i)))
		if err != nil {
			return staging, outputs, err
		}
		for _, o := range outs {
			final := path.Join(staging, layout.FinalName(c.o.Topic.Name, o.partition, o.start, o.end, c.o.Pad, c.o.Ext))
			if err := c.o.FS.Rename(ctx, o.temp, final); err != nil {
				return staging, outputs, fmt.Errorf("name merged file: %w", err)
			}
			outputs++
		}
	}
	return staging, outputs, nil
}

// copyFile copies src to dst (a new file), closed.
func (c *Compactor) copyFile(ctx context.Context, src, dst string) error {
	rc, err := c.o.FS.Open(ctx, src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer rc.Close()
	f, err := c.o.FS.Create(ctx, dst)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		_ = f.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// mergeRun merges the run's inputs, in order, each read once, into files
// named prefix-<n>: a new file starts where an input's schema (or Avro
// codec) differs from the open file's.
func (c *Compactor) mergeRun(ctx context.Context, run Run, prefix string) ([]output, error) {
	if strings.EqualFold(c.o.Ext, ".parquet") {
		return c.mergeParquet(ctx, run, prefix)
	}
	return c.mergeAvro(ctx, run, prefix)
}

// openOutput is an output file being written.
type openOutput struct {
	output
	file storage.File
}

func (c *Compactor) startOutput(ctx context.Context, run Run, prefix string, n int, first Input) (*openOutput, error) {
	temp := fmt.Sprintf("%s-%d", prefix, n)
	f, err := c.o.FS.Create(ctx, temp)
	if err != nil {
		return nil, fmt.Errorf("create merged file: %w", err)
	}
	return &openOutput{output: output{partition: run.Partition, start: first.Range.Start, end: first.Range.End, temp: temp}, file: f}, nil
}

// outputs are the merged files of one run: the one being written and
// those done. Both formats start a new file at the first input and where
// the next input cannot join the open one (another schema or codec).
type outputs struct {
	c      *Compactor
	run    Run
	prefix string
	done   []output
	cur    *openOutput
}

// start opens the next output file, beginning at in.
func (o *outputs) start(ctx context.Context, in Input) error {
	cur, err := o.c.startOutput(ctx, o.run, o.prefix, len(o.done), in)
	o.cur = cur
	return err
}

// finish ends the open output, if any: end completes the format's
// writing and says how many records the file holds.
func (o *outputs) finish(end func() (int64, error)) error {
	if o.cur == nil {
		return nil
	}
	records, err := end()
	if err != nil {
		_ = o.cur.file.Close()
		return err
	}
	if err := o.cur.file.Close(); err != nil {
		return fmt.Errorf("close merged file: %w", err)
	}
	o.cur.records = records
	o.done = append(o.done, o.cur.output)
	o.cur = nil
	return nil
}

// abort closes the open output after a failure; the staging directory is
// the caller's to drop.
func (o *outputs) abort() {
	if o.cur != nil {
		_ = o.cur.file.Close()
	}
}

func (c *Compactor) mergeAvro(ctx context.Context, run Run, prefix string) ([]output, error) {
	outs := &outputs{c: c, run: run, prefix: prefix}
	var m *avroMerger
	end := func() (int64, error) {
		err := m.flush()
		return m.records, err
	}
	br := bufio.NewReaderSize(nil, 64<<10) // reused: one buffer for all inputs
	for _, in := range run.Inputs {
		err := func() error {
			rc, err := c.o.FS.Open(ctx, in.Path)
			if err != nil {
				return fmt.Errorf("merge: %w", err)
			}
			defer rc.Close()
			br.Reset(rc)
			h, err := readAvroHeader(br, in.Path)
			if err != nil {
				return err
			}
			if outs.cur != nil && !m.sameHeader(h) {
				if err := outs.finish(end); err != nil {
					return err
				}
			}
			if outs.cur == nil {
				if err := outs.start(ctx, in); err != nil {
					return err
				}
				m = newAvroMerger(outs.cur.file)
			}
			outs.cur.end = in.Range.End
			return m.add(br, h, in.Path)
		}()
		if err != nil {
			outs.abort()
			return nil, err
		}
	}
	err := outs.finish(end)
	return outs.done, err
}

func (c *Compactor) mergeParquet(ctx context.Context, run Run, prefix string) ([]output, error) {
	outs := &outputs{c: c, run: run, prefix: prefix}
	var m *parquetMerger
	end := func() (int64, error) {
		err := m.close()
		return m.records, err
	}
	ctx, cancel := context.WithCancel(ctx)
	read, waitRead := c.readAhead(ctx, run.Inputs)
	decoded, waitDecode := decodeAhead(ctx, run.Inputs, read)
	defer func() { cancel(); waitDecode(); waitRead() }()
	next, complete := 0, false // the input whose rows come next; every input decoded
	for part := range decoded {
		var err error
		switch {
		case part.err != nil:
			err = part.err
		case part.complete:
			complete = true
		case part.shape != nil:
			in := run.Inputs[next]
			next++
			if outs.cur != nil && !m.sameSchema(part.shape) {
				if err = outs.finish(end); err != nil {
					break
				}
			}
			if outs.cur == nil {
				if err = outs.start(ctx, in); err != nil {
					break
				}
				m = newParquetMerger(outs.cur.file, c.o.RowGroupBytes)
			}
			outs.cur.end = in.Range.End
			err = m.begin(part.shape)
		default:
			err = m.write(part.rec, run.Inputs[next-1].Path)
			part.rec.Release()
		}
		if err != nil {
			outs.abort()
			return nil, err
		}
	}
	if !complete { // decoding stopped early, without an error: the context ended
		outs.abort()
		return nil, fmt.Errorf("merge stopped at %s: %w", run.Inputs[max(next-1, 0)].Path, context.Cause(ctx))
	}
	err := outs.finish(end)
	return outs.done, err
}

// readInput is an input read whole, or why it could not be.
type readInput struct {
	data []byte
	err  error
}

// readAhead reads inputs whole, in order, one ahead of the Parquet
// decoding (decodeAhead): while input i is decoded, input i+1 is read, so
// the store's round trips overlap the merge's CPU instead of adding to it
// (measured: docs/benchmarks.md, "Compaction"). The merge thus holds at
// most two inputs' bytes at once (Policy.MaxInputBytes is set for two). It stops
// at the first failure (sent as the next input) or when ctx ends, and
// closes read; wait returns once it has stopped.
func (c *Compactor) readAhead(ctx context.Context, inputs []Input) (read <-chan readInput, wait func()) {
	ch := make(chan readInput) // unbuffered: one input read ahead, no more
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch) // a merge waiting for an input that will not come learns it
		for _, in := range inputs {
			data, err := c.readAll(ctx, in)
			select {
			case ch <- readInput{data: data, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch, func() { <-done }
}

// readAll reads an input whole into a buffer of the size its listing
// gave (io.ReadAll's doubling from 512 bytes would allocate it about
// twice over); a file that is not that size is still read whole.
func (c *Compactor) readAll(ctx context.Context, in Input) ([]byte, error) {
	rc, err := c.o.FS.Open(ctx, in.Path)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, max(in.Bytes, 0)+bytes.MinRead))
	if _, err := buf.ReadFrom(rc); err != nil {
		return nil, fmt.Errorf("read %s: %w", in.Path, err)
	}
	return buf.Bytes(), nil
}
