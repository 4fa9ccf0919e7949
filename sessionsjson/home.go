package sessionsjson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sources of the resolved home and profile.
const (
	SourceFlag          = "flag"
	SourceEnv           = "HERMES_HOME"
	SourceDefault       = "default"
	SourceActiveProfile = "active_profile"
	defaultProfile      = "default"
)

var profileName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// HomeOptions are the inputs of home resolution.
type HomeOptions struct {
	// Home is the --home flag ("" when not given).
	Home string
	// Profile is the --profile flag ("" when not given).
	Profile string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// UserHomeDir is the user's home directory (os.UserHomeDir when "").
	UserHomeDir string
}

// Home is a resolved Hermes home.
type Home struct {
	// Root is the home before profile selection; Dir is the home in use.
	Root, Dir string
	// Profile is the selected profile ("" when none applies).
	Profile string
	// HomeSource is "flag", "HERMES_HOME" or "default".
	HomeSource string
	// ProfileSource is "flag", "active_profile" or "".
	ProfileSource string
}

// ResolveHome resolves the home like the runtime's CLI wrapper (upstream hermes_cli get_hermes_home). It does not require
// the home to exist. An invalid profile name is an ErrInvalid error.
func ResolveHome(o HomeOptions) (Home, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	root, source, err := resolveRoot(o, getenv)
	if err != nil {
		return Home{}, err
	}
	h := Home{Root: root, Dir: root, HomeSource: source}
	if o.Profile != "" {
		return h.withProfile(o.Profile, SourceFlag)
	}
	if looksLikeProfileDir(root) || getenv("HERMES_S6_SUPERVISED_CHILD") != "" {
		return h, nil
	}
	name, ok, err := readActiveProfile(root)
	if err != nil || !ok {
		return h, err
	}
	if !profileName.MatchString(name) {
		return Home{}, &ActiveProfileError{Path: filepath.Join(root, "active_profile"),
			Err: fmt.Errorf("names profile %q, which must match %s", name, profileName)}
	}
	return h.withProfile(name, SourceActiveProfile)
}

// ActiveProfileError is an active_profile file sessionctl cannot follow: unreadable, not a
// regular file, or naming an invalid profile. It is an ErrCorrupt and names the file. (The
// runtime refuses an invalid name too, but starts in the root when it cannot read the file;
// sessionctl, perhaps run as another user, would then work on another home than the gateway's.)
type ActiveProfileError struct {
	Path string
	Err  error
}

func (e *ActiveProfileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap makes the error its cause and an ErrCorrupt.
func (e *ActiveProfileError) Unwrap() []error { return []error{e.Err, ErrCorrupt} }

func resolveRoot(o HomeOptions, getenv func(string) string) (string, string, error) {
	root, source := o.Home, SourceFlag
	if root == "" {
		root, source = strings.TrimSpace(getenv("HERMES_HOME")), SourceEnv
	}
	if root == "" {
		home := o.UserHomeDir
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", "", fmt.Errorf("resolve default home: %w", err)
			}
		}
		root, source = filepath.Join(home, ".hermes"), SourceDefault
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", "", fmt.Errorf("resolve home %s: %w", root, err)
	}
	return abs, source, nil
}

func (h Home) withProfile(name, source string) (Home, error) {
	if !profileName.MatchString(name) {
		return Home{}, fmt.Errorf("profile %q (from %s) must match %s: %w", name, source, profileName, ErrInvalid)
	}
	h.Profile, h.ProfileSource = name, source
	if name != defaultProfile {
		h.Dir = filepath.Join(h.Root, "profiles", name)
	}
	return h, nil
}

func looksLikeProfileDir(root string) bool {
	return filepath.Base(filepath.Dir(root)) == "profiles"
}

// readActiveProfile reads the sticky profile file as the runtime does, its whole text
// stripped (upstream hermes_cli/main.py _apply_profile_override, as of c2a3b9ce5); ok is false
// when it selects the root (absent, empty or "default"). A file that cannot be read (not a
// regular file, not UTF-8, unreadable) is an ActiveProfileError.
func readActiveProfile(root string) (string, bool, error) {
	path := filepath.Join(root, "active_profile")
	data, err := ReadRegularFile(path, MaxSmallFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err == nil && !utf8.Valid(data) {
		err = errors.New("not valid UTF-8")
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		} else if errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge) { // they name the file
			err = errors.New(strings.TrimPrefix(err.Error(), path+": "))
		}
		return "", false, &ActiveProfileError{Path: path, Err: err}
	}
	name := strings.TrimFunc(string(data), pyIsSpace)
	return name, name != "" && name != defaultProfile, nil
}

// pyIsSpace is Python's str.isspace for one character: Unicode white space, and the
// separators U+001C–U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// SessionsDir is <home>/sessions.
func (h Home) SessionsDir() string { return filepath.Join(h.Dir, "sessions") }

// SessionsJSON is <home>/sessions/sessions.json.
func (h Home) SessionsJSON() string { return filepath.Join(h.SessionsDir(), "sessions.json") }

// StateDB is <home>/state.db.
func (h Home) StateDB() string { return filepath.Join(h.Dir, "state.db") }

// CountsFile is <home>/.restart_failure_counts.
func (h Home) CountsFile() string { return filepath.Join(h.Dir, ".restart_failure_counts") }

// CleanShutdownFile is <home>/.clean_shutdown.
func (h Home) CleanShutdownFile() string { return filepath.Join(h.Dir, ".clean_shutdown") }

// PIDFile is <home>/gateway.pid.
func (h Home) PIDFile() string { return filepath.Join(h.Dir, "gateway.pid") }

// GatewayLockFile is <home>/gateway.lock.
func (h Home) GatewayLockFile() string { return filepath.Join(h.Dir, "gateway.lock") }

// GatewayStateFile is <home>/gateway_state.json.
func (h Home) GatewayStateFile() string { return filepath.Join(h.Dir, "gateway_state.json") }

// ToolDir is <home>/sessionctl.
func (h Home) ToolDir() string { return filepath.Join(h.Dir, "sessionctl") }

// ToolLockFile is <home>/sessionctl/lock.
func (h Home) ToolLockFile() string { return filepath.Join(h.ToolDir(), "lock") }

// JournalDir is <home>/sessionctl/journal.
func (h Home) JournalDir() string { return filepath.Join(h.ToolDir(), "journal") }

// Validate checks that the home exists and is a directory holding sessions/ (a directory) or
// state.db: a path that is neither is no Hermes home (ErrNotFound, ErrCorrupt).
func (h Home) Validate() error {
	if err := statDir(h.Dir, "home"); err != nil {
		if errors.Is(err, ErrNotFound) && h.Profile != "" && h.Dir != h.Root {
			return fmt.Errorf("profile %q: %w", h.Profile, err)
		}
		return err
	}
	err := statDir(h.SessionsDir(), "sessions directory")
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	if _, serr := os.Lstat(h.StateDB()); errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("%s is not a Hermes home (it has neither sessions/ nor state.db): %w", h.Dir, ErrNotFound)
	}
	return nil
}

func statDir(path, what string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s does not exist: %w", what, path, ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s %s: %w", what, path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %s is not a directory: %w", what, path, ErrCorrupt)
	}
	return nil
}

// ResolvedSessionsDir returns the absolute, symlink-resolved sessions directory, like
// Python's Path(sessions_dir).resolve(): the gateway_routing scope of this home.
func ResolvedSessionsDir(h Home) (string, error) {
	return realPath(h.SessionsDir())
}

// realPath resolves symlinks like os.path.realpath: components that do not exist are kept.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	return resolveLinks(abs, 0)
}

func resolveLinks(abs string, hops int) (string, error) {
	if hops > 40 {
		return "", fmt.Errorf("resolve %s: too many levels of symbolic links: %w", abs, ErrInvalid)
	}
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		return p, nil
	}
	dir, base := filepath.Split(abs)
	if base == "" {
		return abs, nil
	}
	parent, err := resolveLinks(filepath.Clean(dir), hops)
	if err != nil {
		return "", err
	}
	joined := filepath.Join(parent, base)
	target, err := os.Readlink(joined)
	if err != nil {
		return joined, nil
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(parent, target)
	}
	return resolveLinks(target, hops+1)
}
