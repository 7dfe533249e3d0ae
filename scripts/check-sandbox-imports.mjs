// The embedded PSP (packages/sandbox-psp) is loaded only when a rail is the sandbox's: no file
// outside it may import it statically (a type import, erased at compile time, may name its types).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['src', 'test', 'bench', 'scripts', 'sdk/src', 'sdk/test'];
const files = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : files(path);
    return /\.(ts|mjs|js)$/.test(name) ? [path] : [];
  });
const statically = /^\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+['"](?:@pagar\/sandbox-psp|[./]*packages\/sandbox-psp)[^'"]*['"]/m;
const offenders = roots.flatMap((root) => files(root)).filter((file) => statically.test(readFileSync(file, 'utf8')));
if (offenders.length > 0) {
  console.error(`the sandbox PSP is imported statically (use a dynamic import, or import type) in:\n  ${offenders.join('\n  ')}`);
  process.exit(1);
}
