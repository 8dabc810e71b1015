package storage

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// WalkFiles calls fn for every file below root, depth first in name order,
// skipping directories whose name starts with "+tmp" (temp files are never
// committed data). A missing root is an empty tree.
func WalkFiles(fsys FS, root string, fn func(name string) error) error {
	infos, err := fsys.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, fi := range infos {
		name := path.Join(root, fi.Name())
		switch {
		case fi.IsDir() && strings.HasPrefix(fi.Name(), "+tmp"):
		case fi.IsDir():
			if err := WalkFiles(fsys, name, fn); err != nil {
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
