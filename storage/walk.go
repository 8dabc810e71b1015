package storage

import (
	"context"
	"errors"
	"io/fs"
	"path"
)

// WalkFiles calls fn for every file below root, depth first in name order,
// skipping the directories whose name skipDir accepts (nil: none). A
// missing root is an empty tree.
func WalkFiles(ctx context.Context, fsys FS, root string, skipDir func(name string) bool, fn func(name string) error) error {
	infos, err := fsys.ReadDir(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, fi := range infos {
		name := path.Join(root, fi.Name())
		switch {
		case fi.IsDir() && skipDir != nil && skipDir(fi.Name()):
		case fi.IsDir():
			if err := WalkFiles(ctx, fsys, name, skipDir, fn); err != nil {
				return err
			}
		default:
			if err := fn(name); err != nil {
				return err
			}
		}
	}
	return nil
}
