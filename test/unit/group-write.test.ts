import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { groupWriter, groupWriterPer } from '../../src/db/group-write.ts';

interface Item {
  value: number;
  slot?: string;
}

/** A writer whose statements the test ends by hand, recording each statement's items. */
function harness(options: { inFlight: number; maxItems: number; maxWaitMs?: number; fail?: (items: Item[]) => unknown }) {
  const statements: Item[][] = [];
  const pending: (() => void)[] = [];
  const write = groupWriter<Item, number>({
    flush: (items) =>
      new Promise((resolve, reject) => {
        statements.push(items);
        pending.push(() => {
          const error = options.fail?.(items);
          if (error) reject(error);
          else resolve(items.map((i) => i.value * 10));
        });
      }),
    slot: (i) => i.slot ?? null,
    inFlight: options.inFlight,
    maxItems: options.maxItems,
    maxWaitMs: options.maxWaitMs ?? 60_000,
    tooLong: () => new Error('waited too long'),
  });
  /** Ends the statements out now, oldest first, and lets their results settle. */
  const finish = async () => {
    for (let rounds = 0; pending.length > 0 && rounds < 100; rounds++) {
      pending.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { write, statements, finish };
}

const sqlError = (code: string) => Object.assign(new Error(`server said ${code}`), { code });

describe('group write', () => {
  test('a write goes at once while statements are free; what arrives meanwhile goes together, in order, each with its own result', async () => {
    const h = harness({ inFlight: 1, maxItems: 10 });
    const first = h.write({ value: 1 });
    assert.deepEqual(h.statements, [[{ value: 1 }]], 'the first write did not wait for company');
    const rest = [2, 3, 4].map((value) => h.write({ value }));
    assert.equal(h.statements.length, 1, 'nothing more goes while the one statement allowed is out');
    await h.finish();
    assert.deepEqual(await Promise.all([first, ...rest]), [10, 20, 30, 40]);
    assert.deepEqual(h.statements, [[{ value: 1 }], [{ value: 2 }, { value: 3 }, { value: 4 }]]);
  });

  test('no statement holds more than maxItems, nor two writes of one slot (the second waits for the next)', async () => {
    const h = harness({ inFlight: 1, maxItems: 3 });
    const all = [h.write({ value: 0 })];
    for (const [value, slot] of [
      [1, 'a'],
      [2, 'a'],
      [3, 'b'],
      [4, undefined],
      [5, undefined],
    ] as const)
      all.push(h.write({ value, ...(slot ? { slot } : {}) }));
    await h.finish();
    assert.deepEqual(await Promise.all(all), [0, 10, 20, 30, 40, 50]);
    assert.deepEqual(
      h.statements.map((s) => s.map((i) => i.value)),
      [[0], [1, 3, 4], [2, 5]],
    );
  });

  test('a statement the server refused is tried again one write at a time: only the bad write fails', async () => {
    const bad = sqlError('23503');
    const h = harness({ inFlight: 1, maxItems: 10, fail: (items) => (items.some((i) => i.value === 3) ? bad : null) });
    const first = h.write({ value: 1 });
    const group = [2, 3, 4].map((value) => h.write({ value }));
    const settled = Promise.allSettled([first, ...group]);
    await h.finish();
    const results = await settled;
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      [10, 20, 'server said 23503', 40],
    );
    assert.deepEqual(
      h.statements.map((s) => s.map((i) => i.value)),
      [[1], [2, 3, 4], [2], [3], [4]],
    );
  });

  test('any other failure (a lost connection: the statement may have committed) is every write of the statement, never retried', async () => {
    const lost = new Error('database connection lost');
    const h = harness({ inFlight: 1, maxItems: 10, fail: (items) => (items.length > 1 ? lost : null) });
    const first = h.write({ value: 1 });
    const group = [2, 3].map((value) => h.write({ value }));
    const settled = Promise.allSettled(group);
    await h.finish();
    assert.equal(await first, 10);
    for (const r of await settled) assert.equal(r.status === 'rejected' && r.reason, lost);
    assert.equal(h.statements.length, 2, 'no write of the failed statement was sent again');
    // The writer carries on after a failure.
    const after = h.write({ value: 7 });
    await h.finish();
    assert.equal(await after, 70);
  });

  test('up to inFlight statements are out at once', async () => {
    const h = harness({ inFlight: 2, maxItems: 10 });
    const all = [1, 2, 3, 4].map((value) => h.write({ value }));
    assert.deepEqual(
      h.statements.map((s) => s.map((i) => i.value)),
      [[1], [2]],
    );
    await h.finish();
    assert.deepEqual(await Promise.all(all), [10, 20, 30, 40]);
    assert.deepEqual(
      h.statements.map((s) => s.map((i) => i.value)),
      [[1], [2], [3, 4]],
    );
  });

  test('a write that waits maxWaitMs for its turn fails, and is never sent; one sent in time is unaffected', async () => {
    const h = harness({ inFlight: 1, maxItems: 10, maxWaitMs: 50 });
    const first = h.write({ value: 1 }); // out, and its statement hangs
    const waiting = h.write({ value: 2 });
    const started = Date.now();
    await assert.rejects(waiting, /waited too long/);
    assert.ok(Date.now() - started >= 40, 'failed at its deadline, not before');
    await h.finish();
    assert.equal(await first, 10);
    assert.deepEqual(
      h.statements.map((s) => s.map((i) => i.value)),
      [[1]],
      'the write that timed out was never sent',
    );
    const later = h.write({ value: 3 });
    await h.finish();
    assert.equal(await later, 30);
  });

  test('per database handle: each handle has a queue of its own, so writes of two handles never share a statement', async () => {
    const statements: { db: string; items: number[] }[] = [];
    const write = groupWriterPer((db: { name: string }) => ({
      flush: async (items: number[]) => {
        statements.push({ db: db.name, items });
        await new Promise((r) => setImmediate(r));
        return items.map((i) => i + 1);
      },
      slot: () => null,
      inFlight: 1,
      maxItems: 10,
      maxWaitMs: 60_000,
      tooLong: () => new Error('waited too long'),
    }));
    const [a, b] = [{ name: 'a' }, { name: 'b' }];
    const results = await Promise.all([write(a, 1), write(b, 2), write(a, 3), write(b, 4), write(a, 5)]);
    assert.deepEqual(results, [2, 3, 4, 5, 6]);
    assert.deepEqual(statements, [
      { db: 'a', items: [1] },
      { db: 'b', items: [2] },
      { db: 'a', items: [3, 5] },
      { db: 'b', items: [4] },
    ]);
  });
});
