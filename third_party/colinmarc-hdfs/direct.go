package hdfs

// Added by hdfs-sink (FORK.md, docs/decisions.md D46): calls that go to the
// NameNode in one round trip. Client's os-like methods (Open, ReadDir,
// Rename, Remove, RemoveAll) each ask getFileInfo first, which doubles the
// round trips of a caller that issues many small calls. Each *Direct method
// sends only the call itself and reads what the stat would have told from
// its answer.

import (
	"errors"
	"math"
	"os"
	"path"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"google.golang.org/protobuf/proto"
)

// errNotDir is ReadDirDirect's error for a name that is a file.
var errNotDir = errors.New("the file is not a directory")

// RenameDirect is Rename without the getFileInfo of newpath: rename2 with
// OverwriteDest, so an existing file or empty directory at newpath is
// replaced and a non-empty directory is an error, as with Rename.
func (c *Client) RenameDirect(oldpath, newpath string) error {
	req := &hdfs.Rename2RequestProto{
		Src:           proto.String(oldpath),
		Dst:           proto.String(newpath),
		OverwriteDest: proto.Bool(true),
	}
	resp := &hdfs.Rename2ResponseProto{}
	if err := c.namenode.Execute("rename2", req, resp); err != nil {
		return &os.PathError{Op: "rename", Path: oldpath, Err: interpretException(err)}
	}
	return nil
}

// RemoveDirect deletes name (recursively if asked) without the getFileInfo
// first. A name that does not exist is an error matching os.ErrNotExist:
// the NameNode answers false for it.
func (c *Client) RemoveDirect(name string, recursive bool) error {
	req := &hdfs.DeleteRequestProto{
		Src:       proto.String(name),
		Recursive: proto.Bool(recursive),
	}
	resp := &hdfs.DeleteResponseProto{}
	if err := c.namenode.Execute("delete", req, resp); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: interpretException(err)}
	}
	if resp.Result == nil {
		return &os.PathError{Op: "remove", Path: name, Err: errors.New("unexpected empty response")}
	}
	if !resp.GetResult() {
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	}
	return nil
}

// ReadDirDirect is ReadDir without the getFileInfo first: getListing pages
// only, sorted by name as the NameNode returns them. A missing directory
// is an error matching os.ErrNotExist. For a file the NameNode lists the
// file itself under an empty name, which is the "not a directory" error
// ReadDir gives.
func (c *Client) ReadDirDirect(dirname string) ([]os.FileInfo, error) {
	var res []os.FileInfo
	after := []byte{} // startAfter is required: empty, not nil, for the first page
	for {
		list, remaining, err := c.listingPage(dirname, after)
		if err != nil {
			return nil, &os.PathError{Op: "readdir", Path: dirname, Err: err}
		}
		for _, status := range list {
			if len(status.GetPath()) == 0 {
				return nil, &os.PathError{Op: "readdir", Path: dirname, Err: errNotDir}
			}
			res = append(res, newFileInfo(status, ""))
		}
		if remaining == 0 || len(list) == 0 {
			return res, nil
		}
		after = list[len(list)-1].GetPath()
	}
}

// listingPage is one getListing call: the entries after the name after.
func (c *Client) listingPage(dirname string, after []byte) ([]*hdfs.HdfsFileStatusProto, uint32, error) {
	req := &hdfs.GetListingRequestProto{
		Src:          proto.String(dirname),
		StartAfter:   after,
		NeedLocation: proto.Bool(false),
	}
	resp := &hdfs.GetListingResponseProto{}
	if err := c.namenode.Execute("getListing", req, resp); err != nil {
		return nil, 0, interpretException(err)
	}
	if resp.GetDirList() == nil {
		return nil, 0, os.ErrNotExist
	}
	dl := resp.GetDirList()
	return dl.GetPartialListing(), dl.GetRemainingEntries(), nil
}

// OpenDirect opens a file for reading without the getFileInfo first: it
// asks getBlockLocations for the whole file, whose answer carries the
// length the reader needs, and the reader's first Read uses those blocks
// instead of asking again. A missing name, or a directory, is an error
// matching os.ErrNotExist (the NameNode's FileNotFoundException for both).
//
// The FileReader's Stat describes only the length and the kind (a file):
// owner, times and permissions are not asked for.
func (c *Client) OpenDirect(name string) (*FileReader, error) {
	req := &hdfs.GetBlockLocationsRequestProto{
		Src:    proto.String(name),
		Offset: proto.Uint64(0),
		Length: proto.Uint64(math.MaxInt64),
	}
	resp := &hdfs.GetBlockLocationsResponseProto{}
	if err := c.namenode.Execute("getBlockLocations", req, resp); err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: interpretException(err)}
	}
	located := resp.GetLocations()
	if located == nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	status := &hdfs.HdfsFileStatusProto{
		FileType: hdfs.HdfsFileStatusProto_IS_FILE.Enum(),
		Length:   proto.Uint64(located.GetFileLength()),
	}
	return &FileReader{
		client: c,
		name:   name,
		info:   newFileInfo(status, name),
		blocks: located.GetBlocks(),
	}, nil
}

// MkdirAllDirect is MkdirAll without the getFileInfo first: mkdirs with
// CreateParent, which succeeds when dirname is already a directory and
// fails (os.ErrExist) when it or a parent is a file.
func (c *Client) MkdirAllDirect(dirname string, perm os.FileMode) error {
	dirname = path.Clean(dirname)
	req := &hdfs.MkdirsRequestProto{
		Src:          proto.String(dirname),
		Masked:       &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(perm))},
		CreateParent: proto.Bool(true),
	}
	resp := &hdfs.MkdirsResponseProto{}
	if err := c.namenode.Execute("mkdirs", req, resp); err != nil {
		return &os.PathError{Op: "mkdir", Path: dirname, Err: interpretException(err)}
	}
	return nil
}

// CreateFileDirect is CreateFile that creates name's missing parent
// directories in the same call (CreateParent), where CreateFile refuses a
// name whose parent is missing and a caller must ask mkdirs and create
// again: three calls for a file in a new directory, one here. Like
// CreateFile it never overwrites (CreateFlag CREATE only).
func (c *Client) CreateFileDirect(name string, replication int, blockSize int64, perm os.FileMode) (*FileWriter, error) {
	req := &hdfs.CreateRequestProto{
		Src:          proto.String(name),
		Masked:       &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(perm))},
		ClientName:   proto.String(c.namenode.ClientName),
		CreateFlag:   proto.Uint32(uint32(hdfs.CreateFlagProto_CREATE)),
		CreateParent: proto.Bool(true),
		Replication:  proto.Uint32(uint32(replication)),
		BlockSize:    proto.Uint64(uint64(blockSize)),
	}
	resp := &hdfs.CreateResponseProto{}
	if err := c.namenode.Execute("create", req, resp); err != nil {
		return nil, &os.PathError{Op: "create", Path: name, Err: interpretCreateException(err)}
	}
	return &FileWriter{
		client:      c,
		name:        name,
		replication: replication,
		blockSize:   blockSize,
		fileId:      resp.Fs.FileId,
	}, nil
}
