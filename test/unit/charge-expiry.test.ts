import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chargeExpiry } from '../../src/sales/create-sale.ts';

describe("a dynamic PIX sale's expiry", () => {
  const now = new Date('2026-11-25T12:00:00.000Z');
  const at = (ms: number) => new Date(now.getTime() + ms);

  test('a charge made now ends its seconds from now; a static one has nothing to go by', () => {
    assert.equal(chargeExpiry(now, 3600, now).toISOString(), at(3_600_000).toISOString());
    assert.equal(chargeExpiry(now, 3600, null).toISOString(), at(3_600_000).toISOString());
  });

  test("a charge made by an earlier attempt ends when the PSP's does", () => {
    assert.equal(chargeExpiry(now, 60, at(-20_000)).toISOString(), at(40_000).toISOString());
  });

  test("a PSP clock that is off moves it forward by at most a reference's 30 s, and never later", () => {
    assert.equal(chargeExpiry(now, 3600, at(-10 * 60_000)).toISOString(), at(3_570_000).toISOString());
    assert.equal(chargeExpiry(now, 3600, at(10 * 60_000)).toISOString(), at(3_600_000).toISOString());
  });
});
