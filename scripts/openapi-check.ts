// CI: the committed OpenAPI document (sdk/openapi.json) and the SDK's generated types
// (sdk/src/schema.ts) must be what the current code generates, and the document must pass Redocly's
// recommended rules (redocly.yaml) with no error. `npm run openapi` regenerates both files.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { documentText, openApiDocument } from './openapi.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-openapi-check-'));
const stale: string[] = [];
try {
  const docFile = join(dir, 'openapi.json');
  writeFileSync(docFile, documentText(await openApiDocument()));
  if (readFileSync(docFile, 'utf8') !== readFileSync('sdk/openapi.json', 'utf8')) stale.push('sdk/openapi.json');
  const typesFile = join(dir, 'schema.ts');
  execFileSync('npx', ['openapi-typescript', docFile, '-o', typesFile], { stdio: 'pipe' });
  if (readFileSync(typesFile, 'utf8') !== readFileSync('sdk/src/schema.ts', 'utf8')) stale.push('sdk/src/schema.ts');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (stale.length > 0) {
  console.error(`${stale.join(' and ')} differ from what the code generates: run \`npm run openapi\` and commit the result`);
  process.exit(1);
}
console.log('sdk/openapi.json and sdk/src/schema.ts match the code');
// Redocly's own exit status: 1 on any error (warnings are printed, not fatal).
execFileSync('npx', ['redocly', 'lint', 'sdk/openapi.json'], { stdio: 'inherit' });
