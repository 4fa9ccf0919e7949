package statedb

import "golang.org/x/sys/unix"

// pinned reports whether the file at path (not followed) carries the immutable or the
// append-only attribute (chattr +i / +a), either of which makes a rename of it fail, root
// included, whatever its directory allows.
func pinned(path string) bool {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, 0, &st) != nil {
		return false
	}
	const attrs = unix.STATX_ATTR_IMMUTABLE | unix.STATX_ATTR_APPEND
	return st.Attributes_mask&st.Attributes&attrs != 0
}
