-- certbank store, schema 4 (SQLite): what learners leave behind. Nothing
-- here names a learner (no key ID, no address); see docs/decisions.md.

-- Mock exams drawn: the questions in order; graded_at is set once.
CREATE TABLE exams (
	id            TEXT PRIMARY KEY,
	certification TEXT NOT NULL,
	length        TEXT NOT NULL,
	source        TEXT NOT NULL,
	questions     TEXT NOT NULL, -- question IDs, comma-separated
	minutes       INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	graded_at     INTEGER
) STRICT;

CREATE INDEX exams_created_at ON exams (created_at);

-- Anonymous graded answers, for the item statistics.
CREATE TABLE responses (
	seq         INTEGER PRIMARY KEY,
	question_id TEXT NOT NULL,
	chosen      TEXT NOT NULL,
	correct     INTEGER NOT NULL,
	source      TEXT NOT NULL,
	attempt     TEXT NOT NULL,
	score       REAL NOT NULL,
	at          INTEGER NOT NULL
) STRICT;

CREATE INDEX responses_at ON responses (at);

-- Learners' reports of questions believed wrong.
CREATE TABLE reports (
	id          TEXT PRIMARY KEY,
	question_id TEXT NOT NULL,
	reason      TEXT NOT NULL,
	text        TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	resolved_at INTEGER,
	resolution  TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX reports_created_at ON reports (created_at);
CREATE INDEX reports_question ON reports (question_id);
