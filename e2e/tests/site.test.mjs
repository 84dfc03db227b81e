// Browser tests of the study hubs and the index against a real `certbank
// serve`: keyboard-only practice, API-key practice against the live API,
// axe-core in light and dark, no JavaScript, screenshots, page weight and
// third-party requests, structured data, small screens and zoom.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import { startServer, repoRoot, chromePath, chromeArgs } from '../lib/server.mjs';

const SLUG = process.env.CERTBANK_E2E_HUB || 'vendorfour-security-plus';
const HUB = `/certifications/${SLUG}/`;
const SHOTS = path.join(repoRoot, 'e2e', 'screenshots');
const WEIGHT_BUDGET = 100_000; // bytes of HTML + CSS + JS, before compression

let server, browser, base, feed, catalog;
const contexts = [];

async function newPage(options = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  contexts.push(ctx);
  const page = await ctx.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  return page;
}

const active = (page) => page.evaluate(() => {
  const el = document.activeElement;
  return { tag: el.tagName, text: el.textContent.trim(), letter: el.dataset.letter || '', pressed: el.getAttribute('aria-pressed') };
});

// tabTo presses Tab until the focused element satisfies want (keyboard only).
async function tabTo(page, want, max = 150) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const a = await active(page);
    if (want(a)) return a;
  }
  throw new Error('Tab never reached the wanted control; last focus: ' + JSON.stringify(await active(page)));
}
const text = (page, sel) => page.locator(sel).innerText();

before(async () => {
  server = await startServer();
  base = server.base;
  console.log(`# serving ${server.content} at ${base}`);
  browser = await chromium.launch({ executablePath: chromePath, args: chromeArgs });
  feed = await (await fetch(`${base}/api/${SLUG}/questions-free.json`)).json();
  catalog = await (await fetch(`${base}/catalog.json`)).json();
  assert.ok(feed.questions.length >= 10, `the ${SLUG} hub needs a free sample; got ${feed.questions.length} questions`);
  fs.mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  if (browser) await browser.close();
  if (server) await server.stop();
});

describe('index', () => {
  it('lists every certification with provider, status and question counts', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    const cards = page.locator('.cert-list .cert');
    assert.equal(await cards.count(), catalog.certifications.length);
    for (const c of catalog.certifications) {
      const card = page.locator('.cert', { has: page.locator(`a[href="/certifications/${c.slug}/"]`) });
      const t = await card.innerText();
      assert.match(t, new RegExp(c.provider), c.slug);
      assert.match(t, new RegExp(`${c.questions} questions`), c.slug);
      if (c.exam_status === 'retiring') assert.match(t, /Retiring \d{4}-\d{2}-\d{2}; successor \S+/, c.slug);
      else assert.match(t, /Current exam/, c.slug);
    }
    assert.deepEqual(page.errors, []);
  });

  it('filters live by name, provider and status and announces the count', async () => {
    const page = await newPage();
    await page.goto(base + '/');
    const total = catalog.certifications.length;
    assert.equal(await page.locator('#result-count').getAttribute('role'), 'status');
    await page.getByLabel('Search by name or exam code', { exact: true }).fill('security');
    const wantName = catalog.certifications.filter((c) => /security/i.test(c.name + ' ' + c.slug)).length;
    await page.waitForFunction((n) => document.getElementById('result-count').textContent.includes(`Showing ${n} of`), wantName);
    assert.equal(await page.locator('.cert:visible').count(), wantName);
    assert.match(page.url(), /\?q=security/);
    await page.getByLabel('Search by name or exam code', { exact: true }).fill('');
    await page.getByLabel('Provider', { exact: true }).selectOption('vendorfour');
    await page.getByLabel('Status', { exact: true }).selectOption('retiring');
    const want = catalog.certifications.filter((c) => c.provider === 'VendorFour' && c.exam_status === 'retiring').length;
    await page.waitForFunction((n) => document.getElementById('result-count').textContent.includes(`Showing ${n} of`), want);
    assert.equal(await page.locator('.cert:visible').count(), want);
    await page.getByLabel('Search by name or exam code', { exact: true }).fill('no such exam zzz');
    await page.locator('#no-results').waitFor();
    await page.locator('#clear-filters').click();
    await page.waitForFunction((n) => document.getElementById('result-count').textContent === `${n} certifications.`, total);
    assert.equal(await page.locator('.cert:visible').count(), total);
    // A filtered view can be shared: the URL sets the filters.
    await page.goto(base + '/?status=retiring');
    assert.equal(await page.locator('.cert:visible').count(), catalog.certifications.filter((c) => c.exam_status === 'retiring').length);
  });

  it('without JavaScript offers server-built provider and status pages', async () => {
    const page = await newPage({ javaScriptEnabled: false });
    await page.goto(base + '/');
    assert.equal(await page.locator('form[data-filter-form]').isVisible(), false, 'the JS-only filter form stays hidden');
    assert.equal(await page.locator('.cert:visible').count(), catalog.certifications.length);
    await page.getByRole('navigation', { name: 'Browse by provider and status' }).getByRole('link', { name: 'Retiring exams' }).click();
    await page.waitForURL(/\/status\/retiring\/$/);
    const retiring = catalog.certifications.filter((c) => c.exam_status === 'retiring');
    assert.equal(await page.locator('.cert').count(), retiring.length);
    await page.getByRole('link', { name: 'VendorFour', exact: true }).click();
    await page.waitForURL(/\/providers\/vendorfour\/$/);
    assert.equal(await page.locator('.cert').count(), catalog.certifications.filter((c) => c.provider === 'VendorFour').length);
    assert.equal(await page.locator('[aria-current=page]', { hasText: 'VendorFour' }).count(), 1);
  });
});

describe('hub practice (free sample)', () => {
  it('works with the keyboard only: answer, feedback, skip, flag, finish, score by domain; reload keeps progress; reset', async () => {
    const page = await newPage();
    await page.goto(base + HUB);
    const qs = feed.questions;
    const wrongOf = (q) => ['A', 'B', 'C', 'D'].find((l) => l !== q.answer);
    // Start in one-question-at-a-time mode.
    await tabTo(page, (a) => a.text === 'Start practice');
    await page.keyboard.press('Enter');
    let a = await active(page);
    assert.equal(a.tag, 'H3');
    assert.equal(a.text, `Question 1 of ${qs.length}`);

    // Q1: the right answer, chosen with Tab and Enter.
    a = await tabTo(page, (x) => x.letter === qs[0].answer);
    await page.keyboard.press('Enter');
    await page.locator('#practice .feedback.ok').waitFor();
    assert.match(await text(page, '#practice .feedback'), /^Correct/);
    await page.waitForFunction(() => /^Correct/.test(document.getElementById('announcer').textContent));
    assert.equal((await active(page)).letter, qs[0].answer, 'focus stays on the chosen option');
    await tabTo(page, (x) => x.text === 'Next question');
    await page.keyboard.press('Enter');
    assert.equal((await active(page)).text, `Question 2 of ${qs.length}`);

    // Q2: a wrong answer, chosen with Space; the explanation is shown.
    await tabTo(page, (x) => x.letter === wrongOf(qs[1]));
    await page.keyboard.press('Space');
    await page.locator('#practice .feedback.bad').waitFor();
    assert.match(await text(page, '#practice .feedback'), new RegExp(`the answer is ${qs[1].answer}`));
    assert.ok((await text(page, '#practice .feedback')).includes(qs[1].explanation.slice(0, 40)));
    await page.waitForFunction(() => /^Not quite/.test(document.getElementById('announcer').textContent));

    // Reload: progress is kept in localStorage.
    await page.reload();
    assert.match(await text(page, '#practice .progress'), new RegExp(`Question 2 of ${qs.length} · 2 answered · 1 correct`));
    const stored = await page.evaluate((k) => JSON.parse(localStorage.getItem(k)), `certbank:practice:${SLUG}`);
    assert.equal(Object.keys(stored.ans).length, 2);

    // Q3: skip; Q4: flag for review, then answer right.
    await tabTo(page, (x) => x.text === 'Next question');
    await page.keyboard.press('Enter');
    await tabTo(page, (x) => x.text === 'Skip');
    await page.keyboard.press('Enter');
    assert.equal((await active(page)).text, `Question 4 of ${qs.length}`);
    await tabTo(page, (x) => x.text === 'Flag for review');
    await page.keyboard.press('Enter');
    a = await active(page);
    assert.equal(a.pressed, 'true');
    assert.equal(a.text, 'Flagged for review');
    await page.keyboard.press('Shift+Tab'); // back to option D, then to the right one
    for (let i = 0; i < 4 && (await active(page)).letter !== qs[3].answer; i++) await page.keyboard.press('Shift+Tab');
    assert.equal((await active(page)).letter, qs[3].answer);
    await page.keyboard.press('Enter');
    await page.locator('#practice .feedback.ok').waitFor();

    // Finish: 2 of N correct, by domain and by difficulty.
    await tabTo(page, (x) => x.text === 'Finish and see my score');
    await page.keyboard.press('Enter');
    a = await active(page);
    assert.equal(a.text, 'Your score');
    assert.match(await text(page, '#practice .score'), new RegExp(`^2 of ${qs.length} correct`));
    const domainRows = page.locator('#practice table').first().locator('tbody tr');
    const domains = [...new Set(qs.map((q) => q.domain))];
    assert.equal(await domainRows.count(), domains.length);
    const d0 = qs[0].domain;
    const want0 = [qs[0], qs[3]].filter((q) => q.domain === d0).length;
    assert.match(await domainRows.filter({ hasText: d0 }).innerText(), new RegExp(`^${d0.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+${want0}\\s+${qs.filter((q) => q.domain === d0).length}\\b`));
    assert.match(await text(page, '#practice'), /Score by difficulty/);

    // Review wrong answers.
    await tabTo(page, (x) => x.text.startsWith('Review wrong answers'));
    await page.keyboard.press('Enter');
    assert.equal((await active(page)).text, 'Wrong answers (1)');
    assert.match(await text(page, '#practice .pr-review'), /✗ Your answer/);

    // Reload: the results are still there; reset clears them.
    await page.reload();
    assert.match(await text(page, '#practice .score'), new RegExp(`^2 of ${qs.length} correct`));
    await tabTo(page, (x) => x.text === 'Start again (reset progress)');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Start practice' }).waitFor();
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), `certbank:practice:${SLUG}`), null);
    assert.deepEqual(page.errors, []);
  });

  it('shows the whole set on one page and reviews flagged questions', async () => {
    const page = await newPage();
    await page.goto(base + HUB);
    await page.getByLabel('The whole set on one page', { exact: true }).check();
    await page.getByRole('button', { name: 'Start practice' }).click();
    const cards = page.locator('#practice .q-card');
    assert.equal(await cards.count(), feed.questions.length);
    await cards.nth(2).locator(`button[data-letter="${feed.questions[2].answer}"]`).click();
    await cards.nth(5).getByRole('button', { name: 'Flag for review' }).click();
    assert.equal(await cards.nth(5).locator('[data-flag]').getAttribute('aria-pressed'), 'true');
    await page.getByRole('button', { name: 'Finish and see my score' }).click();
    assert.match(await text(page, '#practice .score'), new RegExp(`^1 of ${feed.questions.length} correct`));
    await page.getByRole('button', { name: 'Review flagged (1)' }).click();
    assert.match(await text(page, '#practice .pr-review'), new RegExp(feed.questions[5].question.slice(0, 30).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  });

  it('simulates a timed exam: visible countdown, auto-submit at zero', async () => {
    const page = await newPage();
    await page.clock.install({ time: new Date('2026-03-02T09:00:00Z') });
    await page.goto(base + HUB);
    await page.clock.pauseAt(new Date('2026-03-02T09:00:05Z'));
    const seconds = +(await page.locator('#practice').getAttribute('data-seconds'));
    const total = seconds * feed.questions.length;
    await page.getByRole('checkbox', { name: /Timed exam simulation/ }).check();
    await page.getByRole('button', { name: 'Start practice' }).click();
    const timer = page.getByRole('timer');
    const fmt = (s) => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
    assert.equal(await timer.innerText(), `Time left: ${fmt(total)}`);
    await page.locator(`#practice button[data-letter="${feed.questions[0].answer}"]`).click();
    await page.clock.runFor(60_000);
    assert.equal(await timer.innerText(), `Time left: ${fmt(total - 60)}`);
    await page.clock.runFor((total - 60) * 1000 + 1000);
    await page.locator('#practice .pr-results').waitFor();
    assert.match(await text(page, '#practice .pr-results'), /ran out: your answers were submitted automatically/);
    assert.match(await text(page, '#practice .score'), new RegExp(`^1 of ${feed.questions.length} correct`));
  });
});

describe('practise with your API key (live API)', () => {
  let key;
  const email = `e2e-${Date.now()}@example.com`;

  it('signs up in the page, shows the key once with a copy button, and shows the quota', async () => {
    const page = await newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.goto(base + HUB);
    await page.getByText('No key yet? Get a free one').click();
    await page.getByLabel('Your name', { exact: true }).fill('E2E Learner');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Get my free key' }).click();
    const input = page.getByLabel('New API key', { exact: true });
    await input.waitFor();
    key = await input.inputValue();
    assert.match(key, /^cb_live_/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.waitForFunction(() => document.getElementById('api-status').textContent.includes('copied'));
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
    assert.equal(await page.evaluate(() => JSON.parse(sessionStorage.getItem('certbank:apikey'))), key);
    await page.locator('#quota').waitFor();
    assert.match(await text(page, '#quota'), /Free/);
    assert.match(await text(page, '#quota'), /Requests this month\s+\d+ of 100 left/);

    // Draw fresh questions and practise them with the same UI.
    await page.getByRole('button', { name: 'Draw 10 new questions' }).click();
    await page.locator('#api-quiz').getByRole('button', { name: 'Start practice' }).click();
    const first = page.locator('#api-quiz .q-card').first();
    await first.locator('button[data-letter="A"]').click();
    await page.locator('#api-quiz .feedback').waitFor();
    assert.match(await text(page, '#api-quiz .progress'), /Question 1 of 10 · 1 answered/);
    // Reload: the key (this tab) and the drawn set are kept.
    await page.reload();
    assert.match(await text(page, '#api-quiz .progress'), /Question 1 of 10 · 1 answered/);
    assert.match(await text(page, '#key-panel'), /Using key cb_live_/);
    // A second sign-up with the same email is explained.
    await page.getByRole('button', { name: 'Forget my key' }).click();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('certbank:apikey') || localStorage.getItem('certbank:apikey')), null);
    await page.getByLabel('Your API key', { exact: true }).waitFor();
    await page.getByText('No key yet? Get a free one').click();
    await page.getByLabel('Your name', { exact: true }).fill('E2E Learner');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Get my free key' }).click();
    await page.waitForFunction(() => /already has an API key/.test(document.getElementById('api-error').textContent));
    assert.deepEqual(page.errors.filter((e) => !/status of 409/.test(e)), []);
  });

  it('explains a bad key, the per-minute limit (real 429), the monthly limit and a network error in plain words', async () => {
    assert.ok(key, 'needs the key of the sign-up test');
    const page = await newPage();
    await page.goto(base + HUB);
    // A bad key.
    await page.getByLabel('Your API key', { exact: true }).fill('cb_live_not_a_real_key');
    await page.getByRole('button', { name: /Use my key/ }).click();
    await page.waitForFunction(() => /not accepted/.test(document.getElementById('api-error').textContent));
    assert.match(await text(page, '#api-error'), /get a new free key with the sign-up form/);
    assert.ok(await page.getByLabel('Your API key', { exact: true }).isVisible(), 'a refused key is dropped and the key form is back');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('certbank:apikey')), null);
    await page.getByRole('link', { name: 'the sign-up form' }).click();
    assert.equal(await page.locator('#signup').getAttribute('open'), '');

    // Exhaust the Free tier's 10 requests a minute with direct calls; stay in one clock minute.
    if (new Date().getSeconds() > 45) await new Promise((r) => setTimeout(r, (61 - new Date().getSeconds()) * 1000));
    let status = 0;
    for (let i = 0; i < 15 && status !== 429; i++) {
      status = (await fetch(`${base}/api/v1/questions?certification=${SLUG}&limit=1`, { headers: { 'x-api-key': key } })).status;
    }
    assert.equal(status, 429, 'the free tier allows 10 requests a minute');
    await page.getByLabel('Your API key', { exact: true }).fill(key);
    await page.getByRole('button', { name: /Use my key/ }).click();
    await page.waitForFunction(() => /Wait \d+ seconds?/.test(document.getElementById('api-error').textContent));
    assert.match(await text(page, '#api-error'), /limit of requests per minute\. Wait \d+ seconds? \(until .+\), then try again/);
    assert.equal(await page.locator('#api-error').getAttribute('role'), 'alert');
    await page.locator('#quota').waitFor();
    assert.match(await text(page, '#quota'), /Requests this minute\s+0 of 10 left/);

    // The monthly limit (100 requests) takes ten minutes to reach at 10 a minute, so its
    // answer is replayed from the API's documented shape.
    const questionsURL = (u) => u.pathname === '/api/v1/questions';
    await page.route(questionsURL, (route) => route.fulfill({
      status: 429, contentType: 'application/json', headers: { 'Retry-After': String(5 * 86400) },
      body: JSON.stringify({ error: 'monthly limit of 100 requests reached for the Free tier', code: 'MONTHLY_LIMIT_EXCEEDED' }),
    }));
    await page.getByRole('button', { name: 'Draw 10 new questions' }).click();
    await page.waitForFunction(() => /all of this month's requests/.test(document.getElementById('api-error').textContent));
    assert.match(await text(page, '#api-error'), /Your quota resets on .+\(UTC\)\. Until then, practise the free sample above, or upgrade/);
    await page.unroute(questionsURL);
    await page.route(questionsURL, (route) => route.abort('internetdisconnected'));
    await page.getByRole('button', { name: 'Draw 10 new questions' }).click();
    await page.waitForFunction(() => /could not reach/.test(document.getElementById('api-error').textContent));
    assert.match(await text(page, '#api-error'), /Check your internet connection, then try again/);
  });
});

describe('mock exam, weak-area drill and question reports (live API)', () => {
  it('takes a full-length mock exam with a Developer key: timed, flag for review, one submission, score by domain, every explanation; then drills the weakest domain and reports a question', async () => {
    const out = execFileSync(server.bin, ['keys', 'create', '--database', server.db, '--name', 'E2E Developer', '--email', `dev-${Date.now()}@example.com`, '--tier', 'developer', '--until', '2030-01-31'], { encoding: 'utf8' });
    const key = /cb_live_[A-Za-z0-9]+/.exec(out)[0];
    const page = await newPage();
    await page.goto(base + HUB);
    await page.evaluate((k) => sessionStorage.setItem('certbank:apikey', JSON.stringify(k)), key);
    await page.reload();
    const exam = page.locator('#mock-exam');
    const full = +(await exam.getAttribute('data-full'));
    assert.match(await exam.innerText(), /needs the Developer or Enterprise tier/);
    await exam.getByRole('radio', { name: /Full length/ }).check();
    await exam.getByRole('button', { name: 'Start the mock exam' }).click();
    await exam.locator('.q-card').waitFor();
    assert.match(await exam.locator('.progress').innerText(), new RegExp(`^Question 1 of ${full} · 0 answered · 0 flagged`));
    assert.match(await exam.getByRole('timer').innerText(), /^Time left: \d+:\d\d$/);
    // No answer or explanation is in the page before submission.
    assert.equal(await exam.locator('.feedback').count(), 0);
    // Answer the first question with the keyboard, flag the second, answer the third.
    await exam.locator('button[data-letter="B"]').focus();
    await page.keyboard.press('Enter');
    assert.equal(await exam.locator('button[data-letter="B"]').getAttribute('aria-pressed'), 'true');
    await exam.getByRole('button', { name: 'Next', exact: true }).click();
    await exam.getByRole('button', { name: 'Flag for review', exact: true }).click();
    await exam.getByRole('button', { name: 'Next', exact: true }).click();
    await exam.locator('button[data-letter="C"]').click();
    assert.match(await exam.locator('.progress').innerText(), /Question 3 of \d+ · 2 answered · 1 flagged/);
    // Reload: the exam, its answers and its clock are kept.
    await page.reload();
    assert.match(await exam.locator('.progress').innerText(), /2 answered · 1 flagged/);
    // Submitting with unanswered questions asks first.
    await exam.getByRole('button', { name: 'Submit the exam' }).click();
    assert.match(await exam.locator('.notice').innerText(), new RegExp(`${full - 2} questions unanswered, 1 flagged for review`));
    await exam.getByRole('button', { name: 'Submit now' }).click();
    await exam.locator('.pr-results').waitFor();
    assert.match(await exam.locator('.score').innerText(), new RegExp(`^\\d+ of ${full} correct`));
    const domains = await exam.locator('table').first().locator('tbody tr').count();
    assert.ok(domains >= 2, `score by domain has ${domains} rows`);
    await exam.getByRole('button', { name: /Review all answers/ }).click();
    assert.equal(await exam.locator('.pr-review .q-card').count(), full);
    assert.equal(await exam.locator('.pr-review .feedback').count(), full);
    await exam.getByRole('button', { name: /Review flagged \(1\)/ }).click();
    assert.equal(await exam.locator('.pr-review .q-card').count(), 1);
    const axe = await new AxeBuilder({ page }).include('#mock-exam').options({ resultTypes: ['violations'] }).analyze();
    assert.deepEqual(axe.violations.map((v) => v.id), []);

    // Report the flagged question from the review.
    const card = exam.locator('.pr-review .q-card').first();
    await card.getByText('Report this question').click();
    await card.getByLabel('What is wrong?').selectOption('ambiguous');
    await card.getByLabel('Details (optional)').fill('B and C both fit the scenario');
    await card.getByRole('button', { name: 'Send report' }).click();
    await card.getByText(/Thank you: your report was received/).waitFor();
    const reports = execFileSync(server.bin, ['reports', 'list', '--database', server.db], { encoding: 'utf8' });
    assert.match(reports, /ambiguous\s+open\s+B and C both fit the scenario/);

    // The exam's results feed the weak-area drill: it draws from the
    // domain with the lowest score.
    const results = await page.evaluate((slug) => JSON.parse(localStorage.getItem('certbank:results:' + slug)), SLUG);
    const weakest = Object.entries(results).sort((a, b) => a[1][0] / a[1][1] - b[1][0] / b[1][1])[0][0];
    const byObjective = await page.evaluate((slug) => JSON.parse(localStorage.getItem('certbank:results:' + slug + ':objectives')), SLUG);
    assert.ok(Object.keys(byObjective).length >= 2 && Object.values(byObjective).reduce((n, [, t]) => n + t, 0) === full, `results by objective: ${JSON.stringify(byObjective).slice(0, 200)}`);
    await page.getByRole('button', { name: 'Practise my weakest areas' }).click();
    await page.waitForFunction(() => /drawn from/.test(document.getElementById('api-status').textContent));
    assert.match(await page.locator('#api-status').innerText(), /weakest objective there: /);
    assert.match(await page.locator('#api-status').innerText(), new RegExp('drawn from ' + weakest.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    const drawn = await page.evaluate((slug) => JSON.parse(localStorage.getItem('certbank:apipractice:' + slug)).qs.map((q) => q.domain), SLUG);
    assert.ok(drawn.length > 0 && drawn.every((d) => d === weakest), `drill drew ${drawn} for weakest ${weakest}`);
    assert.deepEqual(page.errors, []);
  });

  it('draws the mock exam from the free sample without a key, and a second submission is refused', async () => {
    const page = await newPage();
    await page.goto(base + HUB);
    const exam = page.locator('#mock-exam');
    await exam.getByRole('radio', { name: /Half length/ }).check();
    await exam.getByRole('button', { name: 'Start the mock exam' }).click();
    await exam.locator('.q-card').waitFor();
    assert.match(await exam.locator('.pr-run').innerText(), /free sample/);
    const id = await page.evaluate((slug) => JSON.parse(localStorage.getItem('certbank:exam:' + slug)).id, SLUG);
    await exam.getByRole('button', { name: 'Submit the exam' }).click();
    await exam.getByRole('button', { name: 'Submit now' }).click();
    await exam.locator('.pr-results').waitFor();
    const again = await fetch(`${base}/api/v1/exam/${id}/answers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"answers":{}}' });
    assert.equal(again.status, 409);
    assert.deepEqual(page.errors, []);
  });
});

describe('accessibility (axe-core)', { concurrency: 2 }, () => {
  const pages = [['index', '/'], ['hub', HUB], ['developers', '/developers/'], ['404', '/no-such-page/'], ['provider list', '/providers/vendorfour/']];
  for (const scheme of ['light', 'dark']) {
    it(`has no violations on the index, a hub, the developers page and the 404 page (${scheme})`, async () => {
      const page = await newPage();
      await page.emulateMedia({ colorScheme: scheme });
      const found = [];
      const scan = async (name) => {
        const r = await new AxeBuilder({ page }).options({ resultTypes: ['violations'] }).analyze();
        for (const v of r.violations) found.push(`${name} (${scheme}): ${v.id} ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`);
      };
      for (const [name, p] of pages) {
        await page.goto(base + p);
        await scan(name);
      }
      // The hub in its interactive states: a question answered, the results, an API error.
      await page.goto(base + HUB);
      await page.getByRole('button', { name: 'Start practice' }).click();
      await page.locator(`#practice button[data-letter="${feed.questions[0].answer === 'A' ? 'B' : 'A'}"]`).click();
      await page.getByRole('button', { name: 'Flag for review' }).click();
      await scan('hub, question answered');
      await page.getByRole('button', { name: 'Finish and see my score' }).first().click();
      await page.getByRole('button', { name: /Review wrong answers/ }).click();
      await scan('hub, results');
      await page.getByRole('button', { name: 'Show the list of questions with answers' }).click();
      await page.getByLabel('Your API key', { exact: true }).fill('cb_live_not_a_real_key');
      await page.getByRole('button', { name: /Use my key/ }).click();
      await page.waitForFunction(() => /not accepted/.test(document.getElementById('api-error').textContent));
      await page.getByRole('link', { name: 'the sign-up form' }).click();
      await scan('hub, API error and sign-up');
      assert.deepEqual(found, []);
    });
  }
});

describe('without JavaScript', () => {
  it('the hub shows every question and reveals answers with <details>', async () => {
    const page = await newPage({ javaScriptEnabled: false });
    await page.goto(base + HUB);
    const items = page.locator('#sample-list > li.question');
    assert.equal(await items.count(), feed.questions.length);
    for (let i = 0; i < feed.questions.length; i++) {
      const q = feed.questions[i];
      const item = items.nth(i);
      assert.ok(await item.isVisible());
      assert.equal((await item.locator('.stem').innerText()).trim(), q.question);
      assert.equal(await item.locator('.options > li').count(), 4);
      const answer = item.locator('details p').first();
      assert.equal(await answer.isVisible(), false, 'the answer starts hidden');
      await item.locator('summary').click();
      assert.match(await answer.innerText(), new RegExp(`^Answer: ${q.answer}\\.`));
    }
    assert.equal(await page.locator('#practice').isVisible(), false);
    assert.equal(await page.locator('#api-practice').isVisible(), false);
  });
});

describe('page weight and requests', () => {
  it('makes no request outside 127.0.0.1, and a hub weighs under 100 KB (HTML + CSS + JS)', async () => {
    const page = await newPage();
    const hosts = new Set();
    const loads = [];
    page.on('request', (r) => { if (!r.url().startsWith('data:')) hosts.add(new URL(r.url()).host); });
    page.on('response', (r) => loads.push(r));
    await page.goto(base + HUB, { waitUntil: 'networkidle' });
    let hubBytes = 0;
    for (const r of loads) {
      if (['document', 'stylesheet', 'script'].includes(r.request().resourceType())) hubBytes += (await r.body()).length;
    }
    console.log(`# hub ${SLUG}: ${hubBytes} bytes of HTML + CSS + JS in ${loads.length} responses`);
    assert.ok(hubBytes < WEIGHT_BUDGET, `hub weighs ${hubBytes} bytes`);
    await page.getByRole('button', { name: 'Start practice' }).click();
    await page.locator('#practice button[data-letter="A"]').click();
    for (const p of ['/', '/developers/', '/providers/vendorfour/', '/no-such-page/']) await page.goto(base + p, { waitUntil: 'networkidle' });
    assert.deepEqual([...hosts], [`127.0.0.1:${server.port}`]);

    // Every hub, measured from the server: the page plus the stylesheet and scripts it links.
    const sizes = [];
    for (const c of catalog.certifications) {
      const html = await (await fetch(`${base}/certifications/${c.slug}/`)).text();
      let n = Buffer.byteLength(html);
      for (const [, src] of html.matchAll(/<(?:script[^>]+src|link[^>]+rel="stylesheet"[^>]+href)="([^"]+)"/g)) {
        assert.ok(src.startsWith('/'), `${c.slug} loads ${src} from another host`);
        n += (await (await fetch(base + src)).arrayBuffer()).byteLength;
      }
      sizes.push([n, c.slug]);
    }
    sizes.sort((x, y) => y[0] - x[0]);
    console.log(`# heaviest hub: ${sizes[0][1]} ${sizes[0][0]} bytes; lightest ${sizes.at(-1)[1]} ${sizes.at(-1)[0]} bytes`);
    for (const [n, slug] of sizes) assert.ok(n < WEIGHT_BUDGET, `${slug} weighs ${n} bytes`);
  });
});

describe('structured data and metadata', () => {
  it('each hub has a valid schema.org Quiz, Open Graph and a canonical URL; the sitemap lists every page', async () => {
    const page = await newPage();
    await page.goto(base + HUB);
    const ld = JSON.parse(await page.locator('script[type="application/ld+json"]').textContent());
    assert.equal(ld['@context'], 'https://schema.org');
    assert.equal(ld['@type'], 'Quiz');
    assert.equal(ld.url, base + HUB);
    assert.equal(ld.about['@type'], 'Thing');
    assert.equal(ld.educationalAlignment[0]['@type'], 'AlignmentObject');
    assert.equal(ld.educationalAlignment[0].alignmentType, 'educationalSubject');
    // The Quiz lists the free sample in the page's order, as much of it as fits in 14 KB
    // (generator jsonLDBudget), so long scenarios cannot push a hub past its weight budget.
    const ldText = await page.locator('script[type="application/ld+json"]').textContent();
    assert.ok(Buffer.byteLength(ldText) <= 14_000, `the Quiz is ${Buffer.byteLength(ldText)} bytes`);
    assert.ok(ld.hasPart.length >= 1 && ld.hasPart.length <= feed.questions.length, `the Quiz lists ${ld.hasPart.length} questions`);
    ld.hasPart.forEach((q, i) => {
      assert.equal(q['@type'], 'Question');
      assert.equal(q.text, feed.questions[i].question);
      assert.equal(q.eduQuestionType, 'Multiple choice');
      assert.equal(q.acceptedAnswer['@type'], 'Answer');
      assert.equal(q.acceptedAnswer.text, `${feed.questions[i].answer}. ${feed.questions[i].options[feed.questions[i].answer]}`);
      assert.equal(q.suggestedAnswer.length, 3);
      const positions = [q.acceptedAnswer, ...q.suggestedAnswer].map((a) => a.position).sort();
      assert.deepEqual(positions, [0, 1, 2, 3]);
    });
    // Only properties schema.org defines for these types (Quiz, Question and Answer are
    // CreativeWorks; eduQuestionType is Question's, learningResourceType LearningResource's).
    const allowed = {
      Quiz: ['@context', '@type', 'name', 'description', 'url', 'about', 'educationalAlignment', 'learningResourceType', 'provider', 'isAccessibleForFree', 'hasPart', 'inLanguage', 'dateModified'],
      Question: ['@type', 'eduQuestionType', 'text', 'educationalLevel', 'acceptedAnswer', 'suggestedAnswer'],
      Answer: ['@type', 'position', 'text'],
      AlignmentObject: ['@type', 'alignmentType', 'educationalFramework', 'targetName', 'targetUrl'],
      Thing: ['@type', 'name'], Organization: ['@type', 'name', 'url'],
    };
    const walk = (node, where) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}[${i}]`));
      if (!node || typeof node !== 'object') return;
      assert.ok(allowed[node['@type']], `${where}: unexpected @type ${node['@type']}`);
      for (const k of Object.keys(node)) {
        assert.ok(allowed[node['@type']].includes(k), `${where}: ${k} is not a property of ${node['@type']}`);
        walk(node[k], `${where}.${k}`);
      }
    };
    walk(ld, 'Quiz');
    const meta = (p) => page.locator(`meta[property="${p}"]`).getAttribute('content');
    assert.equal(await page.locator('link[rel=canonical]').getAttribute('href'), base + HUB);
    assert.equal(await meta('og:url'), base + HUB);
    assert.equal(await meta('og:type'), 'website');
    assert.match(await meta('og:title'), /practice questions/);
    assert.ok((await meta('og:description')).length > 20);
    assert.ok((await page.locator('meta[name=description]').getAttribute('content')).length > 20);

    const sitemap = await (await fetch(base + '/sitemap.xml')).text();
    const urls = [...sitemap.matchAll(/<url><loc>([^<]+)<\/loc><lastmod>(\d{4}-\d{2}-\d{2})<\/lastmod><\/url>/g)].map((m) => m[1]);
    const want = [base + '/', base + '/developers/', ...catalog.certifications.map((c) => `${base}/certifications/${c.slug}/`), base + '/status/current/', base + '/status/retiring/',
      ...[...new Set(catalog.certifications.map((c) => c.provider.toLowerCase().replaceAll(' ', '-')))].map((p) => `${base}/providers/${p}/`)];
    assert.deepEqual([...urls].sort(), want.sort());
  });
});

describe('small screens, zoom, motion and colour scheme', () => {
  const noOverflow = (page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
  // 200 % zoom of a 1280 px window lays out like a 640 px one.
  for (const [label, viewport, allHubs] of [['320 px wide', { width: 320, height: 640 }, true], ['200 % zoom of 1280 px', { width: 640, height: 450 }, false]]) {
    it(`no horizontal scrolling at ${label}`, async () => {
      const page = await newPage({ viewport });
      const hubs = allHubs ? catalog.certifications.map((c) => c.slug) : [SLUG, 'cloudtwo-administrator'];
      for (const p of ['/', '/developers/', '/providers/vendorfour/', '/no-such-page/', ...hubs.map((s) => `/certifications/${s}/`)]) {
        await page.goto(base + p);
        assert.ok(await noOverflow(page), `${p} scrolls sideways at ${label}`);
      }
      await page.goto(base + HUB);
      await page.getByRole('button', { name: 'Start practice' }).click();
      await page.locator('#practice button[data-letter="A"]').click();
      assert.ok(await noOverflow(page), 'practice question');
      await page.getByRole('button', { name: 'Finish and see my score' }).first().click();
      assert.ok(await noOverflow(page), 'practice results');
    });
  }

  it('respects prefers-reduced-motion and prefers-color-scheme', async () => {
    const page = await newPage();
    await page.goto(base + HUB);
    const look = () => page.evaluate(() => ({ scroll: getComputedStyle(document.documentElement).scrollBehavior, bg: getComputedStyle(document.body).backgroundColor }));
    await page.emulateMedia({ reducedMotion: 'reduce', colorScheme: 'light' });
    assert.deepEqual(await look(), { scroll: 'auto', bg: 'rgb(255, 255, 255)' });
    await page.emulateMedia({ reducedMotion: 'no-preference', colorScheme: 'dark' });
    assert.deepEqual(await look(), { scroll: 'smooth', bg: 'rgb(13, 17, 23)' });
  });
});

describe('screenshots', () => {
  it('of a hub at phone and desktop widths, in e2e/screenshots/', async () => {
    for (const [name, viewport, scheme] of [['phone', { width: 360, height: 740 }, 'light'], ['desktop', { width: 1280, height: 900 }, 'light'], ['desktop-dark', { width: 1280, height: 900 }, 'dark']]) {
      const page = await newPage({ viewport, colorScheme: scheme, deviceScaleFactor: 1 });
      await page.goto(base + HUB);
      if (scheme === 'light') await page.screenshot({ path: path.join(SHOTS, `hub-${name}.png`), fullPage: true });
      await page.getByRole('button', { name: 'Start practice' }).click();
      await page.locator(`#practice button[data-letter="${feed.questions[0].answer === 'A' ? 'B' : 'A'}"]`).click();
      await page.locator('#practice').screenshot({ path: path.join(SHOTS, `hub-practice-${name}.png`) });
      await page.getByRole('button', { name: 'Finish and see my score' }).first().click();
      await page.locator('#practice').screenshot({ path: path.join(SHOTS, `hub-results-${name}.png`) });
      await page.goto(base + '/');
      await page.screenshot({ path: path.join(SHOTS, `index-${name}.png`), fullPage: scheme === 'light' });
    }
    for (const f of ['hub-phone.png', 'hub-desktop.png']) assert.ok(fs.statSync(path.join(SHOTS, f)).size > 10_000, f);
  });
});
