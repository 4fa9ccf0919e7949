//go:build windows

package sessionsjson

// mapRegularFile reads the regular file at path whole (Windows: no mapping here).
func mapRegularFile(path string, limit int64) (*mapping, error) {
	data, err := ReadRegularFile(path, limit)
	if err != nil {
		return nil, err
	}
	return &mapping{data: data}, nil
}
