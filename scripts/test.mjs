// Node 20's test runner does not expand globs, so we list the test files ourselves, and run each in
// its own `node --test` process: one line per file as it ends, the failures in full, a closing
// summary (node's own TAP would be thousands of lines on a pipe). TEST_REPORTER=spec shows every
// test of every file instead.
//
// Files run in parallel processes (node's default is one at a time on a 2-core machine: cores − 1).
// TEST_CONCURRENCY overrides how many; the slowest files start first so none is left running alone
// at the end. PROPERTY_RUNS (sequences of the money property test) and PROPERTY_SEED pass through
// the environment to the tests.

import { spawn } from 'node:child_process';
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
  'reconciliation-property',
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

// A file that runs longer than this is stopped and failed: a hung test must not hold CI for hours.
const FILE_TIME_LIMIT_MS = Number(process.env.TEST_FILE_TIMEOUT_SECONDS || 1200) * 1000;
const SUMMARY = '#file-summary ';
const RUNNING = '#file-running ';
const NOTE = '#file-note ';
const verbose = process.env.TEST_REPORTER === 'spec';
const fileReporter = new URL('./test-reporter.mjs', import.meta.url).href;
// With spec, the file reporter still runs beside it: its summary line is what the counts come from.
const reporters = [...(verbose ? ['spec'] : []), fileReporter].flatMap((r) => [`--test-reporter=${r}`, '--test-reporter-destination=stdout']);

// Each file's process leads a process group of its own, so that stopping it stops what it started
// (node --test runs the file in a grandchild; a test may start gateways). Ctrl-C stops them all.
const running = new Set();
const stopAll = () => {
  for (const child of running) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
};
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    stopAll();
    process.exit(130);
  });

function countsOf(text) {
  const line = text.split('\n').find((l) => l.startsWith(SUMMARY));
  try {
    return line ? JSON.parse(line.slice(SUMMARY.length)) : null;
  } catch {
    return null;
  }
}

/** The test or suite that had begun last when a file was stopped: where it hung (the file's own path: none had begun). */
function runningOf(text) {
  const line = text.split('\n').findLast((l) => l.startsWith(RUNNING));
  if (!line) return ', before any test began';
  try {
    const path = JSON.parse(line.slice(RUNNING.length));
    return path.length === 1 && path[0].endsWith('.ts') ? ', before any test began' : `; the last test or suite begun: ${path.join(' › ')}`;
  } catch {
    return '';
  }
}

/** Runs one file in its own process; resolves with its counts, its report and how long it took. */
function runFile(file) {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', ...reporters, file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  running.add(child);
  let text = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8'); // a character split between two chunks stays whole
    stream.on('data', (chunk) => {
      text += chunk;
    });
  }
  const timer = setTimeout(() => {
    text += `\n  ✖ stopped after ${FILE_TIME_LIMIT_MS / 1000} s (TEST_FILE_TIMEOUT_SECONDS)${runningOf(text)}\n`;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }, FILE_TIME_LIMIT_MS);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      const counts = countsOf(text);
      const lines = text.split('\n');
      const notes = lines.filter((l) => l.startsWith(NOTE)).map((l) => `  ${l.slice(NOTE.length)}`);
      const report = lines
        .filter((l) => !l.startsWith(SUMMARY) && !l.startsWith(RUNNING) && !l.startsWith(NOTE))
        .join('\n')
        .trimEnd();
      const failed = code !== 0 || counts === null || counts.fail > 0;
      resolve({ file, counts, report, notes, failed, seconds: (Date.now() - started) / 1000 });
    });
  });
}

function lineOf({ file, counts, failed, seconds }) {
  const what = counts
    ? `${counts.pass} passed${counts.skipped ? `, ${counts.skipped} skipped` : ''}${counts.fail ? `, ${counts.fail} failed` : ''}`
    : 'no result';
  return `${failed ? 'FAIL' : 'ok  '} ${file}  ${what}  ${seconds.toFixed(1)} s`;
}

const started = Date.now();
const queue = [...files];
const results = [];
async function worker() {
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const result = await runFile(file);
    results.push(result);
    console.log(lineOf(result));
    for (const note of result.notes) console.log(note);
    if (result.report && (result.failed || verbose)) console.log(result.report);
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));

const total = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
for (const r of results) for (const key of Object.keys(total)) total[key] += r.counts?.[key] ?? 0;
const failedFiles = results.filter((r) => r.failed);
console.log(
  `\n${files.length} files, ${total.tests} tests: ${total.pass} passed, ${total.fail} failed, ${total.skipped} skipped` +
    `${total.todo ? `, ${total.todo} todo` : ''} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
for (const r of failedFiles) console.log(`FAIL ${r.file}`);
process.exit(failedFiles.length === 0 && files.length > 0 ? 0 : 1);
