import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyCashoutEvent,
  CASHOUT_EVENTS,
  CASHOUT_FINAL_STATUSES,
  CASHOUT_NOTIFYING_STATUSES,
  CASHOUT_STATUSES,
  CASHOUT_TRANSITIONS,
  type CashoutEvent,
  type CashoutStatus,
} from '../../src/domain/cashout-states.ts';

// Written out again from CONTRACT §6, independently of the module's data.
const LEGAL: [from: string, event: string, to: string][] = [
  ['PENDING', 'PROCESSING', 'PROCESSING'],
  ['PROCESSING', 'COMPLETED', 'COMPLETED'],
  ['PENDING', 'REJECTED', 'REJECTED'],
  ['PROCESSING', 'REJECTED', 'REJECTED'],
  ['PENDING', 'CANCELLED', 'CANCELLED'],
];
const TARGET: Record<string, string> = { PROCESSING: 'PROCESSING', COMPLETED: 'COMPLETED', REJECTED: 'REJECTED', CANCELLED: 'CANCELLED' };

describe('cashout vocabulary', () => {
  it("has the spec's five statuses and four events, one row per event", () => {
    assert.deepEqual([...CASHOUT_STATUSES].sort(), ['CANCELLED', 'COMPLETED', 'PENDING', 'PROCESSING', 'REJECTED']);
    assert.deepEqual([...CASHOUT_EVENTS].sort(), ['CANCELLED', 'COMPLETED', 'PROCESSING', 'REJECTED']);
    assert.deepEqual(CASHOUT_TRANSITIONS.map((r) => r.event).sort(), [...CASHOUT_EVENTS].sort());
  });

  it('final statuses have no way out; notifying statuses are all but PENDING', () => {
    assert.deepEqual([...CASHOUT_FINAL_STATUSES].sort(), ['CANCELLED', 'COMPLETED', 'REJECTED']);
    for (const s of CASHOUT_FINAL_STATUSES) assert.ok(!CASHOUT_TRANSITIONS.some((r) => r.from.includes(s)), s);
    assert.deepEqual([...CASHOUT_NOTIFYING_STATUSES].sort(), ['CANCELLED', 'COMPLETED', 'PROCESSING', 'REJECTED']);
  });
});

describe('applyCashoutEvent: every legal move', () => {
  for (const [from, event, to] of LEGAL) {
    it(`${from} --${event}--> ${to}`, () => {
      assert.deepEqual(applyCashoutEvent({ status: from as CashoutStatus, lastEvent: null }, event as CashoutEvent), { kind: 'moved', from, to });
    });
  }
});

describe('applyCashoutEvent: exhaustive', () => {
  it('every (status, event, lastEvent) answers as the independent table says', () => {
    let count = 0;
    for (const status of CASHOUT_STATUSES) {
      for (const event of CASHOUT_EVENTS) {
        for (const lastEvent of [null, ...CASHOUT_EVENTS]) {
          const r = applyCashoutEvent({ status, lastEvent }, event);
          const where = `${status} ${event} last=${lastEvent}`;
          const row = LEGAL.find(([f, e]) => f === status && e === event);
          if (event === lastEvent && status === TARGET[event]) assert.deepEqual(r, { kind: 'noop' }, where);
          else if (row) assert.deepEqual(r, { kind: 'moved', from: status, to: row[2] }, where);
          else assert.equal(r.kind, 'refused', where);
          count++;
        }
      }
    }
    assert.equal(count, 5 * 4 * 5);
  });

  it('refuses cancelling once the provider has it, and anything after the end', () => {
    assert.deepEqual(applyCashoutEvent({ status: 'PROCESSING', lastEvent: 'PROCESSING' }, 'CANCELLED'), {
      kind: 'refused',
      reason: 'event CANCELLED is not allowed from status PROCESSING',
    });
    assert.equal(applyCashoutEvent({ status: 'PENDING', lastEvent: null }, 'COMPLETED').kind, 'refused');
    assert.equal(applyCashoutEvent({ status: 'COMPLETED', lastEvent: 'COMPLETED' }, 'REJECTED').kind, 'refused');
    assert.equal(applyCashoutEvent({ status: 'REJECTED', lastEvent: 'REJECTED' }, 'PROCESSING').kind, 'refused');
  });

  it('a repeated provider callback is a noop', () => {
    assert.deepEqual(applyCashoutEvent({ status: 'PROCESSING', lastEvent: 'PROCESSING' }, 'PROCESSING'), { kind: 'noop' });
    assert.deepEqual(applyCashoutEvent({ status: 'COMPLETED', lastEvent: 'COMPLETED' }, 'COMPLETED'), { kind: 'noop' });
    assert.deepEqual(applyCashoutEvent({ status: 'CANCELLED', lastEvent: 'CANCELLED' }, 'CANCELLED'), { kind: 'noop' });
  });
});
