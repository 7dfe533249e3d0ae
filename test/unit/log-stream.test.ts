import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs, { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { logStream } from '../../src/http/log-stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-log-stream-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = performance.now() + ms; performance.now() < end; await new Promise((r) => setTimeout(r, 20))) if (check()) return true;
  return check();
}

describe('the request log stream', () => {
  test('gathers lines logged a few milliseconds apart into few writes, and writes them within a second', async () => {
    const file = join(dir, 'spaced.log');
    const stream = logStream(file) as ReturnType<typeof pino.destination>;
    await new Promise((r) => stream.once('ready', r));
    const log = pino(stream);
    const original = fs.write;
    let writes = 0;
    const started = performance.now();
    let spent = 0;
    // sonic-boom writes through the fs module's write: counted for this file's descriptor only.
    (fs as { write: unknown }).write = (fd: number, ...rest: unknown[]) => {
      if (fd === (stream as unknown as { fd: number }).fd) writes++;
      return (original as (...a: unknown[]) => void)(fd, ...rest);
    };
    try {
      // As requests do: one line per event-loop turn, each after the previous line's write could end.
      for (let i = 0; i < 20; i++) {
        log.info({ route: '/api/public/balance', status: 200, i }, 'request');
        await new Promise((r) => setTimeout(r, 5));
      }
      spent = performance.now() - started;
      assert.ok(await until(() => lines(file).length === 20, 2000), `all 20 lines written within 2 s, found ${lines(file).length}`);
    } finally {
      (fs as { write: unknown }).write = original;
    }
    // One line a write would be 20; a flush every quarter second makes one per 250 ms the loop took
    // (about 100 ms on an idle machine), and the last.
    const flushes = Math.ceil(spent / 250) + 1;
    assert.ok(writes >= 1 && writes <= Math.min(flushes, 10), `20 spaced lines over ${spent.toFixed(0)} ms took ${writes} writes`);
    assert.deepEqual(
      lines(file).map((l) => JSON.parse(l).i),
      Array.from({ length: 20 }, (_, i) => i),
    );
  });

  test('writes the lines it gathered when the process exits at once', () => {
    const file = join(dir, 'exit.log');
    // 20 lines are under the 4 KiB gathered before a write: none has been written when the process exits.
    const module = new URL('../../src/http/log-stream.ts', import.meta.url).pathname;
    const code = `import pino from 'pino'; import { logStream } from ${JSON.stringify(module)};
      const stream = logStream(${JSON.stringify(file)});
      stream.once('ready', () => { const log = pino(stream); for (let i = 0; i < 20; i++) log.info({ i }, 'request'); process.exit(0); });`;
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: process.cwd(), timeout: 20_000 });
    assert.deepEqual(
      lines(file).map((l) => JSON.parse(l).i),
      Array.from({ length: 20 }, (_, i) => i),
    );
  });
});
