package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// Bank is a content directory on disk. Verify reads it with generator.Load
// and edits its question files in place.
type Bank struct {
	dir     string
	content *generator.Content
	index   map[string]int // question id → index in content.Questions
}

// Open loads the content directory dir. A tree that does not load returns
// its generator.Problems.
func Open(dir string) (*Bank, error) {
	b := &Bank{dir: dir}
	c, err := b.load(nil)
	if err != nil {
		return nil, err
	}
	b.setContent(c)
	return b, nil
}

// Dir returns the content directory.
func (b *Bank) Dir() string { return b.dir }

// Content returns the loaded content.
func (b *Bank) Content() *generator.Content { return b.content }

func (b *Bank) setContent(c *generator.Content) {
	b.content = c
	b.index = make(map[string]int, len(c.Questions))
	for i, q := range c.Questions {
		b.index[q.ID] = i
	}
}

// question returns the question with the given id and where it is written.
func (b *Bank) question(id string) (*certbank.Question, generator.Source, bool) {
	i, ok := b.index[id]
	if !ok {
		return nil, generator.Source{}, false
	}
	return &b.content.Questions[i], b.content.Sources[i], true
}

// certification checks that slug names a certification of the bank.
func (b *Bank) certification(slug string) error {
	if b.content.Certification(slug) != nil {
		return nil
	}
	slugs := make([]string, len(b.content.Certifications))
	for i, c := range b.content.Certifications {
		slugs[i] = c.Slug
	}
	return certbank.Errorf(certbank.Invalid, "no certification %q in %s; it has: %s", slug, b.dir, strings.Join(slugs, ", "))
}

// load runs generator.Load on the directory, reading the files in edited
// (content-relative path → bytes) instead of the disk.
func (b *Bank) load(edited map[string][]byte) (*generator.Content, error) {
	return generator.Load(overlayFS{os.DirFS(b.dir), edited}, b.dir)
}

// rel returns the content-relative path of a file named in a Source.
func (b *Bank) rel(file string) string {
	prefix := path.Clean(filepath.ToSlash(b.dir))
	if prefix == "." {
		return file
	}
	return strings.TrimPrefix(file, prefix+"/")
}

// overlayFS reads the files in edited from memory and everything else from
// base: what the tree will look like once the edits are written.
type overlayFS struct {
	base   fs.FS
	edited map[string][]byte
}

func (o overlayFS) Open(name string) (fs.File, error) { return o.base.Open(name) }

func (o overlayFS) ReadFile(name string) ([]byte, error) {
	if data, ok := o.edited[name]; ok {
		return bytes.Clone(data), nil
	}
	return fs.ReadFile(o.base, name)
}

func (o overlayFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(o.base, name) }

// entry is one verification or one calibration to record on a question.
type entry struct {
	id    string
	v     *certbank.Verification // one of v and c is set
	c     *certbank.Calibration
	asked *Item // what the solver saw; the question must still read the same
}

// verificationEntry returns the entry recording v on question id.
func verificationEntry(id string, v certbank.Verification) entry { return entry{id: id, v: &v} }

// calibrationEntry returns the entry recording c on question id.
func calibrationEntry(id string, c certbank.Calibration) entry { return entry{id: id, c: &c} }

// entryLists are a question's verification and calibration lists.
type entryLists struct {
	v []certbank.Verification
	c []certbank.Calibration
}

// change is what upserting an entry into a list did.
type change int

const (
	added change = iota
	replaced
	unchanged
)

// upsertBy sets e in xs: it replaces the first element mine matches (and
// drops the later ones it matches) or appends e.
func upsertBy[E comparable](xs []E, e E, mine func(E) bool) ([]E, change) {
	i := slices.IndexFunc(xs, mine)
	switch {
	case i < 0:
		return append(xs, e), added
	case xs[i] == e:
		return xs, unchanged
	}
	xs[i] = e
	return slices.Concat(xs[:i+1], slices.DeleteFunc(xs[i+1:], mine)), replaced
}

// recorded counts what record did.
type recorded struct {
	added, replaced, unchanged int
	stale                      []string // ids not recorded: the question is gone or changed since it was asked
	files                      []string // the files written, as named in messages
}

// errChanged is returned when a file changed on disk while record edited it.
var errChanged = errors.New("changed on disk while verify was editing it")

// record writes the entries into the question files, in place. It reloads
// the tree first; checks that every entry's question exists and, when the
// entry says what was asked, still reads the same (else the entry is
// skipped as stale); edits the files in
// memory; loads the edited tree and checks that it loads and that nothing
// but the verification and calibration entries changed; and only then writes the files, each
// through a temporary file and a rename. On any problem no file changes.
func (b *Bank) record(entries []entry) (recorded, error) {
	var res recorded
	var err error
	for range 3 {
		res, err = b.recordOnce(entries)
		if !errors.Is(err, errChanged) {
			break
		}
	}
	return res, err
}

func (b *Bank) recordOnce(entries []entry) (recorded, error) {
	var res recorded
	before, err := b.load(nil)
	if err != nil {
		return res, err
	}
	b.setContent(before)

	// What each question's lists must be afterwards, and the edits per file.
	want := map[string]*entryLists{}
	type edit struct {
		id string
		e  block
	}
	byFile := map[string][]edit{}
	var files []string
	var probs generator.Problems
	for _, e := range entries {
		q, src, ok := b.question(e.id)
		if !ok || e.asked != nil && *e.asked != itemOf(q) {
			res.stale = append(res.stale, e.id)
			continue
		}
		l, ok := want[e.id]
		if !ok {
			l = &entryLists{slices.Clone(q.Verifications), slices.Clone(q.Calibrations)}
			want[e.id] = l
		}
		var ch change
		var blk block
		if e.v != nil {
			l.v, ch = upsertBy(l.v, *e.v, func(o certbank.Verification) bool { return o.Solver == e.v.Solver })
			blk = verificationBlock(*e.v)
		} else {
			l.c, ch = upsertBy(l.c, *e.c, func(o certbank.Calibration) bool { return o.Rater == e.c.Rater })
			blk = calibrationBlock(*e.c)
		}
		switch ch {
		case added:
			res.added++
		case replaced:
			res.replaced++
		case unchanged:
			res.unchanged++
			continue
		}
		rel := b.rel(src.File)
		if _, ok := byFile[rel]; !ok {
			files = append(files, rel)
		}
		byFile[rel] = append(byFile[rel], edit{e.id, blk})
	}
	if len(files) == 0 {
		return res, nil
	}

	orig := map[string][]byte{}
	edited := map[string][]byte{}
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(rel)))
		if err != nil {
			return recorded{}, err
		}
		f := parseQuestionFile(data)
		for _, e := range byFile[rel] {
			if err := f.upsert(e.id, e.e); err != nil {
				probs = append(probs, generator.Problem{File: path.Join(b.dir, rel), Msg: err.Error()})
			}
		}
		orig[rel], edited[rel] = data, f.bytes()
	}
	if len(probs) > 0 {
		return recorded{}, probs
	}

	after, err := b.load(edited)
	if err != nil {
		return recorded{}, fmt.Errorf("the edited files would not load (nothing was written; please report this):\n%w", err)
	}
	if err := sameExceptLists(before, after, want); err != nil {
		return recorded{}, err
	}

	for _, rel := range files {
		res.files = append(res.files, path.Join(b.dir, rel))
	}
	if err := b.write(orig, edited); err != nil {
		return recorded{}, err
	}
	b.setContent(after)
	return res, nil
}

// sameExceptLists checks that after holds the same questions as before, in
// the same places, and that only the verification and calibration entries in
// want changed.
func sameExceptLists(before, after *generator.Content, want map[string]*entryLists) error {
	if len(before.Questions) != len(after.Questions) {
		return fmt.Errorf("editing would change the number of questions from %d to %d; nothing was written (please report this)", len(before.Questions), len(after.Questions))
	}
	for i := range before.Questions {
		x, y := before.Questions[i], after.Questions[i]
		w := entryLists{x.Verifications, x.Calibrations}
		if l, ok := want[x.ID]; ok {
			w = *l
		}
		gotV, gotC := y.Verifications, y.Calibrations
		x.Verifications, y.Verifications, x.Calibrations, y.Calibrations = nil, nil, nil, nil
		if !reflect.DeepEqual(x, y) || !slices.Equal(gotV, w.v) || !slices.Equal(gotC, w.c) {
			return fmt.Errorf("editing %s:%d would change question %s beyond its verification and calibration entries; nothing was written (please report this)", before.Sources[i].File, before.Sources[i].Line, x.ID)
		}
	}
	return nil
}

// write replaces each file in edited: every new content goes to a temporary
// file next to its target first, and the renames happen only when all were
// written and no target changed since it was read (orig).
func (b *Bank) write(orig, edited map[string][]byte) error {
	type pending struct{ tmp, target string }
	var done []pending
	cleanup := func() {
		for _, p := range done {
			os.Remove(p.tmp)
		}
	}
	for rel, data := range edited {
		target := filepath.Join(b.dir, filepath.FromSlash(rel))
		mode := fs.FileMode(0o644)
		if st, err := os.Stat(target); err == nil {
			mode = st.Mode().Perm()
		}
		tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".verify-*")
		if err != nil {
			cleanup()
			return err
		}
		done = append(done, pending{tmp.Name(), target})
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Chmod(mode)
		}
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", target, err)
		}
	}
	for rel, data := range orig {
		now, err := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(now, data) {
			cleanup()
			return fmt.Errorf("%s %w", path.Join(b.dir, rel), errChanged)
		}
	}
	for i, p := range done {
		if err := os.Rename(p.tmp, p.target); err != nil {
			cleanup()
			return fmt.Errorf("replacing %s (files before it in this batch were written; rerun to finish): %w", p.target, err)
		}
		done[i].tmp = ""
	}
	return nil
}

// today returns the current date as YYYY-MM-DD.
func today() string { return time.Now().Format(time.DateOnly) }

// checkSolver checks a solver name as recorded in verification entries.
func checkSolver(name string) error { return checkName("solver", name) }

// checkName checks the name of a solver or a rater (kind) as recorded in
// verification and calibration entries.
func checkName(kind, name string) error {
	switch {
	case strings.TrimSpace(name) != name || name == "":
		return certbank.Errorf(certbank.Invalid, "%s name %q must be non-empty text without leading or trailing spaces", kind, name)
	case strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return certbank.Errorf(certbank.Invalid, "%s name %q must be one line of text", kind, name)
	case len(name) > 120:
		return certbank.Errorf(certbank.Invalid, "%s name %q is longer than 120 bytes; describe the %s briefly", kind, name, kind)
	}
	return nil
}

// checkDate checks a YYYY-MM-DD date.
func checkDate(date string) error {
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return certbank.Errorf(certbank.Invalid, "date %q must look like 2026-11-21", date)
	}
	return nil
}
