// certbank's MCP endpoint seen by the official TypeScript SDK client
// (@modelcontextprotocol/sdk 1.32.2, protocol 2025-11-25): every tool, with
// and without an API key, resources, the quiz_me prompt, and the refusals.
//
// Run by run.sh against a running `certbank serve`:
//   MCP_URL=http://127.0.0.1:PORT/api/mcp node --test ts-client.test.mjs
// MCP_API_KEY may name a key; otherwise the test signs up for a Free one.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const url = process.env.MCP_URL;
if (!url) {
  throw new Error("set MCP_URL to the server's /api/mcp URL (run.sh does)");
}
const base = new URL(url).origin;
const TOOLS = ["check_answer", "get_exam_blueprint", "get_practice_questions", "list_certifications", "report_question", "start_mock_exam", "submit_mock_exam"];
// The tools that store something (a mock exam, its grading, a report); the others only read.
const WRITES = new Set(["report_question", "start_mock_exam", "submit_mock_exam"]);

let key = process.env.MCP_API_KEY || "";
const clients = [];

async function connect(headers = {}) {
  const client = new Client({ name: "certbank-ts-interop", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  client.transportForTest = transport;
  clients.push(client);
  // listTools caches the output schemas, so callTool validates structuredContent
  await client.listTools();
  return client;
}

// call returns a successful tool's structured content, which the SDK has
// already validated against the tool's output schema.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} ${JSON.stringify(args)}: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, `${name}: no structuredContent`);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, `${name}: the text block is not the structured content`);
  return res.structuredContent;
}

async function callErr(client, name, args, ...mentions) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args)} should be a tool error: ${JSON.stringify(res)}`);
  const text = res.content.map((c) => c.text).join("");
  for (const m of mentions) {
    assert.ok(text.includes(m), `${name}: error ${JSON.stringify(text)} does not mention ${JSON.stringify(m)}`);
  }
  return text;
}

let anon, keyed, slug;

before(async () => {
  if (!key) {
    const email = `ts-interop-${Date.now()}-${Math.floor(Math.random() * 1e9)}@example.com`;
    const res = await fetch(`${base}/api/v1/signup`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "TS interop", email }),
    });
    const body = await res.json();
    assert.equal(res.status, 201, `signup: ${JSON.stringify(body)}`);
    key = body.api_key;
  }
  anon = await connect();
  keyed = await connect({ "x-api-key": key });
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

test("both clients negotiated 2025-11-25 with the certbank server", () => {
  for (const c of [anon, keyed]) {
    assert.equal(c.transportForTest.protocolVersion, "2025-11-25");
    assert.equal(c.getServerVersion().name, "certbank");
    assert.ok(c.getServerCapabilities().tools, "tools capability");
  }
});

test("tools/list: the seven tools, readOnlyHint on the four that only read, with input and output schemas", async () => {
  for (const c of [anon, keyed]) {
    const { tools } = await c.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    for (const t of tools) {
      assert.equal(t.annotations?.readOnlyHint, !WRITES.has(t.name), `${t.name} readOnlyHint`);
      assert.equal(t.inputSchema?.type, "object", `${t.name} inputSchema`);
      assert.equal(t.outputSchema?.type, "object", `${t.name} outputSchema`);
      assert.ok(t.description.length > 20, `${t.name} description`);
    }
  }
});

test("list_certifications and get_exam_blueprint, with and without a key", async () => {
  for (const c of [anon, keyed]) {
    const { certifications } = await call(c, "list_certifications", {});
    assert.ok(certifications.length > 0, "no certifications");
    const withSamples = certifications.find((x) => x.free_questions > 0 && x.questions > x.free_questions);
    assert.ok(withSamples, "no certification with free samples and more");
    slug = withSamples.slug;
    const bp = await call(c, "get_exam_blueprint", { certification: slug });
    assert.equal(bp.slug, slug);
    assert.ok(bp.domains.length > 0 && bp.exam_questions > 0, JSON.stringify(bp));
    const filtered = await call(c, "list_certifications", { provider: withSamples.provider });
    assert.ok(filtered.certifications.every((x) => x.provider === withSamples.provider));
  }
});

test("without a key: free samples only, and check_answer only on them", async () => {
  const p = await call(anon, "get_practice_questions", { certification: slug, count: 3 });
  assert.equal(p.source, "free_sample");
  assert.equal(p.returned, 3);
  assert.equal(p.unique_questions, undefined);
  for (const q of p.questions) {
    assert.equal(q.answer, undefined, "answers are withheld by default");
    assert.deepEqual(Object.keys(q.options), ["A", "B", "C", "D"]);
  }
  const q = p.questions[0];
  const graded = await call(anon, "check_answer", { question_id: q.id, answer: "A" });
  assert.equal(graded.question_id, q.id);
  assert.match(graded.correct_answer, /^[A-D]$/);
  assert.equal(graded.correct, graded.correct_answer === "A");

  const all = await call(anon, "get_practice_questions", { certification: slug, count: 10, include_answers: true });
  assert.ok(all.questions.every((x) => /^[A-D]$/.test(x.answer) && x.explanation), "include_answers");
  await callErr(anon, "get_practice_questions", { certification: slug, count: 11 }, "1 to 10");
});

test("with a key: the whole bank under the tier, counted", async () => {
  const before = await (await fetch(`${base}/api/v1/usage`, { headers: { "x-api-key": key } })).json();
  const p = await call(keyed, "get_practice_questions", { certification: slug, count: 5 });
  assert.equal(p.source, "bank");
  assert.equal(p.returned, 5);
  assert.ok(p.total_available > 5);
  assert.ok(p.unique_questions && p.unique_questions.used >= 5, JSON.stringify(p.unique_questions));
  const after = await (await fetch(`${base}/api/v1/usage`, { headers: { "x-api-key": key } })).json();
  assert.equal(after.requests.month.used, before.requests.month.used + 1, "the tool call is counted like a REST request");

  // a served question the free sample lacks: the key may check it, no key may not
  const { certifications } = await call(anon, "list_certifications", {});
  const freeCount = certifications.find((x) => x.slug === slug).free_questions;
  const samples = new Set();
  for (let i = 0; samples.size < freeCount && i < 200; i++) {
    for (const q of (await call(anon, "get_practice_questions", { certification: slug, count: 10 })).questions) samples.add(q.id);
  }
  assert.equal(samples.size, freeCount, "could not collect the free sample");
  let served = p.questions.find((q) => !samples.has(q.id));
  for (let i = 0; !served && i < 3; i++) {
    served = (await call(keyed, "get_practice_questions", { certification: slug, count: 5 })).questions.find((q) => !samples.has(q.id));
  }
  assert.ok(served, "no non-sample question drawn");
  const graded = await call(keyed, "check_answer", { question_id: served.id, answer: "B" });
  assert.equal(graded.correct, graded.correct_answer === "B");
  await callErr(anon, "check_answer", { question_id: served.id, answer: "B" }, "free-sample");
});

test("a mock exam from the free sample, graded once; a full exam is beyond a Free key; a report", async () => {
  const ex = await call(anon, "start_mock_exam", { certification: slug, length: "half" });
  assert.equal(ex.source, "free_sample");
  assert.ok(ex.exam_id && ex.questions.length > 0 && ex.minutes > 0, JSON.stringify(ex).slice(0, 300));
  assert.ok(ex.questions.every((q) => q.answer === undefined && q.explanation === undefined), "exam questions carry no answers");
  const answers = Object.fromEntries(ex.questions.map((q) => [q.id, "A"]));
  const rep = await call(anon, "submit_mock_exam", { exam_id: ex.exam_id, answers });
  assert.equal(rep.score.total, ex.questions.length);
  assert.equal(rep.answered, ex.questions.length);
  assert.ok(rep.by_domain.length > 0 && rep.questions.every((q) => q.explanation.length > 0));
  await callErr(anon, "submit_mock_exam", { exam_id: ex.exam_id, answers }, "already graded");
  const bp = await call(anon, "get_exam_blueprint", { certification: slug });
  if (bp.exam_questions > 50) await callErr(keyed, "start_mock_exam", { certification: slug, length: "full" }, "tier"); // a Free key sees at most 50 different questions
  const r = await call(anon, "report_question", { question_id: ex.questions[0].id, reason: "typo", text: "TS interop" });
  assert.equal(r.status, "open");
  await callErr(anon, "report_question", { question_id: ex.questions[0].id, reason: "bored" }, "wrong_key");
});

test("bad arguments are tool errors with helpful text; an unknown tool is a protocol error", async () => {
  await callErr(anon, "get_practice_questions", { certification: "no-such-exam" }, "list_certifications");
  await callErr(keyed, "get_practice_questions", { certification: slug, difficulty: "insane" }, "easy, medium or hard");
  await callErr(keyed, "get_practice_questions", { certification: slug, count: 500 }, "count");
  await callErr(anon, "get_exam_blueprint", { certification: "no-such-exam" }, "list_certifications");
  await callErr(anon, "check_answer", { question_id: "nope", answer: "A" }, "get_practice_questions");
  await callErr(anon, "check_answer", { question_id: "nope", answer: "E" }, "A, B, C, D");
  await assert.rejects(anon.callTool({ name: "drop_tables", arguments: {} }), (err) => {
    assert.ok(err instanceof McpError, String(err));
    assert.equal(err.code, -32602);
    return true;
  });
});

test("resources and the quiz_me prompt", async () => {
  const { resources } = await anon.listResources();
  const uri = `certbank://certifications/${slug}`;
  assert.ok(resources.some((r) => r.uri === uri), `${uri} not listed`);
  const { resourceTemplates } = await anon.listResourceTemplates();
  assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ["certbank://certifications/{slug}"]);
  const read = await anon.readResource({ uri });
  assert.equal(JSON.parse(read.contents[0].text).slug, slug);
  await assert.rejects(anon.readResource({ uri: "certbank://certifications/no-such-exam" }), McpError);

  const { prompts } = await anon.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name), ["quiz_me"]);
  const prompt = await anon.getPrompt({ name: "quiz_me", arguments: { certification: slug, count: "3" } });
  assert.match(prompt.messages[0].content.text, /get_practice_questions/);
  assert.match(prompt.messages[0].content.text, new RegExp(slug));
});

test("a bad key is refused with 401", async () => {
  const client = new Client({ name: "certbank-ts-interop", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { "x-api-key": "cb_live_" + "0".repeat(32) } },
  });
  await assert.rejects(client.connect(transport), (err) => {
    assert.match(String(err), /401|Unauthorized|x-api-key/i);
    return true;
  });
  await client.close();
});

test("a foreign Origin is refused with 403", async () => {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Origin: "http://evil.example.com",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(res.status, 403);
});
