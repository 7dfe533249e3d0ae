import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomBytes } from '../../src/domain/random.ts';

test('pooled random bytes: the asked length, never the same draw twice, across pool refills and beyond its size', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    // 32 KB: eight refills of the 4 KiB pool
    const draw = randomBytes(32);
    assert.equal(draw.length, 32);
    seen.add(draw.toString('hex'));
  }
  assert.equal(seen.size, 1000);
  const a = randomBytes(12);
  a.fill(0); // a caller owning its copy cannot disturb the next draw
  assert.notDeepEqual(randomBytes(12), Buffer.alloc(12));
  assert.equal(randomBytes(10_000).length, 10_000);
});
