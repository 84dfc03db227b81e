// Starts a real `certbank serve` for the browser tests and Lighthouse: the
// binary is built from this checkout with `go build`, and the site from the
// real content/ tree. If a certification has no verified question yet (so its
// hub has no free sample), the server is started again on a copy of content/
// in which every authored question is published (quality.min_agreeing_solvers:
// 0). server.content says which was used. Set CERTBANK_E2E_CONTENT to serve
// another content directory as it is, and CERTBANK_E2E_BIN to use an already
// built certbank binary.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// publishAll copies content/ and sets quality.min_agreeing_solvers to 0.
function publishAll(src, dst) {
  fs.cpSync(src, dst, { recursive: true });
  const site = path.join(dst, 'site.yaml');
  let yaml = fs.readFileSync(site, 'utf8');
  if (/^\s+min_agreeing_solvers:/m.test(yaml)) yaml = yaml.replace(/^(\s+min_agreeing_solvers:)\s*\d+/m, '$1 0');
  else if (/^quality:\s*$/m.test(yaml)) yaml = yaml.replace(/^quality:\s*$/m, 'quality:\n  min_agreeing_solvers: 0');
  else yaml += '\nquality:\n  min_agreeing_solvers: 0\n';
  fs.writeFileSync(site, yaml);
}

async function waitReady(base, child, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (child.exitCode !== null) return false;
    try {
      const res = await fetch(base + '/catalog.json');
      if (res.ok) return true;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 150));
  }
  return false;
}

/** startServer builds certbank and serves the site on a free loopback port. */
export async function startServer() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'certbank-e2e-'));
  let bin = process.env.CERTBANK_E2E_BIN; // run.sh builds once for the tests and Lighthouse
  if (!bin) {
    bin = path.join(tmp, 'certbank');
    execFileSync('go', ['build', '-o', bin, './cmd/certbank'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  }
  const given = process.env.CERTBANK_E2E_CONTENT;
  let srv = await serve(bin, tmp, given || path.join(repoRoot, 'content'), 'a');
  srv.content = given ? `${given} (CERTBANK_E2E_CONTENT)` : 'content/ as it is';
  if (!given) {
    const catalog = await (await fetch(srv.base + '/catalog.json')).json();
    const empty = catalog.certifications.filter((c) => !c.questions).map((c) => c.slug);
    if (empty.length) {
      await srv.kill();
      publishAll(path.join(repoRoot, 'content'), path.join(tmp, 'content'));
      srv = await serve(bin, tmp, path.join(tmp, 'content'), 'b');
      srv.content = `a copy of content/ with quality.min_agreeing_solvers: 0 (${empty.length} certifications had no verified question)`;
    }
  }
  return {
    base: srv.base, port: srv.port, dir: tmp, content: srv.content, log: srv.log, bin, db: srv.db,
    async stop() {
      await srv.kill();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

async function serve(bin, tmp, content, tag) {
  let log = '';
  // The embedded development chain occasionally fails to start; try again.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const db = path.join(tmp, `e2e-${tag}${attempt}.db`);
    const child = spawn(bin, ['serve', '--content', content, '--addr', `127.0.0.1:${port}`, '--base-url', base, '--database', 'sqlite:' + db, '--log-level', 'warn'],
      { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => { log += d; });
    child.stderr.on('data', (d) => { log += d; });
    if (await waitReady(base, child, 30_000)) {
      return {
        base, port, db: 'sqlite:' + db, log: () => log,
        async kill() {
          if (child.exitCode !== null) return;
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
          if (child.exitCode === null) child.kill('SIGKILL');
        },
      };
    }
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  throw new Error('certbank serve did not start:\n' + log.slice(-3000));
}

export const chromePath = process.env.CHROME_PATH || '/usr/bin/chromium';
export const chromeArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];
