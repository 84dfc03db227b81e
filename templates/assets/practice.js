/* certbank study hub: practise the free sample, or questions drawn with your
   API key. Plain JavaScript, no dependencies, no requests to other hosts.
   Without it the hub stays a readable list with <details> answers. */
(() => {
  'use strict';
  const LETTERS = ['A', 'B', 'C', 'D'];
  const $ = (id) => document.getElementById(id);
  const live = $('announcer');
  let uid = 0;

  // h('p', {class: 'x', text: 'hi', onclick: f}, ...children) builds an element.
  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const c of kids.flat()) if (c != null && c !== false) el.append(c);
    return el;
  }
  const btn = (text, onclick, cls) => h('button', { type: 'button', class: cls, text, onclick });

  // announce speaks msg through the page's polite live region.
  function announce(msg) {
    live.textContent = '';
    setTimeout(() => { live.textContent = msg; }, 60);
  }

  function focus(el) {
    if (!el) return;
    if (!el.matches('a,button,input,select,[tabindex]')) el.tabIndex = -1;
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: 'nearest', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
  }

  // Storage that never throws (private modes, full or disabled storage).
  const store = {
    area: (session) => { try { return session ? sessionStorage : localStorage; } catch { return null; } },
    get(key, session) { try { return JSON.parse(this.area(session).getItem(key)); } catch { return null; } },
    set(key, v, session) { try { this.area(session).setItem(key, JSON.stringify(v)); } catch { /* not kept */ } },
    del(key) { for (const s of [0, 1]) try { this.area(s).removeItem(key); } catch { /* nothing kept */ } },
  };

  const pct = (n, d) => (d ? Math.round((100 * n) / d) : 0);
  const clock = (s) => { s = Math.max(0, Math.ceil(s)); return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0'); };
  const minutes = (s) => { const m = Math.floor(s / 60), r = s % 60; return [m && m + ' min', (r || !m) && r + ' s'].filter(Boolean).join(' '); };
  const plural = (n, one) => n + ' ' + one + (n === 1 ? '' : 's');

  // The learner's API key, kept by "practise with your API key" in this tab
  // (sessionStorage) or, if they ticked "remember", this browser.
  const KEY = 'certbank:apikey';
  const apiKey = () => store.get(KEY, true) || store.get(KEY);

  // call fetches a JSON endpoint of this site and never throws.
  async function call(path, init = {}) {
    try {
      const res = await fetch(path, { ...init, headers: { accept: 'application/json', ...init.headers }, cache: 'no-store' });
      const body = res.status === 204 ? {} : await res.json().catch(() => ({}));
      return { ok: res.ok, status: res.status, body: body || {}, retry: +res.headers.get('Retry-After') || 0 };
    } catch {
      return { network: true, body: {} };
    }
  }
  const post = (path, body, headers) => call(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  // Results by domain and by objective, kept in this browser for the
  // weak-area drill: {domain: [correct, answered]} per certification, and
  // {"domain\u0000objective": [correct, answered]} under RESULTS + cert + ':objectives'.
  const RESULTS = 'certbank:results:';
  function tallyInto(key, name, ok) {
    const r = store.get(key) || {};
    const d = r[name] || [0, 0];
    r[name] = [d[0] + (ok ? 1 : 0), d[1] + 1];
    store.set(key, r);
  }
  function noteResult(cert, domain, ok, objective) {
    if (!cert || !domain) return;
    tallyInto(RESULTS + cert, domain, ok);
    if (objective) tallyInto(RESULTS + cert + ':objectives', domain + '\u0000' + objective, ok);
  }
  function lowest(r, pick = () => true) {
    let w = null;
    for (const [k, [ok, n]] of Object.entries(r || {})) if (n && pick(k) && (!w || ok / n < w.ok / w.n)) w = { k, ok, n };
    return w;
  }
  function weakest(cert) {
    const d = lowest(store.get(RESULTS + cert));
    if (!d) return null;
    const o = lowest(store.get(RESULTS + cert + ':objectives'), (k) => k.startsWith(d.k + '\u0000'));
    return { domain: d.k, ok: d.ok, n: d.n, objective: o && { code: o.k.split('\u0000')[1], ok: o.ok, n: o.n } };
  }

  // reportControl lets a learner tell the operators that question id looks
  // wrong: POST /api/v1/reports, no account.
  const REASONS = [['wrong_key', 'The answer marked correct is wrong'], ['ambiguous', 'More than one answer fits'], ['outdated', 'Outdated for the current exam'], ['typo', 'Typo or unclear wording'], ['other', 'Something else']];
  function reportControl(id) {
    const f = 'rp' + ++uid;
    const status = h('p', { role: 'status', class: 'hint' });
    const form = h('form', { class: 'stack', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: f + 'r', text: 'What is wrong?' }),
        h('select', { id: f + 'r' }, REASONS.map(([v, t]) => h('option', { value: v, text: t })))),
      h('div', { class: 'field' }, h('label', { for: f + 't', text: 'Details (optional)' }), h('textarea', { id: f + 't', maxlength: '1000', rows: '3' })),
      h('div', { class: 'toolbar' }, h('button', { type: 'submit', text: 'Send report' })), status);
    form.onsubmit = async (e) => {
      e.preventDefault();
      status.textContent = 'Sending…';
      const r = await post('/api/v1/reports', { question_id: id, reason: $(f + 'r').value, text: $(f + 't').value.trim() });
      status.textContent = r.ok ? 'Thank you: your report was received and will be reviewed.'
        : r.status === 429 ? 'You have sent many reports in the last hour; please try again later.'
          : `The report could not be sent${r.body.error ? ': ' + r.body.error : ''}.`;
      if (r.ok) form.querySelector('button').disabled = true;
    };
    return h('details', { class: 'report' }, h('summary', { text: 'Report this question' }), form);
  }

  /* Quiz is one practice session over questions {id, stem, options[4],
     answer, explanation, domain, difficulty}, in a box element. Its state is
     saved under opts.key after every change and restored when the page loads. */
  class Quiz {
    constructor(box, opts) {
      Object.assign(this, { box, o: opts, qs: opts.questions, n: ++uid, timer: 0, warned: new Set() });
      const saved = store.get(opts.key);
      this.s = saved && saved.v === 1 && saved.ids === this.ids() ? saved : this.fresh();
      this.render();
      this.ready = true;
    }

    ids() { return this.qs.map((q) => q.id).join(); }

    fresh() { return { v: 1, ids: this.ids(), phase: 'setup', mode: 'one', timed: false, i: 0, ans: {}, flag: {}, deadline: 0 }; }

    save() { store.set(this.o.key, this.o.keepQuestions ? { ...this.s, qs: this.qs } : this.s); }

    reset() {
      store.del(this.o.key);
      this.s = this.fresh();
      this.render();
      announce('Progress reset.');
      focus(this.box.querySelector('h3'));
    }

    tally() {
      const t = { answered: 0, correct: 0, flagged: 0, total: this.qs.length };
      for (const q of this.qs) {
        const a = this.s.ans[q.id];
        if (a) { t.answered++; if (a === q.answer) t.correct++; }
        if (this.s.flag[q.id]) t.flagged++;
      }
      return t;
    }

    render() {
      clearInterval(this.timer);
      const p = this.s.phase;
      this.box.replaceChildren(p === 'setup' ? this.setupView() : p === 'run' ? this.runView() : this.resultsView());
      if (p === 'run' && this.s.deadline) this.tick();
    }

    setupView() {
      const id = 'pq' + this.n;
      const total = this.qs.length * this.o.seconds;
      const view = h('div', { class: 'pr-setup' },
        h('h3', { text: this.o.title }),
        h('fieldset', {}, h('legend', { text: 'How do you want to practise?' }),
          [['one', 'One question at a time'], ['all', 'The whole set on one page']].map(([v, label]) => h('div', { class: 'check' },
            h('input', { type: 'radio', name: id + 'm', id: id + v, value: v, checked: this.s.mode === v }),
            h('label', { for: id + v, text: label })))),
        total > 0 && h('div', { class: 'check' },
          h('input', { type: 'checkbox', id: id + 't', checked: this.s.timed }),
          h('label', { for: id + 't', text: `Timed exam simulation: ${plural(this.qs.length, 'question')} in ${minutes(total)}, the real exam's pace of ${this.o.seconds} s a question. Your answers are submitted when the time runs out.` })),
        h('div', { class: 'toolbar' }, btn('Start practice', () => {
          const timed = $(id + 't');
          Object.assign(this.s, { phase: 'run', i: 0, started: Date.now(), mode: $(id + 'all').checked ? 'all' : 'one', timed: !!(timed && timed.checked) });
          this.s.deadline = this.s.timed ? Date.now() + total * 1000 : 0;
          this.save();
          this.render();
          announce(this.s.timed ? `Started. You have ${minutes(total)}.` : 'Started.');
          focus(this.box.querySelector('.q-card h3'));
        }, 'primary')));
      return view;
    }

    runView() {
      const t = this.tally();
      const one = this.s.mode === 'one';
      const i = Math.min(this.s.i, t.total - 1);
      const wrap = h('div', { class: 'pr-run' }, h('div', { class: 'pr-bar' },
        h('p', { class: 'progress', text: `${one ? `Question ${i + 1} of ${t.total}` : plural(t.total, 'question')} · ${t.answered} answered · ${t.correct} correct · ${t.flagged} flagged` }),
        this.s.deadline ? h('p', { class: 'timer', role: 'timer', 'aria-atomic': 'true' }, 'Time left: ', h('span', { text: clock((this.s.deadline - Date.now()) / 1000) })) : null));
      const finish = (cls) => btn('Finish and see my score', () => this.finish(false), cls);
      const resetBtn = btn('Reset progress', () => this.reset());
      if (!one) {
        wrap.append(...this.qs.map((q, k) => this.card(q, k)), h('div', { class: 'toolbar' }, finish('primary'), resetBtn));
        return wrap;
      }
      const q = this.qs[i];
      const last = i === t.total - 1;
      const done = !!this.s.ans[q.id];
      wrap.append(this.card(q, i),
        h('div', { class: 'toolbar' },
          h('button', { type: 'button', text: 'Previous', disabled: i === 0, onclick: () => this.go(i - 1) }),
          done ? (last ? finish('primary') : btn('Next question', () => this.go(i + 1), 'primary')) : btn('Skip', () => this.skip(i))),
        h('nav', { class: 'qnav', 'aria-label': 'Questions' }, h('ol', {}, this.qs.map((x, k) => {
          const a = this.s.ans[x.id];
          const f = this.s.flag[x.id];
          return h('li', {}, h('button', {
            type: 'button', class: [a ? (a === x.answer ? 'done' : 'miss') : '', f ? 'flag' : ''].join(' ').trim() || null,
            'aria-current': k === i ? 'step' : null, onclick: () => this.go(k),
            'aria-label': `Question ${k + 1}: ${a ? (a === x.answer ? 'correct' : 'wrong') : 'not answered'}${f ? ', flagged' : ''}`,
            text: k + 1 + (f ? ' ⚑' : ''),
          }));
        }))),
        h('div', { class: 'toolbar' }, !(done && last) && finish(t.answered === t.total ? 'primary' : null), resetBtn));
      return wrap;
    }

    // card renders question q (number i); review makes a read-only card.
    card(q, i, review) {
      const id = `pq${this.n}-${i}`;
      const chosen = this.s.ans[q.id];
      const flagged = !!this.s.flag[q.id];
      const shown = chosen || review;
      const opts = q.options.map((text, k) => {
        const l = LETTERS[k];
        const cls = shown ? (l === q.answer ? 'correct' : l === chosen ? 'wrong' : null) : null;
        const mark = !shown ? '' : l === q.answer ? (l === chosen ? '✓ Your answer: correct' : '✓ Correct answer') : l === chosen ? '✗ Your answer' : '';
        const inner = [h('span', { class: 'letter', text: l }), h('span', { class: 'txt' }, text, mark && h('span', { class: 'mark', text: mark }))];
        return review ? h('li', { class: 'opt ' + (cls || '') }, inner)
          : h('li', {}, h('button', { type: 'button', class: cls, 'data-letter': l, 'aria-disabled': chosen ? 'true' : null, onclick: () => this.answer(q, l, id) }, inner));
      });
      const card = h('article', { class: 'q-card', id, 'aria-labelledby': id + 'h' },
        h(review ? 'h4' : 'h3', { id: id + 'h', tabindex: '-1', text: `Question ${i + 1} of ${this.qs.length}` }),
        h('p', { class: 'q-meta' }, h('span', { class: 'tag', text: q.domain }), ' ', h('span', { class: 'tag', text: q.difficulty }),
          flagged && [' ', h('span', { class: 'tag flagged', text: 'Flagged for review' })]),
        h('p', { class: 'stem', text: q.stem }),
        h('ul', { class: 'choices' }, opts));
      if (shown) {
        const ok = chosen === q.answer;
        card.append(h('div', { class: 'feedback ' + (!chosen ? 'skip' : ok ? 'ok' : 'bad') }, h('p', {},
          h('strong', { text: !chosen ? `Not answered. The answer is ${q.answer}.` : ok ? `Correct: ${q.answer}.` : `Not quite: you chose ${chosen}, the answer is ${q.answer}.` }),
          ' ' + q.explanation)), reportControl(q.id));
      }
      if (!review) {
        card.append(h('div', { class: 'toolbar' }, h('button', {
          type: 'button', 'aria-pressed': String(flagged), 'data-flag': '', onclick: () => this.toggleFlag(q, id),
          text: flagged ? 'Flagged for review' : 'Flag for review',
        })));
      }
      return card;
    }

    answer(q, letter, cardId) {
      if (this.s.phase !== 'run' || this.s.ans[q.id]) return;
      this.s.ans[q.id] = letter;
      this.save();
      noteResult(this.o.cert, q.domain, letter === q.answer, q.objective);
      post('/api/v1/answers', { question_id: q.id, answer: letter }); // anonymous, for the item statistics
      this.refresh(cardId, `[data-letter="${letter}"]`);
      announce((letter === q.answer ? `Correct: ${q.answer}. ` : `Not quite: the answer is ${q.answer}. `) + q.explanation);
    }

    toggleFlag(q, cardId) {
      this.s.flag[q.id] = !this.s.flag[q.id];
      this.save();
      this.refresh(cardId, '[data-flag]');
      announce(this.s.flag[q.id] ? 'Flagged for review.' : 'Flag removed.');
    }

    // refresh re-renders the session, keeping focus and scroll where they were.
    refresh(cardId, selector) {
      const y = scrollY;
      this.render();
      const el = $(cardId) && $(cardId).querySelector(selector);
      if (el) el.focus({ preventScroll: true });
      scrollTo(0, y);
    }

    go(i) {
      this.s.i = Math.max(0, Math.min(i, this.qs.length - 1));
      this.save();
      this.render();
      focus(this.box.querySelector('.q-card h3'));
    }

    // skip moves on to the next unanswered question.
    skip(i) {
      for (let k = 1; k < this.qs.length; k++) {
        const j = (i + k) % this.qs.length;
        if (!this.s.ans[this.qs[j].id]) { announce('Skipped.'); return this.go(j); }
      }
      announce('This is the only unanswered question: answer it, or finish to see your score.');
    }

    tick() {
      const step = () => {
        const left = (this.s.deadline - Date.now()) / 1000;
        if (left <= 0) return this.finish(true);
        const span = this.box.querySelector('.timer span');
        if (span) { span.textContent = clock(left); span.parentNode.classList.toggle('low', left <= 60); }
        for (const w of [300, 60, 10]) {
          if (left <= w && left > w - 3 && !this.warned.has(w)) { this.warned.add(w); announce(w < 60 ? w + ' seconds left.' : plural(w / 60, 'minute') + ' left.'); }
        }
      };
      this.timer = setInterval(step, 1000);
      step();
    }

    finish(timeUp) {
      clearInterval(this.timer);
      if (this.s.phase !== 'run') return;
      Object.assign(this.s, { phase: 'done', timeUp, used: Math.round((Date.now() - this.s.started) / 1000) });
      this.save();
      this.render();
      if (!this.ready) return; // the time ran out while the page was closed
      const t = this.tally();
      announce((timeUp ? 'Time is up: your answers were submitted. ' : '') + `You scored ${t.correct} of ${t.total}.`);
      focus(this.box.querySelector('.pr-results h3'));
    }

    resultsView() {
      const t = this.tally();
      const pick = (f) => this.qs.filter(f);
      const wrong = pick((q) => this.s.ans[q.id] && this.s.ans[q.id] !== q.answer);
      const skipped = pick((q) => !this.s.ans[q.id]);
      const flagged = pick((q) => this.s.flag[q.id]);
      const review = h('div', { class: 'pr-review' });
      const show = (list, title) => () => {
        review.replaceChildren(h('h3', { text: `${title} (${list.length})` }),
          ...(list.length ? list.map((q) => this.card(q, this.qs.indexOf(q), true)) : [h('p', { text: 'None.' })]));
        focus(review.firstChild);
      };
      const total = this.qs.length * this.o.seconds;
      const time = !this.s.timed ? '' : this.s.timeUp ? ` The ${minutes(total)} ran out: your answers were submitted automatically.` : ` Time used: ${clock(Math.min(this.s.used, total))} of ${clock(total)}.`;
      return h('div', { class: 'pr-results' },
        h('h3', { text: 'Your score' }),
        h('p', { class: 'score' }, h('strong', { text: `${t.correct} of ${t.total} correct (${pct(t.correct, t.total)}%)` })),
        h('p', { text: `${t.answered} answered, ${skipped.length} skipped, ${t.flagged} flagged.` + time }),
        this.table('domain', 'Domain', [...new Set(this.qs.map((q) => q.domain))]),
        this.table('difficulty', 'Difficulty', ['easy', 'medium', 'hard'].filter((d) => this.qs.some((q) => q.difficulty === d))),
        h('div', { class: 'toolbar' },
          btn(`Review wrong answers (${wrong.length})`, show(wrong, 'Wrong answers')),
          skipped.length > 0 && btn(`Review skipped (${skipped.length})`, show(skipped, 'Skipped questions')),
          flagged.length > 0 && btn(`Review flagged (${flagged.length})`, show(flagged, 'Flagged questions')),
          btn('Start again (reset progress)', () => this.reset(), 'primary')),
        review);
    }

    table(field, what, keys) {
      const cell = (text, tag = 'td') => h(tag, { class: tag === 'td' ? 'num' : null, scope: tag === 'th' ? 'row' : null, text: String(text) });
      const id = `pq${this.n}-${field}`;
      return h('div', { class: 'scroll', role: 'region', tabindex: '0', 'aria-labelledby': id }, h('table', {}, h('caption', { id, text: 'Score by ' + field }),
        h('thead', {}, h('tr', {}, [what, 'Correct', 'Total', 'Score'].map((c, k) => h('th', { scope: 'col', class: k ? 'num' : null, text: c })))),
        h('tbody', {}, keys.map((key) => {
          const qs = this.qs.filter((q) => q[field] === key);
          const ok = qs.filter((q) => this.s.ans[q.id] === q.answer).length;
          return h('tr', {}, cell(key, 'th'), cell(ok), cell(qs.length), cell(pct(ok, qs.length) + '%'));
        }))));
    }
  }

  // The mock exam's code (exam.js) loads only when a learner starts an exam
  // or has one in this browser, so a hub's first load stays light.
  const hub = { h, btn, $, LETTERS, announce, focus, store, call, post, noteResult, reportControl, clock, plural, apiKey };
  window.certbankHub = hub;
  const examSec = $('mock-exam');
  if (examSec) {
    examSec.hidden = false;
    let exam;
    const open = () => exam || (exam = new Promise((ok, fail) => {
      const el = h('script', { src: examSec.dataset.src });
      el.onload = () => ok(new hub.MockExam($('exam-box'), examSec));
      el.onerror = fail;
      document.head.append(el);
    }).catch(() => { exam = null; $('exam-error').textContent = 'The mock exam could not be loaded. Check your connection, then try again.'; }));
    $('exam-start').onclick = async () => { const m = await open(); if (m) m.start($('exam-half').checked ? 'half' : 'full'); };
    if (store.get('certbank:exam:' + examSec.dataset.cert)) open();
  }

  // --- the free sample, read from the static list (no second download) -----
  const box = $('practice');
  const list = $('sample-list');
  if (box && list) {
    const text = (el) => (el ? el.textContent.trim() : '');
    const questions = [...list.querySelectorAll('li.question')].map((li) => {
      const tags = li.querySelectorAll('.q-meta .tag');
      const key = li.querySelector('details strong');
      return {
        id: li.id.slice(2), domain: text(tags[0]), difficulty: text(tags[1]), objective: li.dataset.objective || '',
        answer: (/Answer: ([A-D])/.exec(text(key)) || [])[1], stem: text(li.querySelector('.stem')),
        options: [...li.querySelectorAll('.options > li')].map(text), explanation: text(key && key.nextElementSibling),
      };
    }).filter((q) => q.answer && q.options.length === 4);
    if (questions.length) {
      $('practice-intro').textContent = `${plural(questions.length, 'question')} from every domain and difficulty. Answer one at a time or all at once, read the explanation after each answer, and see your score by domain at the end. Your progress is kept in this browser.`;
      list.hidden = true;
      const label = () => (list.hidden ? 'Show the list of questions with answers' : 'Hide the list of questions');
      const toggle = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'sample-list', text: label() });
      toggle.onclick = () => { list.hidden = !list.hidden; toggle.setAttribute('aria-expanded', !list.hidden); toggle.textContent = label(); };
      list.before(h('p', {}, toggle));
      new Quiz(box, { key: 'certbank:practice:' + box.dataset.cert, cert: box.dataset.cert, questions, seconds: +box.dataset.seconds || 0, title: 'Practise the free sample' });
      box.hidden = false;
    }
  }

  // --- practise with your API key (set up in a later task, to keep the
  // page's first tasks short) ------------------------------------------------
  const api = $('api-practice');
  if (api) setTimeout(() => apiPractice(api), 0);

  function apiPractice(api) {
    const QKEY = 'certbank:apipractice:' + api.dataset.cert;
    const err = $('api-error');
    const keyForm = $('key-form');
    const remember = $('api-remember');
    const quizBox = $('api-quiz');
    api.hidden = false;

    const getKey = apiKey;
    function setKey(k) {
      store.del(KEY);
      store.set(KEY, k, !remember.checked); // sessionStorage unless "remember" is ticked
      showKey();
    }
    function showKey() {
      const k = getKey();
      $('key-panel').hidden = !k;
      keyForm.hidden = !!k;
      $('signup').hidden = !!k && $('signup-result').hidden; // no sign-up offer once there is a key
      if (!k) return;
      $('key-prefix').textContent = k.slice(0, 12) + '…';
      $('key-where').textContent = store.get(KEY) ? 'this browser until you forget it' : 'this tab only, until you close it';
    }

    // say shows a status message, or an error (a list of sentences or nodes).
    function say(msg, isError) {
      err.replaceChildren();
      $('api-status').textContent = isError ? '' : msg || '';
      if (isError) {
        err.append(...msg.map((m) => (typeof m === 'string' ? h('p', { text: m }) : m)));
        focus(err);
      }
    }
    const day = (d) => new Date(d).toLocaleDateString(undefined, { dateStyle: 'long', timeZone: 'UTC' });

    // call fetches a JSON endpoint of this site and never throws; keyed sends the key.
    const keyed = (path) => call(path, { headers: { 'x-api-key': getKey() } });
    // explain turns a failed call into plain words and what to do next.
    function explain(r, what) {
      const code = r.body.code;
      if (r.network) return [`We could not reach ${location.host} to ${what}. Check your internet connection, then try again.`];
      if (r.status === 401) {
        forget(); // a key the server refuses is of no use: ask for another
        return ['This API key was not accepted: it may be mistyped, cut short or revoked.',
          h('p', {}, 'Paste the whole key (it starts with cb_live_), or get a new free key with ',
            h('a', { href: '#signup', text: 'the sign-up form', onclick: () => { $('signup').open = true; } }),
            `. Lost your key? Support at ${api.dataset.contact} can replace it.`)];
      }
      if (code === 'MONTHLY_LIMIT_EXCEEDED') {
        return ["You have used all of this month's requests for your tier.",
          h('p', {}, `Your quota resets on ${r.retry ? day(Date.now() + r.retry * 1000) : 'the first day of next month'} (UTC). Until then, practise the free sample above, or `,
            h('a', { href: '/developers/#api-key', text: 'upgrade to a tier with more requests' }), '.')];
      }
      if (r.status === 429) {
        const s = r.retry || 60;
        return [`You have reached your key's limit of requests per minute. Wait ${plural(s, 'second')} (until ${new Date(Date.now() + s * 1000).toLocaleTimeString()}), then try again.`,
          'Meanwhile you can keep practising the questions you already have.'];
      }
      if (r.status >= 500) return [`The server could not ${what} just now (error ${r.status}). Try again in a minute.`];
      return [`Could not ${what}: ${r.body.error || 'error ' + r.status}.`];
    }

    async function usage() {
      const r = await keyed('/api/v1/usage');
      if (!r.ok) { say(explain(r, 'check your quota'), true); return r; }
      const { tier = {}, requests: { minute, month } = {}, unique_questions: uq } = r.body;
      const row = (dt, dd) => h('div', {}, h('dt', { text: dt }), h('dd', { text: dd }));
      $('quota-list').replaceChildren(...[
        row('Tier', (tier.title || tier.name || '') + (tier.until ? ' until ' + day(tier.until) : '')),
        minute && row('Requests this minute', `${minute.remaining} of ${minute.limit} left`),
        month && row('Requests this month', `${month.remaining} of ${month.limit} left, resets ${day(month.resets_at)}`),
        uq && row('Different questions', `${uq.remaining} of ${uq.limit} left` + (uq.remaining ? '' : ': new draws repeat questions you have seen')),
      ].filter(Boolean));
      $('quota').hidden = false;
      return r;
    }

    function startApiQuiz(qs) {
      new Quiz(quizBox, { key: QKEY, cert: api.dataset.cert, questions: qs, keepQuestions: true, seconds: +api.dataset.seconds || 0, title: `Practise your ${plural(qs.length, 'drawn question')}` }).save();
    }

    async function draw(domain, note = '') {
      say('Drawing questions…');
      const r = await keyed(`/api/v1/questions?certification=${api.dataset.cert}&limit=${api.dataset.limit}&include_answer=true` + (domain ? '&domain=' + encodeURIComponent(domain) : ''));
      if (r.status !== 401) usage();
      if (!r.ok) return say(explain(r, 'draw questions'), true);
      const qs = (r.body.data || []).filter((q) => q.options && q.correct_answer).map((q) => ({
        id: q.id, stem: q.question, options: LETTERS.map((l) => q.options[l] || ''), answer: q.correct_answer,
        explanation: q.explanation || '', domain: q.domain || '', difficulty: q.difficulty || '', objective: q.objective || '',
      }));
      if (!qs.length) return say(['No questions came back for this exam. Try again later.'], true);
      store.del(QKEY);
      startApiQuiz(qs);
      say(`${plural(qs.length, 'new question')} drawn` + (domain ? ` from ${domain}, your weakest domain so far.` + note : '.'));
      focus(quizBox.querySelector('h3'));
    }

    keyForm.onsubmit = (e) => {
      e.preventDefault();
      const k = $('api-key').value.trim();
      if (!k) return say(['Paste your API key first. No key yet? Get one free with the sign-up form below.'], true);
      setKey(k);
      $('api-key').value = '';
      draw();
    };
    $('api-draw').onclick = () => draw();
    $('api-weak').onclick = () => {
      const w = weakest(api.dataset.cert);
      if (!w) return say(['Answer some practice or mock exam questions first: the drill draws from the domain where you scored lowest.'], true);
      draw(w.domain, ` You have ${w.ok} of ${w.n} right there (${pct(w.ok, w.n)}%)` + (w.objective ? `; weakest objective there: ${w.objective.code}, ${w.objective.ok} of ${w.objective.n}.` : '.'));
    };
    $('api-usage').onclick = async () => { say('Checking your quota…'); if ((await usage()).ok) { say('Quota updated.'); focus($('quota-heading')); } };
    function forget() {
      store.del(KEY);
      store.del(QKEY);
      quizBox.replaceChildren();
      $('quota').hidden = true;
      $('signup-result').hidden = true;
      $('signup-form').hidden = false;
      showKey();
    }
    $('api-forget').onclick = () => {
      forget();
      say('Your key was removed from this browser.');
      focus($('api-key'));
    };

    $('signup-form').onsubmit = async (e) => {
      e.preventDefault();
      const name = $('su-name').value.trim();
      const email = $('su-email').value.trim();
      if (!name || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) return say(['Enter your name and a valid email address to get a key.'], true);
      say('Creating your key…');
      const r = await call('/api/v1/signup', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, email }) });
      if (!r.ok || !r.body.api_key) {
        return say(r.status === 409 ? [`${email} already has an API key. Paste it in the field above; if you lost it, support at ${api.dataset.contact} can replace it.`] : explain(r, 'create your key'), true);
      }
      $('signup-form').hidden = true;
      $('new-key').value = r.body.api_key;
      $('signup-result').hidden = false;
      setKey(r.body.api_key);
      say('Your key was created and saved in this browser. Copy it somewhere safe: it is shown only once.');
      focus($('new-key'));
      usage();
    };
    $('copy-key').onclick = async () => {
      const input = $('new-key');
      try { await navigator.clipboard.writeText(input.value); } catch {
        input.select();
        if (!document.execCommand('copy')) return say(['Copying failed: select the key and copy it yourself.'], true);
      }
      say('Key copied to the clipboard.');
    };

    showKey();
    if (getKey()) {
      const saved = store.get(QKEY);
      if (saved && saved.qs && saved.qs.length) startApiQuiz(saved.qs);
      usage();
    }
  }
})();
