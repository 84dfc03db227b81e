package verify

import "testing"

// TestReadTextWrappedAnswersLine: an option that wraps onto an indented
// line reading "answers" (or "ratings") is part of the option, not the
// start of the sheet's block.
func TestReadTextWrappedAnswersLine(t *testing.T) {
	const id = "38f09e1c-08be-436a-a6d0-a746760e795b"
	sheet := "CERTBANK ANSWER SHEET\nCertification: x\n\n" +
		"Question 1 of 1 (id " + id + ")\n\n" +
		"  Which design fits BEST?\n\n" +
		"  A) Index the articles once\n" +
		"  B) Keep twelve indexes in step\n" +
		"  C) Translate each question, search, then translate the\n" +
		"     answers\n" +
		"  D) Fine-tune every week\n" +
		"     ratings\n\n" +
		"ANSWERS\n" + id + ": C\n"
	s, probs := readText("sheet.txt", []byte(sheet), answersBlock)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if len(s.rows) != 1 || s.rows[0].value != "C" {
		t.Fatalf("rows = %+v", s.rows)
	}
	opts := s.rows[0].item.Options
	if opts.C != "Translate each question, search, then translate the answers" || opts.D != "Fine-tune every week ratings" {
		t.Errorf("options = %q", opts)
	}
}
