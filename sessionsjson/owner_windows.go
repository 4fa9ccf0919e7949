package sessionsjson

// OwnLikeParent does nothing on Windows: a file created there inherits its directory's ACL.
func OwnLikeParent(string) error { return nil }

// OwnTreeLikeParent does nothing on Windows (OwnLikeParent).
func OwnTreeLikeParent(string) error { return nil }
