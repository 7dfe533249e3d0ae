import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRateLimits, TokenBuckets } from '../../src/http/rate-limit.ts';

function manualClock(startMs = 1_000) {
  let now = startMs;
  return {
    clock: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

test('a fresh key has the whole capacity, then is refused with the wait to its next token', () => {
  const t = manualClock();
  const buckets = new TokenBuckets({ capacity: 3, refillPerSecond: 0.5, clock: t.clock });
  assert.deepEqual([buckets.take('a'), buckets.take('a'), buckets.take('a')], [0, 0, 0]);
  assert.equal(buckets.take('a'), 2, 'one token every 2 s');
  t.advance(1500);
  assert.equal(buckets.take('a'), 1, '0.75 token: a quarter of 2 s left, rounded up to a whole second');
  t.advance(500);
  assert.equal(buckets.take('a'), 0);
  assert.equal(buckets.take('a'), 2);
});

test('refill never exceeds the capacity', () => {
  const t = manualClock();
  const buckets = new TokenBuckets({ capacity: 2, refillPerSecond: 10, clock: t.clock });
  buckets.take('a');
  t.advance(3_600_000);
  assert.deepEqual([buckets.take('a'), buckets.take('a')], [0, 0]);
  assert.ok(buckets.take('a') > 0);
});

test('Retry-After is at least one second even when the next token is milliseconds away', () => {
  const t = manualClock();
  const buckets = new TokenBuckets({ capacity: 1, refillPerSecond: 1000, clock: t.clock });
  buckets.take('a');
  assert.equal(buckets.take('a'), 1);
});

test('waitSeconds looks without consuming', () => {
  const t = manualClock();
  const buckets = new TokenBuckets({ capacity: 1, refillPerSecond: 1, clock: t.clock });
  assert.equal(buckets.waitSeconds('a'), 0);
  assert.equal(buckets.size, 0, 'looking at an unknown key stores nothing');
  buckets.take('a');
  assert.equal(buckets.waitSeconds('a'), 1);
  assert.equal(buckets.waitSeconds('a'), 1);
  t.advance(1000);
  assert.equal(buckets.waitSeconds('a'), 0);
});

test('keys are independent', () => {
  const t = manualClock();
  const buckets = new TokenBuckets({ capacity: 1, refillPerSecond: 1, clock: t.clock });
  assert.equal(buckets.take('a'), 0);
  assert.ok(buckets.take('a') > 0);
  assert.equal(buckets.take('b'), 0);
});

test('the map is bounded and forgets the least recently used key first', () => {
  const t = manualClock();
  const buckets = new TokenBuckets({ capacity: 1, refillPerSecond: 0.001, maxKeys: 3, clock: t.clock });
  for (const key of ['a', 'b', 'c']) buckets.take(key);
  buckets.take('a'); // refused, but now the most recent
  buckets.take('d'); // evicts b, the oldest
  assert.equal(buckets.size, 3);
  assert.equal(buckets.waitSeconds('b'), 0, 'b was forgotten: a full bucket again');
  assert.ok(buckets.waitSeconds('a') > 0, 'a was kept');
  assert.ok(buckets.waitSeconds('c') > 0, 'c was kept');
  for (let i = 0; i < 1000; i++) buckets.take(`k${i}`);
  assert.equal(buckets.size, 3);
});

test('createRateLimits: N failures a minute per address, N a second per seller with a burst of 2N', () => {
  const t = manualClock();
  const limits = createRateLimits({ authFailuresPerMinute: 20, rateLimitPerSecond: 100 }, t.clock);
  for (let i = 0; i < 20; i++) assert.equal(limits.authFailures.take('10.0.0.1'), 0);
  assert.equal(limits.authFailures.waitSeconds('10.0.0.1'), 3, 'one failure back every 3 s');
  t.advance(3000);
  assert.equal(limits.authFailures.waitSeconds('10.0.0.1'), 0);
  for (let i = 0; i < 200; i++) assert.equal(limits.sellers.take('pk_a'), 0);
  assert.equal(limits.sellers.take('pk_a'), 1);
  t.advance(10);
  assert.equal(limits.sellers.take('pk_a'), 0, '100 a second: one token every 10 ms');
});
