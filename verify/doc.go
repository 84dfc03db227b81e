// Package verify checks the stored answers of the question bank with
// independent blind solvers, as the quality policy of site.yaml requires
// (quality.min_agreeing_solvers), and the difficulty labels with blind
// raters.
//
// A solver sees only a question's stem and options ([Item]): on an answer
// sheet ([Bank.Sheet]; text batches of at most [DefaultBatch] questions with
// an ANSWERS block of "<id>: <letter>" lines, or JSON or CSV) that a person
// fills in and [Bank.Import] records, or through a [Solver] that [Bank.Run]
// asks directly (an OpenAI-compatible API or a local program). Each answer
// becomes a verification entry {solver, answer, date} on the question.
// [Bank.Status] counts what is verified, pending and disagreeing, and each
// solver's agreement rate; [Bank.Override] records a reviewed decision on a
// disagreement.
//
// A rater sees a question with its key and the exam, but not its label, on
// a rating sheet ([Bank.RatingSheet]) with a RATINGS block of "<id>:
// <difficulty> <level>" lines; [Bank.RateImport] records each rating as a
// calibration entry {rater, difficulty, level, date}, and [Bank.Status]
// counts the unrated and miscalibrated questions.
//
// Verify edits the question files in place, line by line: comments,
// formatting and everything else in the files keep their bytes. Every write
// is checked first (the edited tree must load with generator.Load and differ
// only in the verification and calibration entries) and done through a
// temporary file and a rename, so a refused or failed operation changes
// nothing.
package verify
