package verify

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// Item is a question as a solver sees it: the stem and the options, with
// whitespace normalised, and nothing else (no key, no explanation, no domain
// or difficulty).
type Item struct {
	ID       string  `json:"id"`
	Question string  `json:"question"`
	Options  Options `json:"options"`
}

// Options are the texts of options A to D.
type Options struct {
	A string `json:"A"`
	B string `json:"B"`
	C string `json:"C"`
	D string `json:"D"`
}

// Get returns the text of option l.
func (o Options) Get(l certbank.Letter) string {
	return [4]string{o.A, o.B, o.C, o.D}[l.Index()]
}

// itemOf returns what a solver sees of q.
func itemOf(q *certbank.Question) Item {
	return Item{ID: q.ID, Question: normalize(q.Stem), Options: Options{
		A: normalize(q.Options[0]), B: normalize(q.Options[1]), C: normalize(q.Options[2]), D: normalize(q.Options[3]),
	}}
}

// normalize collapses runs of whitespace into single spaces.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// Sheet is a blind answer sheet: the questions of one certification for a
// solver to answer without seeing the keys.
type Sheet struct {
	Certification string `json:"certification"`
	Instructions  string `json:"instructions"`
	Questions     []Row  `json:"questions"`
	// Batch and Batches say which part of a split sheet this is (text
	// sheets show it); zero for a whole sheet.
	Batch   int `json:"-"`
	Batches int `json:"-"`
}

// Row is one question of a sheet and the letter the solver wrote.
type Row struct {
	Item
	Answer string `json:"answer"`
	Line   int    `json:"-"` // where the row starts in a read sheet (text sheets: its ANSWERS line)
	// ItemLine is where a text sheet shows the question; 0 for JSON and CSV.
	ItemLine int `json:"-"`
}

// TextLine returns the line where the row's question text is: ItemLine for
// text sheets, else Line.
func (r Row) TextLine() int {
	if r.ItemLine > 0 {
		return r.ItemLine
	}
	return r.Line
}

// Instructions is the text at the top of every JSON sheet.
const Instructions = `Answer every question on your own, without looking anything up in the question bank: ` +
	`write the letter (A, B, C or D) of the single best option in "answer". ` +
	`Do not change ids, questions or options. Return the filled sheet to the operator, ` +
	`who records it with: certbank verify import --solver "<who answered, honestly described>" FILE`

// Format is a sheet file format.
type Format string

// The sheet formats.
const (
	JSON Format = "json"
	CSV  Format = "csv"
	Text Format = "text" // files end in .txt
)

// Ext returns the file name extension of the format, with its dot.
func (f Format) Ext() string {
	if f == Text {
		return ".txt"
	}
	return "." + string(f)
}

// ParseFormat returns the format named s (text, json or csv; txt for text).
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case JSON, CSV, Text:
		return f, nil
	case "txt":
		return Text, nil
	}
	return "", certbank.Errorf(certbank.Invalid, "format %q is not text, json or csv", s)
}

// Filter selects the questions of an answer sheet. The zero Filter selects
// every question of the certification.
type Filter struct {
	// UnansweredBy leaves out the questions this solver has answered.
	UnansweredBy string
	// Disagreeing keeps only the questions on which a solver chose another
	// letter than the key and no override records a review: the ones a third
	// solver should see.
	Disagreeing bool
}

func (f Filter) keep(q *certbank.Question) bool {
	if f.UnansweredBy != "" && answeredBy(q, f.UnansweredBy) {
		return false
	}
	if f.Disagreeing {
		if _, disagree := q.Agreeing(); len(disagree) == 0 {
			return false
		}
	}
	return true
}

// Sheet returns the blind answer sheet of certification slug: the questions
// f selects, in bank order.
func (b *Bank) Sheet(slug string, f Filter) (*Sheet, error) {
	if err := b.certification(slug); err != nil {
		return nil, err
	}
	s := &Sheet{Certification: slug, Instructions: Instructions, Questions: []Row{}}
	for i := range b.content.Questions {
		q := &b.content.Questions[i]
		if q.Certification == slug && f.keep(q) {
			s.Questions = append(s.Questions, Row{Item: itemOf(q)})
		}
	}
	// Sheets list questions by id, not in file order: a writer's file may
	// cycle its keys (A, B, C, D, …), and a solver must not be able to read
	// answers off positions. Ids are random, so their order is too.
	slices.SortFunc(s.Questions, func(a, b Row) int { return strings.Compare(a.ID, b.ID) })
	return s, nil
}

// DefaultBatch is how many questions a batch sheet holds at most.
const DefaultBatch = 50

// Split returns the sheet as batches of at most n questions each, in order,
// numbered from 1; none when the sheet has no questions.
func (s *Sheet) Split(n int) []*Sheet {
	parts := split(s.Questions, n)
	out := make([]*Sheet, len(parts))
	for i, p := range parts {
		b := *s
		b.Questions, b.Batch, b.Batches = p, i+1, len(parts)
		out[i] = &b
	}
	return out
}

// split cuts xs into parts of at most n elements (n < 1: one part).
func split[E any](xs []E, n int) [][]E {
	if n < 1 {
		n = len(xs)
	}
	var parts [][]E
	for len(xs) > 0 {
		k := min(n, len(xs))
		parts = append(parts, xs[:k:k])
		xs = xs[k:]
	}
	return parts
}

// answeredBy reports whether solver has an entry on q.
func answeredBy(q *certbank.Question, solver string) bool {
	for _, v := range q.Verifications {
		if v.Solver == solver {
			return true
		}
	}
	return false
}

// Write writes the sheet in format f.
func (s *Sheet) Write(w io.Writer, f Format) error {
	switch f {
	case CSV:
		return s.writeCSV(w)
	case Text:
		var tw textWriter
		s.writeText(&tw)
		_, err := w.Write(tw.buf.Bytes())
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

var csvHeader = []string{"id", "question", "A", "B", "C", "D", "answer"}

func (s *Sheet) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, r := range s.Questions {
		o := r.Options
		cw.Write([]string{r.ID, r.Question, o.A, o.B, o.C, o.D, r.Answer})
	}
	cw.Flush()
	return cw.Error()
}

// ReadSheet reads a filled sheet, JSON, CSV or text (told apart by the
// content). name is how the file is named in problems. A sheet that cannot
// be read returns generator.Problems with file:line; for a text sheet, every
// problem of its shape (a question without its ANSWERS line, an id repeated
// or not on the sheet, a line that is not "<id>: <letter>").
func ReadSheet(name string, data []byte) (*Sheet, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var s *Sheet
	var err error
	switch t := bytes.TrimLeft(data, " \t\r\n"); {
	case len(t) > 0 && t[0] == '{':
		s, err = readJSON(data)
	case isTextSheet(data):
		return readTextSheet(name, data)
	default:
		s, err = readCSV(data)
	}
	if err != nil {
		var p lineError
		if !errors.As(err, &p) {
			p = lineError{0, err}
		}
		return nil, generator.Problems{{File: name, Line: p.line, Msg: p.err.Error()}}
	}
	if len(s.Questions) == 0 {
		return nil, generator.Problems{{File: name, Msg: "the sheet holds no questions"}}
	}
	return s, nil
}

// lineError is a sheet error at a line.
type lineError struct {
	line int
	err  error
}

func (e lineError) Error() string { return e.err.Error() }

func readJSON(data []byte) (*Sheet, error) {
	lineAt := func(off int64) int { return 1 + bytes.Count(data[:min(off, int64(len(data)))], []byte("\n")) }
	// start returns the offset of the next value at or after off.
	start := func(off int64) int64 {
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
			off++
		}
		return off
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(err error) error {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return lineError{lineAt(se.Offset), fmt.Errorf("not valid JSON: %v", err)}
		case errors.As(err, &te):
			return lineError{lineAt(te.Offset), fmt.Errorf("%q must be %s, not a JSON %s", te.Field, te.Type, te.Value)}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return lineError{lineAt(int64(len(data))), errors.New("the JSON ends too early")}
		}
		return lineError{lineAt(dec.InputOffset()), fmt.Errorf("not a sheet: %v", err)}
	}
	delim := func(want json.Delim, what string) error {
		off := start(dec.InputOffset())
		t, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if t != want {
			return lineError{lineAt(off), fmt.Errorf("expected %s", what)}
		}
		return nil
	}
	s := &Sheet{}
	if err := delim('{', `a sheet: {"certification": ..., "questions": [...]}`); err != nil {
		return nil, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		switch t {
		case "certification":
			err = dec.Decode(&s.Certification)
		case "instructions":
			err = dec.Decode(&s.Instructions)
		case "questions":
			if err := delim('[', `"questions" to be a list`); err != nil {
				return nil, err
			}
			for dec.More() {
				line := lineAt(start(dec.InputOffset()))
				var r Row
				if err := dec.Decode(&r); err != nil {
					return nil, fail(err)
				}
				r.Line = line
				s.Questions = append(s.Questions, r)
			}
			_, err = dec.Token()
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fail(err)
		}
	}
	return s, nil
}

func readCSV(data []byte) (*Sheet, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(csvHeader)
	fail := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return lineError{pe.Line, fmt.Errorf("not a sheet in CSV: %v (the header is %s)", pe.Err, strings.Join(csvHeader, ","))}
		}
		return err
	}
	head, err := r.Read()
	if err != nil {
		return nil, fail(err)
	}
	for i, h := range head {
		if !strings.EqualFold(strings.TrimSpace(h), csvHeader[i]) {
			return nil, lineError{1, fmt.Errorf("the header must be %s (a sheet is JSON starting with { or CSV)", strings.Join(csvHeader, ","))}
		}
	}
	s := &Sheet{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, fail(err)
		}
		line, _ := r.FieldPos(0)
		s.Questions = append(s.Questions, Row{
			Item:   Item{ID: rec[0], Question: rec[1], Options: Options{rec[2], rec[3], rec[4], rec[5]}},
			Answer: rec[6],
			Line:   line,
		})
	}
}
