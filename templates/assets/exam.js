/* certbank study hub: the timed mock exam, loaded by practice.js when a
   learner starts one (or has one in this browser). It uses practice.js's
   helpers, and the server draws and grades the exam. */
(() => {
  'use strict';
  const { h, btn, $, LETTERS, announce, focus, store, call, post, noteResult, reportControl, clock, plural, apiKey } = window.certbankHub;

  /* MockExam is a timed mock exam drawn by GET /api/v1/exam (with the
     learner's key, or from the free sample without one) and graded once by
     the server; its state is kept in this browser until a new one starts. */
  class MockExam {
    constructor(box, sec) {
      Object.assign(this, { box, setup: [...box.children], cert: sec.dataset.cert, key: 'certbank:exam:' + sec.dataset.cert, timer: 0 });
      this.s = store.get(this.key) || { phase: 'setup', length: 'full' };
      if (this.s.phase === 'grading') this.s.phase = 'run';
      this.render();
    }

    save() { store.set(this.key, this.s); }

    render() {
      clearInterval(this.timer);
      const p = this.s.phase;
      this.box.replaceChildren(p === 'setup' ? this.setupView() : p === 'report' ? this.reportView() : this.runView());
      if (p === 'run') this.tick();
    }

    error(msg) {
      const el = this.box.querySelector('.alert, #exam-error');
      el.textContent = msg;
      focus(el);
    }

    // setupView is the hub's own form (length and start button), kept from the page.
    setupView() {
      const el = h('div', {}, ...this.setup);
      const err = el.querySelector('#exam-error');
      if (err) err.textContent = '';
      return el;
    }

    async start(length) {
      const k = apiKey();
      const r = await call(`/api/v1/exam?certification=${this.cert}&length=${length}`, k ? { headers: { 'x-api-key': k } } : {});
      if (!r.ok) {
        return this.error(r.network ? 'We could not reach the server to draw the exam. Check your connection and try again.'
          : r.status === 401 ? 'Your API key was not accepted. Check it under "Practise with your API key", or remove it to take the free-sample exam.'
            : r.body.error || `The exam could not be drawn (error ${r.status}).`);
      }
      const m = r.body.meta;
      this.s = {
        phase: 'run', length, id: r.body.id, i: 0, ans: {}, flag: {}, minutes: m.minutes, note: m.note || '', started: Date.now(), deadline: Date.now() + m.minutes * 60000,
        qs: r.body.questions.map((q) => ({ id: q.id, stem: q.question, options: LETTERS.map((l) => q.options[l] || ''), domain: q.domain, difficulty: q.difficulty })),
      };
      this.save();
      this.render();
      announce(`Mock exam started: ${plural(this.s.qs.length, 'question')} in ${plural(m.minutes, 'minute')}.`);
      focus(this.box.querySelector('.q-card h3'));
    }

    runView() {
      const { qs, ans, flag } = this.s;
      const i = Math.min(this.s.i, qs.length - 1);
      const q = qs[i];
      const answered = qs.filter((x) => ans[x.id]).length;
      const flagged = qs.filter((x) => flag[x.id]).length;
      const card = h('article', { class: 'q-card', 'aria-labelledby': 'exq-h' },
        h('h3', { id: 'exq-h', tabindex: '-1', text: `Question ${i + 1} of ${qs.length}` }),
        flag[q.id] && h('p', { class: 'q-meta' }, h('span', { class: 'tag flagged', text: 'Flagged for review' })),
        h('p', { class: 'stem', text: q.stem }),
        h('ul', { class: 'choices' }, q.options.map((text, k) => h('li', {}, h('button', {
          type: 'button', class: ans[q.id] === LETTERS[k] ? 'picked' : null, 'aria-pressed': String(ans[q.id] === LETTERS[k]), 'data-letter': LETTERS[k],
          onclick: () => { ans[q.id] = LETTERS[k]; this.save(); this.refresh(`[data-letter="${LETTERS[k]}"]`); announce(`Answer ${LETTERS[k]} chosen.`); },
        }, h('span', { class: 'letter', text: LETTERS[k] }), h('span', { class: 'txt', text }))))),
        h('div', { class: 'toolbar' }, h('button', { type: 'button', 'aria-pressed': String(!!flag[q.id]), 'data-flag': '', text: flag[q.id] ? 'Flagged for review' : 'Flag for review',
          onclick: () => { flag[q.id] = !flag[q.id]; this.save(); this.refresh('[data-flag]'); announce(flag[q.id] ? 'Flagged for review.' : 'Flag removed.'); } })));
      const confirm = this.s.confirm && h('div', { class: 'notice', role: 'alert' },
        h('p', { text: `${plural(qs.length - answered, 'question')} unanswered${flagged ? `, ${flagged} flagged for review` : ''}. Unanswered questions count as wrong. Submit anyway?` }),
        h('div', { class: 'toolbar' }, btn('Submit now', () => this.submit(false), 'primary'), btn('Keep working', () => { this.s.confirm = false; this.save(); this.render(); })));
      return h('div', { class: 'pr-run' },
        h('div', { class: 'pr-bar' },
          h('p', { class: 'progress', text: `Question ${i + 1} of ${qs.length} · ${answered} answered · ${flagged} flagged` }),
          h('p', { class: 'timer', role: 'timer', 'aria-atomic': 'true' }, 'Time left: ', h('span', { text: clock((this.s.deadline - Date.now()) / 1000) }))),
        this.s.note && h('p', { class: 'hint', text: 'Note: ' + this.s.note + '.' }),
        card,
        h('div', { class: 'toolbar' },
          h('button', { type: 'button', text: 'Previous', disabled: i === 0, onclick: () => this.go(i - 1) }),
          h('button', { type: 'button', text: 'Next', disabled: i === qs.length - 1, onclick: () => this.go(i + 1) })),
        h('nav', { class: 'qnav', 'aria-label': 'Exam questions' }, h('ol', {}, qs.map((x, k) => h('li', {}, h('button', {
          type: 'button', class: [ans[x.id] ? 'done' : '', flag[x.id] ? 'flag' : ''].join(' ').trim() || null, 'aria-current': k === i ? 'step' : null,
          'aria-label': `Question ${k + 1}: ${ans[x.id] ? 'answered' : 'not answered'}${flag[x.id] ? ', flagged' : ''}`, text: k + 1 + (flag[x.id] ? ' ⚑' : ''), onclick: () => this.go(k),
        }))))),
        h('div', { class: 'alert', role: 'alert' }),
        confirm || h('div', { class: 'toolbar' }, btn('Submit the exam', () => this.submit(false, true), 'primary')));
    }

    refresh(selector) {
      const y = scrollY;
      this.render();
      const el = this.box.querySelector('.q-card ' + selector);
      if (el) el.focus({ preventScroll: true });
      scrollTo(0, y);
    }

    go(i) {
      this.s.i = Math.max(0, Math.min(i, this.s.qs.length - 1));
      this.save();
      this.render();
      focus(this.box.querySelector('.q-card h3'));
    }

    tick() {
      const step = () => {
        const left = (this.s.deadline - Date.now()) / 1000;
        if (left <= 0) return this.submit(true);
        const span = this.box.querySelector('.timer span');
        if (span) { span.textContent = clock(left); span.parentNode.classList.toggle('low', left <= 60); }
      };
      this.timer = setInterval(step, 1000);
      step();
    }

    async submit(timeUp, ask) {
      const unanswered = this.s.qs.some((q) => !this.s.ans[q.id]);
      if (ask && unanswered) {
        this.s.confirm = true;
        this.save();
        this.render();
        return focus(this.box.querySelector('.notice'));
      }
      clearInterval(this.timer);
      this.s.phase = 'grading';
      this.save();
      const r = await post(`/api/v1/exam/${this.s.id}/answers`, { answers: this.s.ans });
      if (!r.ok) {
        this.s.phase = 'run';
        this.s.confirm = false;
        if (r.status === 404 || r.status === 409) { this.s = { phase: 'setup', length: this.s.length }; store.del(this.key); this.render(); }
        else { this.save(); this.render(); }
        return this.error(r.network ? 'We could not reach the server to grade the exam; your answers are kept. Try submitting again.'
          : r.body.error || `The exam could not be graded (error ${r.status}).`);
      }
      for (const q of r.body.questions) noteResult(this.cert, q.domain, q.correct, q.objective);
      this.s = { phase: 'report', length: this.s.length, report: r.body, flag: this.s.flag, timeUp, used: Math.round((Date.now() - this.s.started) / 1000), minutes: this.s.minutes };
      this.save();
      this.render();
      const sc = r.body.score;
      announce((timeUp ? 'Time is up: your answers were submitted. ' : '') + `You scored ${sc.correct} of ${sc.total}.`);
      focus(this.box.querySelector('h3'));
    }

    reportView() {
      const rep = this.s.report;
      const sc = rep.score;
      const review = h('div', { class: 'pr-review' });
      const show = (list, title) => () => {
        review.replaceChildren(h('h3', { text: `${title} (${list.length})` }), ...(list.length ? list.map((q) => this.reviewCard(q, rep.questions.indexOf(q))) : [h('p', { text: 'None.' })]));
        focus(review.firstChild);
      };
      const wrong = rep.questions.filter((q) => q.chosen && !q.correct);
      const skipped = rep.questions.filter((q) => !q.chosen);
      const flagged = rep.questions.filter((q) => this.s.flag && this.s.flag[q.id]);
      const table = (rows, what) => h('div', { class: 'scroll', role: 'region', tabindex: '0', 'aria-label': 'Score by ' + what }, h('table', {}, h('caption', { text: 'Score by ' + what }),
        h('thead', {}, h('tr', {}, [what[0].toUpperCase() + what.slice(1), 'Correct', 'Total', 'Score'].map((c, k) => h('th', { scope: 'col', class: k ? 'num' : null, text: c })))),
        h('tbody', {}, rows.map((t) => h('tr', {}, h('th', { scope: 'row', text: t.name }), ...[t.correct, t.total, t.percent + '%'].map((v) => h('td', { class: 'num', text: String(v) })))))));
      return h('div', { class: 'pr-results' },
        h('h3', { text: 'Your mock exam score' }),
        h('p', { class: 'score' }, h('strong', { text: `${sc.correct} of ${sc.total} correct (${sc.percent}%)` })),
        h('p', { text: `${rep.answered} answered, ${skipped.length} unanswered.` + (this.s.timeUp ? ` The ${this.s.minutes} minutes ran out: your answers were submitted automatically.` : ` Time used: ${clock(this.s.used)}.`) }),
        table(rep.by_domain, 'domain'), table(rep.by_difficulty, 'difficulty'),
        h('div', { class: 'toolbar' },
          btn(`Review wrong answers (${wrong.length})`, show(wrong, 'Wrong answers')),
          skipped.length > 0 && btn(`Review unanswered (${skipped.length})`, show(skipped, 'Unanswered questions')),
          flagged.length > 0 && btn(`Review flagged (${flagged.length})`, show(flagged, 'Flagged questions')),
          btn(`Review all answers (${rep.questions.length})`, show(rep.questions, 'All answers')),
          btn('Start a new mock exam', () => { this.s = { phase: 'setup', length: this.s.length }; store.del(this.key); this.render(); focus(this.box.querySelector('h3')); }, 'primary')),
        review);
    }

    reviewCard(q, i) {
      const opts = LETTERS.map((l) => {
        const cls = l === q.correct_answer ? 'correct' : l === q.chosen ? 'wrong' : '';
        const mark = l === q.correct_answer ? (l === q.chosen ? '✓ Your answer: correct' : '✓ Correct answer') : l === q.chosen ? '✗ Your answer' : '';
        return h('li', { class: 'opt ' + cls }, h('span', { class: 'letter', text: l }), h('span', { class: 'txt' }, q.options[l], mark && h('span', { class: 'mark', text: mark })));
      });
      return h('article', { class: 'q-card', 'aria-label': `Question ${i + 1}` },
        h('h4', { text: `Question ${i + 1} of ${this.s.report.questions.length}` }),
        h('p', { class: 'q-meta' }, h('span', { class: 'tag', text: q.domain }), ' ', h('span', { class: 'tag', text: q.difficulty })),
        h('p', { class: 'stem', text: q.question }),
        h('ul', { class: 'choices' }, opts),
        h('div', { class: 'feedback ' + (!q.chosen ? 'skip' : q.correct ? 'ok' : 'bad') }, h('p', {},
          h('strong', { text: !q.chosen ? `Not answered. The answer is ${q.correct_answer}.` : q.correct ? `Correct: ${q.correct_answer}.` : `You chose ${q.chosen}; the answer is ${q.correct_answer}.` }), ' ' + q.explanation)),
        reportControl(q.id));
    }
  }

  window.certbankHub.MockExam = MockExam;
})();
