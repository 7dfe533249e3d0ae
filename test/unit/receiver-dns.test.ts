import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, it } from 'node:test';
import { boundedLookup } from '../../src/notifications/receiver-dns.ts';

type Callback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

/** A resolver whose answers the test gives by hand: each started lookup waits in `pending`. */
function handResolver() {
  const pending: { hostname: string; answer: Callback }[] = [];
  const lookup = (hostname: string, options: { all?: boolean }, answer: Callback) => {
    assert.equal(options.all, true, 'every address is asked for');
    pending.push({ hostname, answer });
  };
  return { lookup, pending };
}

const settled = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value, at: performance.now() }),
    (error: NodeJS.ErrnoException) => ({ ok: false as const, error, at: performance.now() }),
  );

describe('receivers\u2019 name lookups, bounded', () => {
  it('runs at most `slots` lookups, and a caller whose nameserver never answers gives up at its deadline', async () => {
    const { lookup, pending } = handResolver();
    const resolve = boundedLookup(lookup, { slots: 2, deadlineMs: 150 });
    const started = performance.now();
    const hung = ['a.dead.example', 'b.dead.example', 'c.dead.example', 'd.dead.example'].map((h) => settled(resolve(h)));
    assert.deepEqual(
      pending.map((p) => p.hostname),
      ['a.dead.example', 'b.dead.example'],
      'two started, two waiting for a slot',
    );
    for (const r of await Promise.all(hung)) {
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.code, 'ETIMEOUT');
      assert.ok(r.at - started >= 140 && r.at - started < 2_000, `gave up after ${Math.round(r.at - started)} ms`);
    }
    assert.equal(pending.length, 2, 'a caller that gave up while waiting for its turn never starts a lookup');

    // The two abandoned lookups still hold the thread pool: a new name waits, and is answered once one returns.
    const next = resolve('hooks.example.com');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(pending.length, 2, 'no third lookup while two still run');
    pending[0]!.answer(Object.assign(new Error('no answer'), { code: 'EAI_AGAIN' }), []);
    assert.equal(pending.length, 3);
    assert.equal(pending[2]!.hostname, 'hooks.example.com');
    pending[2]!.answer(null, [{ address: '203.0.113.7', family: 4 }]);
    assert.deepEqual(await next, [{ address: '203.0.113.7', family: 4 }]);
  });

  it('callers of one name share its lookup, so one dead name holds one slot and other names still get the other', async () => {
    const { lookup, pending } = handResolver();
    const resolve = boundedLookup(lookup, { slots: 2, deadlineMs: 150 });
    const dead = Array.from({ length: 5 }, () => settled(resolve('hooks.dead.example')));
    const other = resolve('hooks.example.com');
    assert.deepEqual(
      pending.map((p) => p.hostname),
      ['hooks.dead.example', 'hooks.example.com'],
      'five callers, one lookup of the dead name',
    );
    pending[1]!.answer(null, [{ address: '203.0.113.9', family: 4 }]);
    assert.deepEqual(await other, [{ address: '203.0.113.9', family: 4 }]);
    for (const r of await Promise.all(dead)) assert.equal(!r.ok && r.error.code, 'ETIMEOUT');
    pending[0]!.answer(null, [{ address: '203.0.113.1', family: 4 }]);
    const again = resolve('hooks.dead.example');
    assert.equal(pending.length, 3, 'a new lookup once the shared one returned');
    pending[2]!.answer(null, [{ address: '203.0.113.2', family: 4 }]);
    assert.deepEqual(await again, [{ address: '203.0.113.2', family: 4 }]);
  });

  it('passes a resolver\u2019s error through, and frees the slot', async () => {
    const { lookup, pending } = handResolver();
    const resolve = boundedLookup(lookup, { slots: 1, deadlineMs: 1_000 });
    const missing = settled(resolve('nx.example'));
    const after = resolve('ok.example');
    pending[0]!.answer(Object.assign(new Error('getaddrinfo ENOTFOUND nx.example'), { code: 'ENOTFOUND' }), []);
    const r = await missing;
    assert.equal(!r.ok && r.error.code, 'ENOTFOUND');
    assert.equal(pending[1]!.hostname, 'ok.example');
    pending[1]!.answer(null, [{ address: '2001:db8::1', family: 6 }]);
    assert.deepEqual(await after, [{ address: '2001:db8::1', family: 6 }]);
  });
});
