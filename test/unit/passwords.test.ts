// The panel's password pool: scrypt hashes that verify (on low-priority threads), at most
// `concurrency` at once, a bounded line that waits a bounded time, and HashingBusy beyond either bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HashingBusy, PasswordHasher } from '../../src/panel/passwords.ts';

test('a hash verifies its password and no other', async () => {
  const hasher = new PasswordHasher();
  const stored = await hasher.hash('senha-de-teste-longa');
  assert.match(stored, /^scrypt\$32768\$8\$1\$/);
  assert.equal(await hasher.matches('senha-de-teste-longa', stored), true);
  assert.equal(await hasher.matches('senha-de-teste-longx', stored), false);
  assert.equal(await hasher.matches('senha-de-teste-longa', 'bcrypt$whatever'), false);
});

test('at most `concurrency` hashes run at once; those beyond the line wait out the deadline and are refused', async () => {
  const hasher = new PasswordHasher({ concurrency: 2, maxWaiting: 3, maxWaitMs: 5_000 });
  const outcomes = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => hasher.hash(`senha-numero-${i}`)));
  assert.equal(hasher.peak, 2);
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 5, '2 running + 3 waiting');
  for (const o of outcomes.filter((o) => o.status === 'rejected')) assert.ok((o as PromiseRejectedResult).reason instanceof HashingBusy);
});

test('a hash that waits longer than maxWaitMs is refused; the slot then serves the next', async () => {
  const hasher = new PasswordHasher({ concurrency: 1, maxWaiting: 4, maxWaitMs: 50 });
  let release!: () => void;
  const held = hasher.exclusive(() => new Promise<void>((resolve) => (release = resolve)));
  await assert.rejects(hasher.hash('senha-que-espera'), HashingBusy);
  release();
  await held;
  assert.match(await hasher.hash('senha-depois'), /^scrypt\$/);
  assert.equal(hasher.peak, 1);
});
