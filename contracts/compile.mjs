// compile.mjs compiles TestUSDC.sol with the pinned solc-js (package.json)
// and writes ../paywall/x402/testtoken.json, which the Go package embeds.
//
// Usage: npm install && node compile.mjs
//
// The output is deterministic: the same source and compiler give the same
// bytes. sourceSha256 lets a Go test notice an artifact that is older than
// the source.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const here = dirname(fileURLToPath(import.meta.url));
const sourceName = "TestUSDC.sol";
const contractName = "TestUSDC";
const evmVersion = "cancun";
const out = join(here, "..", "paywall", "x402", "testtoken.json");

const source = readFileSync(join(here, sourceName), "utf8");
const input = {
  language: "Solidity",
  sources: { [sourceName]: { content: source } },
  settings: {
    evmVersion,
    optimizer: { enabled: true, runs: 200 },
    metadata: { bytecodeHash: "none", appendCBOR: false },
    outputSelection: {
      [sourceName]: {
        [contractName]: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"],
      },
    },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input)));
const problems = output.errors ?? [];
for (const p of problems) {
  console.error(p.formattedMessage ?? p.message);
}
if (problems.some((p) => p.severity === "error")) {
  process.exit(1);
}

const contract = output.contracts[sourceName][contractName];
const artifact = {
  contractName,
  sourceName,
  sourceSha256: createHash("sha256").update(source).digest("hex"),
  compiler: `solc ${solc.version()}`,
  evmVersion,
  abi: contract.abi,
  bytecode: "0x" + contract.evm.bytecode.object,
  deployedBytecode: "0x" + contract.evm.deployedBytecode.object,
};
writeFileSync(out, JSON.stringify(artifact, null, 2) + "\n");
console.log(`wrote ${out}: ${(artifact.deployedBytecode.length - 2) / 2} bytes of runtime code`);
