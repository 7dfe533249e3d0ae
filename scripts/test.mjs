// Node 20's test runner does not expand globs, so we list the test files ourselves.
//
// Files run in parallel processes (node's default is one at a time on a 2-core machine: cores − 1).
// TEST_CONCURRENCY overrides how many; the slowest files start first so none is left running alone
// at the end. PROPERTY_RUNS (sequences of the money property test) and PROPERTY_SEED pass through
// the environment to the tests.

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// One more file than cores: measured on 2 cores, 3 at once is the fastest on PostgreSQL (37 s against
// 45 s for 2; the files wait on the server and on timers) and as fast as 2 on PGlite (66 s, CPU-bound);
// 4 is no faster on either.
const DEFAULT_CONCURRENCY = availableParallelism() + 1;
// The longest files (measured alone: 5 to 15 s on PGlite or on PostgreSQL), longest first, so that
// none starts last; every other file after them, in name order. process and pix-config start gateways
// as child processes; http-timeouts and database-outage
// (PostgreSQL only) mostly wait: started early, they overlap with the rest.
const SLOWEST_FIRST = [
  'process.test',
  'money-property',
  'pix-config',
  'http-timeouts',
  'database-outage',
  'notifications.test',
  'rate-limits',
  'transitions',
  'sales',
];
const rank = (file) => {
  const i = SLOWEST_FIRST.findIndex((name) => file.includes(name));
  return i === -1 ? SLOWEST_FIRST.length : i;
};

const concurrency = Number(process.env.TEST_CONCURRENCY || DEFAULT_CONCURRENCY);
if (!Number.isSafeInteger(concurrency) || concurrency < 1)
  throw new Error(`TEST_CONCURRENCY must be a positive integer, got ${process.env.TEST_CONCURRENCY}`);

const filter = process.argv.slice(2);
const files = [...find('test'), ...find('sdk/test')]
  .filter((f) => filter.length === 0 || filter.some((w) => f.includes(w)))
  .sort()
  .sort((a, b) => rank(a) - rank(b)); // stable: alphabetical within a rank
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
