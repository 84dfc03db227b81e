-- certbank store, schema 4 (PostgreSQL): what learners leave behind.
-- Nothing here names a learner (no key ID, no address); see
-- docs/decisions.md.

-- Mock exams drawn: the questions in order; graded_at is set once.
CREATE TABLE exams (
	id            text PRIMARY KEY,
	certification text NOT NULL,
	length        text NOT NULL,
	source        text NOT NULL,
	questions     text[] NOT NULL,
	minutes       integer NOT NULL,
	created_at    timestamptz NOT NULL,
	graded_at     timestamptz
);

CREATE INDEX exams_created_at ON exams (created_at);

-- Anonymous graded answers, for the item statistics.
CREATE TABLE responses (
	seq         bigserial PRIMARY KEY,
	question_id text NOT NULL,
	chosen      text NOT NULL,
	correct     boolean NOT NULL,
	source      text NOT NULL,
	attempt     text NOT NULL,
	score       double precision NOT NULL,
	at          timestamptz NOT NULL
);

CREATE INDEX responses_at ON responses (at);

-- Learners' reports of questions believed wrong.
CREATE TABLE reports (
	id          text PRIMARY KEY,
	question_id text NOT NULL,
	reason      text NOT NULL,
	text        text NOT NULL,
	created_at  timestamptz NOT NULL,
	resolved_at timestamptz,
	resolution  text NOT NULL DEFAULT ''
);

CREATE INDEX reports_created_at ON reports (created_at);
CREATE INDEX reports_question ON reports (question_id);
