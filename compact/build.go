package compact

import (
	"bufio"
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

func (c *Compactor) mergeAvro(ctx context.Context, run Run, prefix string) ([]output, error) {
	var done []output
	var cur *openOutput
	var m *avroMerger
	br := bufio.NewReaderSize(nil, 64<<10) // reused: one buffer for all inputs
	finish := func() error {
		if cur == nil {
			return nil
		}
		if err := m.flush(); err != nil {
			_ = cur.file.Close()
			return err
		}
		if err := cur.file.Close(); err != nil {
			return fmt.Errorf("close merged file: %w", err)
		}
		cur.records = m.records
		done = append(done, cur.output)
		cur = nil
		return nil
	}
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
			if cur != nil && !m.sameHeader(h) {
				if err := finish(); err != nil {
					return err
				}
			}
			if cur == nil {
				if cur, err = c.startOutput(ctx, run, prefix, len(done), in); err != nil {
					return err
				}
				m = newAvroMerger(cur.file)
			}
			cur.end = in.Range.End
			return m.add(br, h, in.Path)
		}()
		if err != nil {
			if cur != nil {
				_ = cur.file.Close()
			}
			return nil, err
		}
	}
	return done, finish()
}

func (c *Compactor) mergeParquet(ctx context.Context, run Run, prefix string) ([]output, error) {
	var done []output
	var cur *openOutput
	var m *parquetMerger
	finish := func() error {
		if cur == nil {
			return nil
		}
		if err := m.close(); err != nil {
			_ = cur.file.Close()
			return err
		}
		if err := cur.file.Close(); err != nil {
			return fmt.Errorf("close merged file: %w", err)
		}
		cur.records = m.records
		done = append(done, cur.output)
		cur = nil
		return nil
	}
	for _, in := range run.Inputs {
		err := func() error {
			data, err := c.readAll(ctx, in.Path)
			if err != nil {
				return err
			}
			pin, err := openParquet(data, in.Path)
			if err != nil {
				return err
			}
			defer pin.pf.Close()
			if cur != nil && !m.sameSchema(pin) {
				if err := finish(); err != nil {
					return err
				}
			}
			if cur == nil {
				if cur, err = c.startOutput(ctx, run, prefix, len(done), in); err != nil {
					return err
				}
				m = newParquetMerger(cur.file, c.o.RowGroupBytes)
			}
			cur.end = in.Range.End
			return m.add(ctx, pin, in.Path)
		}()
		if err != nil {
			if cur != nil {
				_ = cur.file.Close()
			}
			return nil, err
		}
	}
	return done, finish()
}

func (c *Compactor) readAll(ctx context.Context, name string) ([]byte, error) {
	rc, err := c.o.FS.Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}
