// Pays a running `certbank serve` (development chain) with the official x402
// clients: x402-fetch 1.2.0 (protocol v1) and @x402/fetch + @x402/evm 2.27.0
// (protocol v2), and checks the transfers on chain through the development
// chain's JSON-RPC. Only 127.0.0.1 is ever contacted.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import net from "node:net";
import { privateKeyToAccount } from "viem/accounts";
import { createPublicClient, createWalletClient, http, parseAbi, defineChain } from "viem";
import { wrapFetchWithPayment as wrapV1, decodeXPaymentResponse } from "x402-fetch";
import { createPaymentHeader } from "x402/client";
import { wrapFetchWithPayment as wrapV2, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";

const root = resolve(import.meta.dirname, "../..");
// The development chain presents itself as Base Sepolia (a test network):
// its USDC address, chain id and EIP-712 domain name "USDC".
const USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const CHAIN_ID = 84532;
const erc20 = parseAbi(["function balanceOf(address) view returns (uint256)", "function authorizationState(address,bytes32) view returns (bool)"]);

// Loopback-only fetch: the clients must never reach out.
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === "string" ? input : input.url);
  if (url.hostname !== "127.0.0.1") throw new Error(`non-loopback request to ${url}`);
  return realFetch(input, init);
};

function freePort() {
  return new Promise((ok, fail) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => ok(p)); });
    s.on("error", fail);
  });
}

let proc, base, chain, devChain, payTo, wallets = [];

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), "certbank-x402-"));
  const bin = process.env.CERTBANK_BIN || join(dir, "certbank");
  if (!process.env.CERTBANK_BIN) execFileSync("go", ["build", "-o", bin, "./cmd/certbank"], { cwd: root, stdio: "inherit", env: { ...process.env, CGO_ENABLED: "1" } });
  const port = await freePort(), rpcPort = await freePort();
  base = `http://127.0.0.1:${port}`;
  // No --base-url: the documents' URLs must follow the listen address.
  proc = spawn(bin, ["serve", "--content", join(root, "content"), "--addr", `127.0.0.1:${port}`,
    "--database", `sqlite:${join(dir, "db.sqlite")}`, "--dev-rpc-addr", `127.0.0.1:${rpcPort}`, "--log-level", "warn"], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  proc.stderr.on("data", (d) => { err += d; });
  proc.stdout.on("data", () => {});
  for (let i = 0; i < 300; i++) {
    try { if ((await realFetch(`${base}/readyz`)).ok) break; } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const m of err.matchAll(/dev wallet (\d+)\s+(0x[0-9a-fA-F]{40})\s+key (0x[0-9a-f]{64})/g)) wallets[+m[1]] = { address: m[2], key: m[3] };
  assert.ok(wallets.length >= 3, `serve printed no development wallets:\n${err}`);
  devChain = defineChain({ id: CHAIN_ID, name: "certbank-dev", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [`http://127.0.0.1:${rpcPort}`] } } });
  chain = createPublicClient({ chain: devChain, transport: http(), pollingInterval: 50 });
  const x402doc = await (await realFetch(`${base}/.well-known/x402.json`)).json();
  payTo = x402doc.resources?.[0]?.payTo;
  assert.ok(x402doc.resources[0].resource.startsWith(base + "/"), `x402.json resource ${x402doc.resources[0].resource} does not follow the listen address`);
  assert.match(payTo ?? "", /^0x[0-9a-fA-F]{40}$/, `no payTo in x402.json: ${JSON.stringify(x402doc).slice(0, 300)}`);
});

after(() => { proc?.kill("SIGTERM"); });

const balance = (a) => chain.readContract({ address: USDC, abi: erc20, functionName: "balanceOf", args: [a] });

test("x402-fetch 1.2.0 (v1) pays and the transfer is on chain", async () => {
  const account = privateKeyToAccount(wallets[0].key);
  const before = await balance(payTo), payerBefore = await balance(account.address);
  const res = await wrapV1(fetch, account)(`${base}/api/v1/x402?certification=cissp&limit=10`);
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json();
  assert.equal(body.questions.length, 10);
  assert.equal(body.meta.price_paid_usdc, "0.007");
  assert.equal(body.meta.payment_verified, true);
  assert.equal(body.questions[0].answer, undefined, "quiz mode must not carry answers");
  const pr = decodeXPaymentResponse(res.headers.get("x-payment-response"));
  assert.equal(pr.success, true);
  assert.equal(pr.network, "base-sepolia");
  const receipt = await chain.getTransactionReceipt({ hash: pr.transaction });
  assert.equal(receipt.status, "success");
  assert.equal(await balance(payTo) - before, 7000n);
  assert.equal(payerBefore - await balance(account.address), 7000n);
});

test("@x402/fetch 2.27.0 (v2) pays and the transfer is on chain", async () => {
  const account = privateKeyToAccount(wallets[1].key);
  const client = new x402Client().register("eip155:*", new ExactEvmScheme(account));
  const before = await balance(payTo);
  const res = await wrapV2(fetch, client)(`${base}/api/v1/x402?certification=pmp&limit=25&include_answer=true`);
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json();
  assert.equal(body.questions.length, 25);
  assert.equal(body.meta.price_paid_usdc, "0.02");
  assert.match(body.questions[0].answer, /^[A-D]$/);
  assert.ok(body.questions[0].explanation.length > 50);
  const pr = decodePaymentResponseHeader(res.headers.get("payment-response"));
  assert.equal(pr.success, true);
  assert.equal(pr.network, `eip155:${CHAIN_ID}`);
  assert.equal((await chain.getTransactionReceipt({ hash: pr.transaction })).status, "success");
  assert.equal(await balance(payTo) - before, 20000n);
});

test("v1 client refuses an amount above its cap and nothing moves", async () => {
  const account = privateKeyToAccount(wallets[2].key);
  const before = await balance(account.address);
  await assert.rejects(wrapV1(fetch, account, 5000n)(`${base}/api/v1/x402?certification=cissp&limit=10`), /exceeds maximum/i);
  assert.equal(await balance(account.address), before);
});

async function requirements(url) {
  const res = await fetch(url);
  assert.equal(res.status, 402);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.ok(res.headers.get("payment-required"), "v2 PAYMENT-REQUIRED header");
  const body = await res.json();
  assert.equal(body.x402Version, 1);
  assert.equal(body.accepts[0].network, "base-sepolia");
  assert.equal(body.accepts[0].extra.name, "USDC");
  assert.ok(body.accepts[0].resource.startsWith(base + "/"), `resource ${body.accepts[0].resource} does not follow the listen address ${base}`);
  assert.ok(!("outputSchema" in body.accepts[0]));
  return body.accepts[0];
}

test("an authorization that expires too soon is refused with the official reason", async () => {
  const account = privateKeyToAccount(wallets[2].key);
  const url = `${base}/api/v1/x402?certification=cissp&limit=10`;
  const req = await requirements(url);
  const header = await createPaymentHeader(account, 1, { ...req, maxTimeoutSeconds: 3 });
  const before = await balance(account.address);
  const res = await fetch(url, { headers: { "X-PAYMENT": header } });
  assert.equal(res.status, 402);
  const body = await res.json();
  assert.equal(body.error, "invalid_exact_evm_payload_authorization_valid_before");
  assert.equal(await balance(account.address), before);
});

test("a replayed payment is refused; of 50 concurrent copies exactly one is served", async () => {
  const account = privateKeyToAccount(wallets[3]?.key ?? wallets[2].key);
  const url = `${base}/api/v1/x402?certification=vendorfour-security-plus&limit=10`;
  const req = await requirements(url);
  const header = await createPaymentHeader(account, 1, req);
  const before = await balance(payTo);
  const results = await Promise.all(Array.from({ length: 50 }, () => fetch(url, { headers: { "X-PAYMENT": header } }).then(async (r) => ({ status: r.status, body: await r.text() }))));
  const ok = results.filter((r) => r.status === 200);
  assert.equal(ok.length, 1, JSON.stringify(results.map((r) => r.status)));
  for (const r of results.filter((r) => r.status !== 200)) {
    assert.equal(r.status, 402);
    assert.equal(JSON.parse(r.body).error, "invalid_exact_evm_nonce_already_used");
  }
  assert.equal(await balance(payTo) - before, 7000n, "exactly one transfer");
  const again = await fetch(url, { headers: { "X-PAYMENT": header } });
  assert.equal(again.status, 402);
  assert.equal((await again.json()).error, "invalid_exact_evm_nonce_already_used");
});

test("a wallet's own transaction through the development JSON-RPC is mined at once", async () => {
  const account = privateKeyToAccount(wallets[2].key);
  const wallet = createWalletClient({ account, chain: devChain, transport: http() });
  const hash = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000b1", value: 1n });
  const receipt = await chain.waitForTransactionReceipt({ hash, timeout: 10_000 });
  assert.equal(receipt.status, "success");
});
