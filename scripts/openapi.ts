// The OpenAPI document the running gateway serves at /openapi.json, written to a file (by default
// sdk/openapi.json, the SDK's input): `npm run openapi` writes it and regenerates the SDK's types;
// `npm run openapi:check` (CI) fails when either committed file differs from what the code makes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { closeContext, createContext, loadSettings } from '../src/runtime.ts';

/** The document, from an app on a throw-away embedded database (routes do not depend on the data). */
export async function openApiDocument(): Promise<unknown> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-openapi-'));
  const config = loadSettings({ DATABASE_URL: 'memory://', DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const ctx = await createContext(config);
  try {
    const app = await buildApp(ctx);
    await app.ready();
    const doc = app.swagger();
    await app.close();
    return doc;
  } finally {
    await closeContext(ctx);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const documentText = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[2] ?? 'sdk/openapi.json';
  writeFileSync(out, documentText(await openApiDocument()));
  console.log(`wrote ${out}`);
}
