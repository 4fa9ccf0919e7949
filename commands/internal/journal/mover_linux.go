package journal

import "golang.org/x/sys/unix"

// openDir opens dir for the *at system calls.
func openDir(dir string) (int, error) {
	return unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

func closeDir(fd int) { _ = unix.Close(fd) }

// renameAt renames fromName in the directory fromFd to toName in toFd.
func renameAt(fromFd int, fromName string, toFd int, toName string) error {
	return unix.Renameat(fromFd, fromName, toFd, toName)
}
