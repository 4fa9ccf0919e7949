package statedb

import "golang.org/x/sys/unix"

// unmovable reports whether the file at path (not followed) is anything but a regular file,
// or carries the immutable or the append-only attribute (chattr +i / +a), either of which
// makes a rename of it fail, root included, whatever its directory allows. One statx(2) reads
// both (where it fails, lstat decides the kind alone); a path that cannot be read at all is
// left to the move, which reports it.
func unmovable(path string) bool {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE, &st) != nil || st.Mask&unix.STATX_TYPE == 0 {
		return notRegular(path)
	}
	const attrs = unix.STATX_ATTR_IMMUTABLE | unix.STATX_ATTR_APPEND
	return st.Mode&unix.S_IFMT != unix.S_IFREG || st.Attributes_mask&st.Attributes&attrs != 0
}
