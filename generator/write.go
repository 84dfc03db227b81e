package generator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write puts the output in place: every public file under publicDir and the
// bank bundle at bankPath. Files are first written to a staging directory
// beside publicDir, which then replaces publicDir in one rename, so a failed
// build never leaves a half-written site. bankPath must be outside
// publicDir: the bundle holds every answer.
func (o *Output) Write(publicDir, bankPath string) error {
	pub, err := filepath.Abs(publicDir)
	if err != nil {
		return err
	}
	bank, err := filepath.Abs(bankPath)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(pub, bank); err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../") {
		return fmt.Errorf("the bank bundle %s must not be inside the public directory %s: it holds every answer", bankPath, publicDir)
	}
	// Renaming the bundle into place is the last step, after the new site
	// is swapped in; refuse up front what would make it fail.
	if st, err := os.Stat(bank); err == nil && st.IsDir() {
		return fmt.Errorf("the bank bundle path %s is a directory; give the path of a file", bankPath)
	}
	parent := filepath.Dir(pub)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(pub)+".staging-")
	if err != nil {
		return fmt.Errorf("create staging directory: %w", err)
	}
	defer os.RemoveAll(stage)
	if err := os.MkdirAll(filepath.Dir(bank), 0o755); err != nil {
		return err
	}
	// The bank bundle is written beside its final name while the site is
	// staged.
	tmpBank := bank + ".tmp"
	defer os.Remove(tmpBank)
	bankWritten := make(chan error, 1)
	go func() { bankWritten <- os.WriteFile(tmpBank, o.BankJSON, 0o600) }()
	stageErr := func() error {
		for _, p := range o.Paths() {
			dst := filepath.Join(stage, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, o.Files[p], 0o644); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
		}
		return os.Chmod(stage, 0o755)
	}()
	bankErr := <-bankWritten
	if stageErr != nil {
		return stageErr
	}
	if bankErr != nil {
		return fmt.Errorf("write bank bundle: %w", bankErr)
	}

	old := ""
	if _, err := os.Stat(pub); err == nil {
		old = stage + ".old"
		if err := os.Rename(pub, old); err != nil {
			return fmt.Errorf("move the old %s aside: %w", publicDir, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(stage, pub); err != nil {
		if old != "" {
			os.Rename(old, pub)
		}
		return fmt.Errorf("swap in the new %s: %w", publicDir, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	if err := os.Rename(tmpBank, bank); err != nil {
		return fmt.Errorf("write bank bundle: %w", err)
	}
	return nil
}
