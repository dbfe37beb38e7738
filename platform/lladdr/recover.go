package lladdr

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/swctl/swctl/platform/statedir"
)

// Recover is `swctl recover`: with no daemon running, it puts back every
// hardware address the journal in stateDir lists (Journal.RecoverAll) and
// reports what it did. It takes the state directory's lock for the time
// it runs, and refuses while a daemon holds it: the daemon recovers by
// itself when it starts, and owns the addresses while it runs.
//
// A state directory that does not exist has nothing to recover: the
// report is empty and the error nil.
func Recover(stateDir string, log *slog.Logger) (Report, error) {
	if log == nil {
		log = slog.Default()
	}
	if _, err := os.Stat(stateDir); errors.Is(err, fs.ErrNotExist) {
		log.Info("lladdr journal: no state directory, nothing to recover", "state_dir", stateDir)
		return newReport(), nil
	}
	unlock, err := statedir.Lock(stateDir)
	if err != nil {
		if le := (*statedir.LockedError)(nil); errors.As(err, &le) {
			return newReport(), fmt.Errorf("state dir %s: a swctl daemon is running (it holds %s); stop it first", le.Dir, le.Path)
		}
		return newReport(), err
	}
	defer unlock()
	j, err := OpenJournal(stateDir)
	if err != nil {
		return newReport(), err
	}
	j.SetLogger(log)
	return j.RecoverAll(log)
}
