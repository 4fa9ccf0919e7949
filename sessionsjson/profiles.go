package sessionsjson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// AllProfiles lists every home of a Hermes root the way the runtime's `hermes profile list`
// does (upstream hermes_cli/profiles.py list_profile_names and _iter_named_profile_dirs):
// the root itself as profile "default", then each directory under <root>/profiles whose name
// is a valid profile id other than "default", in name order (a symbolic link to a directory
// counts, as Path.is_dir follows it). The root is resolved from o like ResolveHome, ignoring
// o.Profile and the sticky active_profile; when it is itself a profile directory
// (<root>/profiles/NAME), the profiles are listed from the root above it, as the runtime
// anchors them. A missing profiles directory means the root alone.
func AllProfiles(o HomeOptions) ([]Home, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	root, source, err := resolveRoot(o, getenv)
	if err != nil {
		return nil, err
	}
	if looksLikeProfileDir(root) {
		root = filepath.Dir(filepath.Dir(root))
	}
	base := Home{Root: root, Dir: root, HomeSource: source}
	homes := []Home{{Root: root, Dir: root, HomeSource: source, Profile: defaultProfile, ProfileSource: SourceFlag}}
	entries, err := os.ReadDir(filepath.Join(root, "profiles"))
	if errors.Is(err, fs.ErrNotExist) {
		return homes, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == defaultProfile || !profileName.MatchString(name) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(root, "profiles", name)); err != nil || !fi.IsDir() {
			continue
		}
		h, err := base.withProfile(name, SourceFlag)
		if err != nil {
			return nil, err
		}
		homes = append(homes, h)
	}
	return homes, nil
}
