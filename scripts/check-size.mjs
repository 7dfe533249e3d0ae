// Files in src/ stay short enough to read at once (functions are bounded by Biome's
// noExcessiveLinesPerFunction, 70 lines).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const max_file_lines = 300;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const long = files('src')
  .map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
  .filter((f) => f.lines > max_file_lines);
for (const f of long) console.error(`${f.path}: ${f.lines} lines (at most ${max_file_lines})`);
process.exit(long.length > 0 ? 1 : 0);
