// validate.mjs validates an OpenAPI document against the official OpenAPI
// 3.1 JSON schema with @seriousme/openapi-schema-validator.
//
//   node validate.mjs path/to/openapi.json
//
// Exit status: 0 when the file is a valid OpenAPI 3.1 document; 1 with the
// validator's errors on stderr when it is not; 2 on a usage or read error.
import { Validator } from "@seriousme/openapi-schema-validator";
import { argv, exit, stderr, stdout } from "node:process";

const file = argv[2];
if (!file || argv.length > 3) {
	stderr.write("usage: node validate.mjs FILE\n");
	exit(2);
}

const validator = new Validator();
let res;
try {
	res = await validator.validate(file);
} catch (err) {
	stderr.write(`${file}: cannot read or parse: ${err.message}\n`);
	exit(2);
}
if (!res.valid) {
	stderr.write(`${file}: not a valid OpenAPI document:\n`);
	stderr.write(`${JSON.stringify(res.errors, null, 2)}\n`);
	exit(1);
}
if (validator.version !== "3.1") {
	stderr.write(`${file}: valid OpenAPI ${validator.version}, but 3.1 is required\n`);
	exit(1);
}
stdout.write(`${file}: valid OpenAPI ${validator.version}\n`);
