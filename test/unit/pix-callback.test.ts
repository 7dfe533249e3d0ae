// The PSP's callback (src/providers/api-pix/callback.ts) asks the PSP for its items a few at a time
// and within a deadline: a PSP that answers each GET slowly holds no request for long.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pixCallback } from '../../src/providers/api-pix/callback.ts';
import type { PixPsp } from '../../src/providers/ports.ts';

const silent = { warn() {}, error() {}, info() {} };
const e2e = (n: number) => `E${String(n).padStart(31, '0')}`;

test('past its deadline a callback asks nothing more: a 502 with what was confirmed, the rest left to the call again', async () => {
  const asked: string[] = [];
  // A PSP that takes 1 s per Pix and knows none of them (a Pix it does not know is no fact).
  const connector = {
    account: { id: 'api-pix:test', connector: 'api-pix' },
    sync: async (id: string) => {
      asked.push(id);
      await new Promise((r) => setTimeout(r, 1_000));
      return [];
    },
  } as unknown as PixPsp;
  const endpoint = pixCallback(connector, 'secret', null, { parallel: 2, withinMs: 1_500 });
  const ids = Array.from({ length: 10 }, (_, n) => e2e(n));
  const warned: [object, string][] = [];
  const log = { ...silent, warn: (o: object, msg: string) => warned.push([o, msg]) } as never;
  const read = await endpoint.read({ params: {}, headers: {}, body: { pix: ids.map((endToEndId) => ({ endToEndId })) }, log });
  // Two at 0 s, two more at 1 s; at 2 s the deadline has passed (timers may fire up to 0.5 s late). Before: all 10, one by one.
  assert.deepEqual(asked, ids.slice(0, 4));
  assert.equal(read.ok, false);
  assert.ok(!read.ok && 'confirmed' in read);
  assert.deepEqual(!read.ok && 'confirmed' in read ? read.confirmed : null, []);
  assert.equal(!read.ok && read.refusal.code, 'PROVIDER_ERROR');
  assert.deepEqual(warned, [
    [
      { phase: 'received', asked: 4, items: 10, withinMs: 1_500 },
      'PIX callback: out of time before every Pix was confirmed; the PSP is told to call again',
    ],
  ]);

  asked.length = 0;
  const within = pixCallback(connector, 'secret', null, { parallel: 10, withinMs: 5_000 });
  const all = await within.read({ params: {}, headers: {}, body: { pix: ids.map((endToEndId) => ({ endToEndId })) }, log });
  assert.deepEqual(all, { ok: true, value: [] });
  assert.deepEqual([...asked].sort(), ids, 'each asked once');
  assert.equal(warned.length, 1, 'nothing said when every Pix was confirmed in time');
});
