import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import type { Availability } from '../../src/db/availability.ts';
import { heartbeat_timeout_ms, PgListener } from '../../src/db/pg-listener.ts';
import { onPostgres, testDatabaseUrl } from '../helpers/databases.ts';

/** Keeps the process from reading any I/O for `ms`, as a burst of work on a loaded machine does. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* spin */
  }
}

describe('the listener heartbeat', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  test('a process too busy to read its socket for longer than the heartbeat bound does not read as an outage', async () => {
    let trips = 0;
    const availability = { trip: () => trips++, nudge: () => {} } as unknown as Availability;
    const listener = new PgListener(async () => {
      const client = new pg.Client({ connectionString: testDatabaseUrl });
      await client.connect();
      return client;
    }, availability);
    let lost = 0;
    const unsubscribe = await listener.subscribe('heartbeat_test', { onPayload: () => {}, onLost: () => lost++ });
    try {
      assert.ok(listener.listening);
      // After each busy spell the heartbeat is due: its timer runs first and sends its SELECT, then the
      // next spell starts before the answer is read, so the answer waits longer than the bound.
      for (let round = 0; round < 6; round++) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        busy(heartbeat_timeout_ms + 300);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // heartbeats of an idle process again
      assert.equal(trips, 0, 'the database was judged unreachable');
      assert.equal(lost, 0, 'the listening connection was given up');
      assert.ok(listener.listening);
    } finally {
      await unsubscribe();
      listener.close();
    }
  });
});
